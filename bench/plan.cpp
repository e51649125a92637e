// trinity-bench-plan: how fast the planner prices candidates.
//
//   build/bin/trinity-bench-plan --benchmark_format=json
//
// plan/training/<system>  a whole plan (every candidate priced and checked, the Pareto front, the choice and its
//                         explanation) for the 70B workload; counter candidates_per_second (target, issue 7:
//                         >= 100,000).
// plan/diffusion, plan/edge  the same for the diffusion cache and the edge stream presets.
// plan/parallel/<system>  the layout search (plan/parallel_planner.hpp) for the 70B model: 64 GPUs of dgx-h100,
//                         the 72 of gb200-nvl72-cxl; same counter and target.
// price/one               one candidate priced alone.
// simulate/dp/<n>         `trinity simulate --parallelism dp=<n>` of the 70B model on dgx-h100 nodes over InfiniBand:
//                         the layout's collectives laid on the simulated fabric. Counter peak_rss_mb, the process's
//                         peak (run this benchmark alone, --benchmark_filter=simulate); targets (issue 78) at 4,096:
//                         under 1 GB and 10 s.

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/plan.hpp>
#include <trinity/plan/simulate_parallel.hpp>

#include <sys/resource.h>

using namespace trinity;

namespace {

void bm_plan(benchmark::State& state, const plan::system& s) {
  const auto w = plan::presets::llm_70b();
  const auto codecs = plan::default_codecs_for(s);
  std::size_t candidates = 0;
  for (auto _ : state) {
    const auto r = plan::plan_training(s, w, codecs);
    candidates += r.candidates.size();
    benchmark::DoNotOptimize(r.choice);
  }
  state.counters["candidates_per_second"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
}

template <class Plan>
void bm_whole(benchmark::State& state, Plan plan) {
  std::size_t candidates = 0;
  for (auto _ : state) {
    const auto r = plan();
    candidates += r.candidates.size();
    benchmark::DoNotOptimize(r.choice);
  }
  state.counters["candidates_per_second"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
}

void bm_diffusion(benchmark::State& state) {
  const auto s = plan::presets::gb200_nvl72_cxl();
  const auto w = plan::presets::diffusion_dit_12b();
  bm_whole(state, [&] { return plan::plan_diffusion(s, w); });
}

void bm_edge(benchmark::State& state) {
  const auto s = plan::presets::edge_5g_cloud();
  const auto w = plan::presets::edge_video_analytics();
  const auto codecs = plan::default_feature_codecs();
  bm_whole(state, [&] { return plan::plan_edge(s, w, codecs); });
}

void bm_parallel(benchmark::State& state, const plan::system& s, std::size_t gpus) {
  const auto w = plan::presets::llm_70b();
  bm_whole(state, [&] { return plan::plan_parallel(s, w, {.gpus = gpus}); });
}

void bm_price(benchmark::State& state) {
  const auto s = plan::presets::gb200_nvl72_cxl();
  const auto w = plan::presets::llm_70b();
  const auto codec = plan::default_codecs()[2];
  int stage = 0;
  for (auto _ : state) {
    const auto c = plan::price(s, w, codec, {2, stage, 1, stage % 2 == 0});
    benchmark::DoNotOptimize(c.total.time);
    stage = (stage + 1) % 4;
  }
  state.counters["candidates_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(bm_plan, gb200, plan::presets::gb200_nvl72_cxl())->Name("plan/training/gb200-nvl72-cxl");
BENCHMARK_CAPTURE(bm_plan, h100, plan::presets::h100_infiniband())->Name("plan/training/h100-ib-cluster");
BENCHMARK(bm_diffusion)->Name("plan/diffusion/gb200-nvl72-cxl");
BENCHMARK(bm_edge)->Name("plan/edge/edge-5g-cloud");
BENCHMARK_CAPTURE(bm_parallel, h100, plan::presets::dgx_h100(), 64)
    ->Name("plan/parallel/dgx-h100-64")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_parallel, gb200, plan::presets::gb200_nvl72_cxl(), 72)
    ->Name("plan/parallel/gb200-nvl72-cxl")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_price)->Name("price/one");

void bm_simulate_dp(benchmark::State& state) {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  model::parallel_layout l;
  l.dp = static_cast<std::size_t>(state.range(0));
  w.data_parallel = l.dp;
  w.global_batch = l.dp;
  std::size_t pairs = 0;
  for (auto _ : state) {
    const auto sim = plan::simulate(s, w, l);
    pairs += sim.size();
    benchmark::DoNotOptimize(sim.data());
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  state.counters["pairs"] = static_cast<double>(pairs) / static_cast<double>(state.iterations());
}
BENCHMARK(bm_simulate_dp)
    ->Name("simulate/dp")
    ->Arg(bench::sized(4096, 64))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
TRINITY_BENCH_MAIN()
