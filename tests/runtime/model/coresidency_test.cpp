// The co-residency model (model/coresidency.hpp): its Hall bound against a max-flow written here, the
// placements against closed forms and an exhaustive search, and the sweep's shape.
#include <catch2/catch.hpp>

#include <trinity/model/coresidency.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace model_coresidency_test {

using namespace trinity;
using model::curation_operator;

namespace {
// Max flow (Edmonds-Karp) on a dense graph: the independent reference for what the devices can carry.
double max_flow(std::vector<std::vector<double>> cap, std::size_t s, std::size_t t) {
  double flow = 0;
  const std::size_t n = cap.size();
  for (;;) {
    std::vector<std::size_t> parent(n, n);
    parent[s] = s;
    std::queue<std::size_t> q;
    q.push(s);
    while (!q.empty() && parent[t] == n) {
      const auto u = q.front();
      q.pop();
      for (std::size_t v = 0; v < n; ++v)
        if (parent[v] == n && cap[u][v] > 1e-12) parent[v] = u, q.push(v);
    }
    if (parent[t] == n) return flow;
    double push = std::numeric_limits<double>::infinity();
    for (auto v = t; v != s; v = parent[v]) push = std::min(push, cap[parent[v]][v]);
    for (auto v = t; v != s; v = parent[v]) cap[parent[v]][v] -= push, cap[v][parent[v]] += push;
    flow += push;
  }
}

// The most samples/s the devices carry, by bisection on a max flow: source -> model j (w_j X) -> the devices
// holding it -> sink (each device's compute).
double flow_bound(const std::vector<double>& w, const model::device_models& holds, double eta) {
  const std::size_t k = w.size(), D = holds.size(), n = k + D + 2, s = n - 2, t = n - 1;
  const auto feasible = [&](double x) {
    std::vector<std::vector<double>> cap(n, std::vector<double>(n, 0));
    double want = 0;
    for (std::size_t j = 0; j < k; ++j) cap[s][j] = w[j] * x, want += w[j] * x;
    for (std::size_t d = 0; d < D; ++d) {
      for (std::size_t j = 0; j < k; ++j)
        if ((holds[d] >> j) & 1u) cap[j][k + d] = 1e18;
      cap[k + d][t] = std::popcount(holds[d]) > 1 ? eta : 1.0;
    }
    return max_flow(cap, s, t) >= want * (1 - 1e-9);
  };
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200; ++i) (feasible((lo + hi) / 2) ? lo : hi) = (lo + hi) / 2;
  return lo;
}

std::vector<curation_operator> pipeline() {
  return {{"decode", false, 0.2, {}, 1.0},
          {"split", false, 0.1, {}, 1.0},
          {"aesthetic", true, 0.05, bytes{4e9}, 1.0},
          {"ocr", true, 0.08, bytes{6e9}, 0.6},
          {"caption", true, 0.40, bytes{30e9}, 0.5}};
}
}  // namespace

TEST_CASE("the Hall bound is what a max flow over the placement carries", "[model][coresidency]") {
  const auto ops = pipeline();
  const model::curation_cluster c{64, 4, bytes{80e9}, 0.9};
  const std::vector<double> w = {0.05, 0.6 * 0.08, 0.5 * 0.40};
  for (const model::device_models& holds :
       {model::device_models{1, 2, 4, 4}, model::device_models{3, 4, 4, 4}, model::device_models{7, 7, 7, 7},
        model::device_models{5, 6, 4, 1}, model::device_models{7, 4, 4, 2}}) {
    const auto r = model::rates(ops, c, holds);
    CHECK(r.gpu_bound == Approx(flow_bound(w, holds, 0.9)).epsilon(1e-6));
  }
}

