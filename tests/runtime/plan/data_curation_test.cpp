// A data-curation pipeline planned (plan/data_curation.hpp): the baseline's whole-number split and the
// choice against a brute force over every placement, the CPU bound, too few devices, and the workload read
// from JSON strictly.
#include <catch2/catch.hpp>

#include <trinity/workloads/registry.hpp>
#include <trinity/plan/data_curation.hpp>

#include <bit>
#include <fstream>
#include <map>
#include <sstream>

namespace plan_data_curation_test {

using namespace trinity;

namespace {

struct best_placement {
  double rate = 0;
  double memory = 0;  // the least most-bytes-per-device among the placements reaching `rate`
};

// Every multiset of the fitting model sets over the devices, priced by Hall's bound (itself checked against a
// max flow in model/coresidency_test.cpp): the best rate, and the least memory per device that reaches it.
best_placement brute_force(const std::vector<double>& w, const std::vector<double>& mem, double capacity,
                           std::size_t devices, double sharing, double cpu_bound) {
  std::vector<std::uint32_t> sets;
  for (std::uint32_t s = 1; s < (1u << w.size()); ++s) {
    double m = 0;
    for (std::size_t j = 0; j < w.size(); ++j)
      if ((s >> j) & 1u) m += mem[j];
    if (m <= capacity) sets.push_back(s);
  }
  best_placement best;
  std::vector<std::size_t> pick(devices, 0);
  model::device_models holds(devices);
  for (;;) {
    double most = 0;
    for (std::size_t d = 0; d < devices; ++d) {
      holds[d] = sets[pick[d]];
      double m = 0;
      for (std::size_t j = 0; j < w.size(); ++j)
        if ((holds[d] >> j) & 1u) m += mem[j];
      most = std::max(most, m);
    }
    const double x = std::min(cpu_bound, model::detail::gpu_bound(w, holds, sharing).bound);
    if (x > best.rate * (1 + 1e-9))
      best = {x, most};
    else if (x >= best.rate * (1 - 1e-9))
      best.memory = std::min(best.memory, most);
    std::size_t d = devices;
    while (d > 0 && pick[d - 1] + 1 == sets.size()) --d;
    if (d == 0) break;
    ++pick[d - 1];
    for (std::size_t e = d; e < devices; ++e) pick[e] = pick[d - 1];
  }
  return best;
}

}  // namespace

TEST_CASE("the T2V preset: one model per device splits whole devices, co-residency reaches the best placement",
          "[plan][curation]") {
  const auto s = *plan::presets::find("dgx-h100");
  const auto w = plan::presets::t2v_curation();
  const auto r = plan::plan_data_curation(s, w);
  // Device-seconds per sample from FLOPs: H100 989 TFLOP/s at the model's efficiency, times the share reaching it.
  const double peak = 989e12;
  const std::vector<double> work{1.0 * 3 * 81.1e9 / (peak * 0.4), 0.6 * 1e12 / (peak * 0.4), 0.42 * 4e11 / (peak * 0.4),
                                 0.336 * 6.5e13 / (peak * 0.15)};
  const std::vector<double> mem{2e9, 3e9, 2e9, 32e9};

  // The baseline: 8 devices, one model each; the best whole-number split, found here by trying every one.
  const auto& b = r.candidates[r.baseline];
  REQUIRE(b.plan.one_per_device);
  double best_split = 0;
  for (std::size_t a = 1; a <= 5; ++a)
    for (std::size_t f = 1; a + f <= 6; ++f)
      for (std::size_t o = 1; a + f + o <= 7; ++o) {
        const std::size_t c = 8 - a - f - o;
        best_split = std::max(best_split, std::min({a / work[0], f / work[1], o / work[2], c / work[3]}));
      }
  CHECK(b.cost.rates.samples_per_second == Approx(best_split));
  CHECK(b.cost.rates.samples_per_second == Approx(5 / work[3]));  // caption gets five devices
  std::map<std::uint32_t, int> count;
  for (auto h : b.plan.holds) ++count[h];
  CHECK(count == std::map<std::uint32_t, int>{{1u, 1}, {2u, 1}, {4u, 1}, {8u, 5}});
  const double total = work[0] + work[1] + work[2] + work[3];
  CHECK(b.cost.rates.device_utilization == Approx(5 / work[3] * total / 8));

  // The choice: the best over every placement within 80 GB per device, with the least memory that reaches it.
  const auto brute = brute_force(work, mem, 80e9, 8, 0.95, 112 / 1.0);
  const auto& c = r.chosen();
  CHECK(c.cost.rates.samples_per_second == Approx(brute.rate).epsilon(1e-9));
  CHECK(c.cost.memory.value() == Approx(brute.memory));
  CHECK(c.cost.memory == bytes{39e9});
  // Seven devices hold caption alone and one holds every model: one device pays the sharing loss.
  CHECK(c.cost.rates.samples_per_second == Approx((7 + 0.95) / total));
  std::map<std::uint32_t, int> chosen_count;
  for (auto h : c.plan.holds) ++chosen_count[h];
  CHECK(chosen_count == std::map<std::uint32_t, int>{{8u, 7}, {15u, 1}});
  CHECK(c.cost.rates.device_utilization == Approx(c.cost.rates.samples_per_second * total / 8));
  for (auto h : c.plan.holds) CHECK(((h >> 3) & 1u) == 1u);
  // The CPU side: 112 workers over 1 CPU-second per sample.
  CHECK(c.cost.rates.cpu_bound == Approx(112.0));
  // Every plan priced holds its devices within their memory.
  for (const auto& e : r.candidates) CHECK(e.cost.memory <= bytes{80e9});

  const auto& x = r.explanation;
  REQUIRE(x.trades.size() == 3);
  CHECK_THAT(x.trades[0], Catch::Contains("39 GB per device where the baseline (one model per device) held 32 GB") &&
                              Catch::Contains("busy 99% instead of 64%"));
  CHECK_THAT(x.trades[1], Catch::StartsWith("more memory stops helping at 39 GB per device (of 85.02 GB)"));
  CHECK_THAT(x.binding_before, Catch::StartsWith("the devices holding caption"));
}

TEST_CASE("past the exhaustive search, the local search still finds the best placement", "[plan][curation]") {
  // Three models on 24 devices: C(7 + 23, 24) = 593,775 multisets of the 7 model sets, past the 200,000 the
  // placement tries in full. The budget keeps the heaviest model from sharing with the next.
  const std::vector<model::curation_operator> ops{{"cpu", false, 0.001, bytes{}, 1.0},
                                                  {"light", true, 0.01, bytes{4e9}, 1.0},
                                                  {"middle", true, 0.05, bytes{20e9}, 0.7},
                                                  {"heavy", true, 0.4, bytes{50e9}, 0.5}};
  const model::curation_cluster cluster{64, 24, bytes{80e9}, 0.9};
  for (const double budget : {54e9, 70e9, 74e9}) {
    const auto holds = model::placement_for(ops, cluster, bytes{budget});
    const auto r = model::rates(ops, cluster, holds);
    const auto brute = brute_force({0.01, 0.035, 0.2}, {4e9, 20e9, 50e9}, budget, 24, 0.9, 64 / 0.001);
    INFO("budget " << budget);
    CHECK(r.samples_per_second == Approx(brute.rate).epsilon(1e-9));
  }
}

TEST_CASE("a pipeline the CPU operators bind gains nothing from co-residency", "[plan][curation]") {
  const auto s = *plan::presets::find("dgx-h100");
  auto w = plan::presets::t2v_curation();
  w.cpu_workers = 16;  // 16 CPU-seconds per second: 16 samples/s, under the devices' 34
  const auto r = plan::plan_data_curation(s, w);
  CHECK(r.choice == r.baseline);
  CHECK(r.chosen().cost.rates.samples_per_second == Approx(16.0));
  CHECK_THAT(r.explanation.binding_after, Catch::StartsWith("the CPU operators (16 workers make 16 samples/s)"));
  CHECK_THAT(r.explanation.trades[0], Catch::StartsWith("none:"));
  CHECK_THAT(r.explanation.trades[1], Catch::Contains("the CPU operators bind"));
}

TEST_CASE("with fewer devices than models the least memory is the baseline, and it must pack", "[plan][curation]") {
  auto s = *plan::presets::find("dgx-h100");
  auto w = plan::presets::t2v_curation();
  w.devices = 2;
  const auto r = plan::plan_data_curation(s, w);
  const auto& b = r.candidates[r.baseline];
  CHECK_FALSE(b.plan.one_per_device);
  CHECK(b.plan.budget == bytes{32e9});
  const double peak = 989e12;
  const std::vector<double> work{3 * 81.1e9 / (peak * 0.4), 0.6 * 1e12 / (peak * 0.4), 0.42 * 4e11 / (peak * 0.4),
                                 0.336 * 6.5e13 / (peak * 0.15)};
  const auto brute = brute_force(work, {2e9, 3e9, 2e9, 32e9}, 80e9, 2, 0.95, 112.0);
  CHECK(r.chosen().cost.rates.samples_per_second == Approx(brute.rate).epsilon(1e-9));
  CHECK(r.chosen().cost.memory.value() == Approx(brute.memory));
}

TEST_CASE("a data-curation workload file reads into the preset's plan, and bad input is refused by field",
          "[plan][curation][io]") {
  const auto s = *plan::presets::find("dgx-h100");
  std::ifstream in(std::string(TRINITY_SOURCE_DIR) + "/docs/examples/t2v-curation.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto j = io::parse(text.str(), "t2v-curation.json");
  const auto w = workloads::read_workload(j, s).as<plan::data_curation_workload>();
  const auto from_file = plan::plan_data_curation(s, w);
  const auto preset = plan::plan_data_curation(s, plan::presets::t2v_curation());
  CHECK(from_file.chosen().plan.holds == preset.chosen().plan.holds);
  CHECK(from_file.chosen().cost.rates.samples_per_second == Approx(preset.chosen().cost.rates.samples_per_second));

  const auto refused = [&](const std::string& edit_from, const std::string& edit_to) {
    std::string t = text.str();
    const auto at = t.find(edit_from);
    REQUIRE(at != std::string::npos);
    t.replace(at, edit_from.size(), edit_to);
    try {
      (void)workloads::read_workload(io::parse(t, "edited"), s);
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(R"("on": "device", "flops": "1TFLOP")", R"("on": "devcie", "flops": "1TFLOP")"),
             Catch::Contains("operators[3].on") && Catch::Contains("did you mean \"device\""));
  CHECK_THAT(refused(R"("seconds": "400ms")", R"("seconds": "400ms", "flops": "1TFLOP")"),
             Catch::Contains("operators[1].flops") && Catch::Contains("is for a model"));
  CHECK_THAT(refused(R"("memory": "32GB")", R"("memory": "90GB")"),
             Catch::Contains("operators[5].memory") && Catch::Contains("more than a h100-sxm holds"));
  CHECK_THAT(refused(R"("memory": "3GB")", R"("memroy": "3GB")"), Catch::Contains("operators[3].memroy: unknown key"));
  CHECK_THAT(refused(R"("name": "ocr")", R"("name": "caption")"), Catch::Contains("\"caption\" is named twice"));
  CHECK_THAT(refused(R"("cpu_workers": 112)", R"("cpu_workers": 0)"), Catch::Contains("cpu_workers"));
  CHECK_THAT(refused(R"("share": 0.6)", R"("share": 1.5)"), Catch::Contains("operators[3].share"));
}

}  // namespace plan_data_curation_test
