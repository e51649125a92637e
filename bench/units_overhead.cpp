// Claim: strong unit types cost nothing. The same α-β loop runs on raw
// doubles and on trinity quantities in one process; compare the two lines'
// times (their ratio should be 1.0 within noise). Run with
//   build/bin/trinity-bench-units --benchmark_format=json
#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/model/hit_rate.hpp>
#include <trinity/units.hpp>

#include <chrono>
#include <vector>

namespace {

std::vector<double> sizes(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 1e3 * static_cast<double>(i + 1);
  return v;
}

void raw_double_alpha_beta(benchmark::State& state) {
  const auto s = sizes(static_cast<std::size_t>(state.range(0)));
  const double latency = 2e-6, bandwidth = 50e9;
  for (auto _ : state) {
    double total = 0;
    for (double b : s) total += latency + b / bandwidth;
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void quantity_alpha_beta(benchmark::State& state) {
  using namespace trinity::literals;
  const auto raw = sizes(static_cast<std::size_t>(state.range(0)));
  std::vector<trinity::bytes> s;
  for (double b : raw) s.emplace_back(b);
  const trinity::seconds latency = 2_us;
  const trinity::bytes_per_second bandwidth = 400_Gbps;
  for (auto _ : state) {
    trinity::seconds total{};
    for (trinity::bytes b : s) total += latency + b / bandwidth;
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The claim itself, as one number: both loops run in every iteration, timed
// separately and interleaved so frequency drift hits both alike; `ratio` is
// quantity time over double time (1.0 = no overhead).
void quantity_over_double_ratio(benchmark::State& state) {
  using namespace trinity::literals;
  using clock = std::chrono::steady_clock;
  const auto raw = sizes(static_cast<std::size_t>(state.range(0)));
  std::vector<trinity::bytes> typed;
  for (double b : raw) typed.emplace_back(b);
  const double latency = 2e-6, bandwidth = 50e9;
  const trinity::seconds q_latency = 2_us;
  const trinity::bytes_per_second q_bandwidth = 400_Gbps;
  std::chrono::duration<double> t_raw{}, t_typed{};
  for (auto _ : state) {
    const auto a = clock::now();
    double total = 0;
    for (double b : raw) total += latency + b / bandwidth;
    benchmark::DoNotOptimize(total);
    const auto b = clock::now();
    trinity::seconds q_total{};
    for (trinity::bytes s : typed) q_total += q_latency + s / q_bandwidth;
    benchmark::DoNotOptimize(q_total);
    const auto c = clock::now();
    t_raw += b - a;
    t_typed += c - b;
  }
  state.counters["ratio"] = t_typed.count() / t_raw.count();
}

void hit_rate_curve(benchmark::State& state) {
  const trinity::model::power_law h{trinity::per_byte{1e-10}, 0.7};
  double m = 1e9;
  for (auto _ : state) {
    benchmark::DoNotOptimize(h(trinity::bytes{m}));
    m += 1.0;
  }
}

}  // namespace

BENCHMARK(raw_double_alpha_beta)->Arg(1 << 12)->Arg(1 << 16);
BENCHMARK(quantity_alpha_beta)->Arg(1 << 12)->Arg(1 << 16);
BENCHMARK(quantity_over_double_ratio)->Arg(1 << 16);
BENCHMARK(hit_rate_curve);
TRINITY_BENCH_MAIN()