TEST_CASE("one model per device splits the devices in whole numbers, co-residency pools them", "[model][coresidency]") {
  // Two models of 1 and 3 device-seconds per sample on 3 devices, no CPU stage.
  const std::vector<curation_operator> ops = {{"a", true, 1.0, bytes{10e9}, 1}, {"b", true, 3.0, bytes{10e9}, 1}};
  model::curation_cluster c{1, 3, bytes{20e9}, 1.0};
  const auto alone = model::placement_for(ops, c, bytes{10e9});
  CHECK(alone == model::device_models{1, 2, 2});
  const auto r1 = model::rates(ops, c, alone);
  CHECK(r1.samples_per_second == Approx(2.0 / 3));  // b on two devices: 2 / 3
  CHECK(r1.device_utilization == Approx((2.0 / 3) * 4 / 3));
  const auto shared = model::placement_for(ops, c, bytes{20e9});
  const auto r2 = model::rates(ops, c, shared);
  CHECK(r2.samples_per_second == Approx(3.0 / 4));  // the three devices pooled: D / (1 + 3)
  CHECK(r2.device_utilization == Approx(1.0));
  // Interference: a device running two models keeps 80% of its compute; the placement shares only where it pays.
  c.sharing_efficiency = 0.8;
  const auto r3 = model::rates(ops, c, model::placement_for(ops, c, bytes{20e9}));
  CHECK(r3.samples_per_second >= r1.samples_per_second);
  CHECK(r3.samples_per_second <= 3.0 / 4);
}

TEST_CASE("the placement within a budget is as good as the best found by trying every one", "[model][coresidency]") {
  const auto ops = pipeline();
  const model::curation_cluster c{1000, 3, bytes{40e9}, 0.9};
  for (double budget : {30e9, 34e9, 36e9, 40e9}) {
    const auto mine = model::rates(ops, c, model::placement_for(ops, c, bytes{budget})).samples_per_second;
    double best = 0;
    const std::vector<double> mem = {4e9, 6e9, 30e9};
    for (std::uint32_t a = 1; a < 8; ++a)
      for (std::uint32_t b = 1; b < 8; ++b)
        for (std::uint32_t d = 1; d < 8; ++d) {
          const model::device_models h{a, b, d};
          bool fits = true;
          for (auto x : h) {
            double used = 0;
            for (int j = 0; j < 3; ++j) used += ((x >> j) & 1u) ? mem[static_cast<std::size_t>(j)] : 0;
            fits = fits && used <= budget;
          }
          if (!fits) continue;
          if ((a | b | d) != 7) continue;  // every model somewhere
          best = std::max(best, model::rates(ops, c, h).samples_per_second);
        }
    INFO("budget " << budget);
    CHECK(mine == Approx(best));
  }
}

TEST_CASE("throughput rises with the memory given to co-residency until the CPU stages or the pool bind",
          "[model][coresidency]") {
  const auto ops = pipeline();
  const model::curation_cluster c{8, 4, bytes{80e9}, 0.95};
  const auto points = model::sweep(ops, c, 10);
  REQUIRE(points.size() == 11);
  CHECK(points.front().budget.value() == Approx(30e9));
  for (std::size_t i = 1; i < points.size(); ++i)
    CHECK(points[i].rates.samples_per_second >= points[i - 1].rates.samples_per_second * (1 - 1e-12));
  CHECK(points.back().rates.samples_per_second > points.front().rates.samples_per_second * 1.2);
  const auto enough = model::enough_memory(points);
  CHECK(enough < points.back().budget);
  CHECK(enough > points.front().budget);
  // With the CPU stages short of workers, they bind and memory buys nothing.
  const model::curation_cluster few{1, 4, bytes{80e9}, 0.95};
  const auto cpu = model::sweep(ops, few, 4);
  CHECK(cpu.front().rates.samples_per_second == Approx(1 / 0.3));
  CHECK(cpu.front().rates.binding_models == 0);
  CHECK(model::enough_memory(cpu) == cpu.front().budget);
}

TEST_CASE("a model larger than a device, or a bad share, is refused naming the field", "[model][coresidency]") {
  auto ops = pipeline();
  ops[4].memory = bytes{100e9};
  CHECK_THROWS_WITH(model::sweep(ops, {8, 4, bytes{80e9}, 1}), Catch::Contains("operators[4].memory"));
  ops = pipeline();
  ops[3].share = 0;
  CHECK_THROWS_WITH(model::sweep(ops, {8, 4, bytes{80e9}, 1}), Catch::Contains("operators[3].share"));
}

}  // namespace model_coresidency_test
