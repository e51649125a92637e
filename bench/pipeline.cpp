// pipeline::executor against the same kernels called in a plain loop, alternating in every iteration so both
// see the same machine. One device holding two models (an index_model of `rows` keys of 64 floats, four
// searches a sample, each model a step per search), fed by one CPU worker; the loop runs the same copies on
// the same samples, one after the other, on one thread. What the executor adds per step: taking the lock,
// choosing the least-served model, the queues and their reservations, waking whoever waits. Counters: each
// side's samples/s and the executor's over the loop's (the ceiling is 1: the loop does nothing else).
#include <trinity/pipeline.hpp>
#include <trinity/pipeline/kernels.hpp>

#include <chrono>
#include <vector>

#include "bench_support.hpp"

namespace {

using namespace trinity;
using clock_type = std::chrono::steady_clock;

pipeline::sample embedding(std::uint64_t id) {
  pipeline::sample s;
  s.id = id;
  s.features.assign(64, 0.25f);
  s.features[id % 64] = 1.0f;
  return s;
}

void executor_vs_loop(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0));
  const std::vector<pipeline::model_operator> models{pipeline::index_model("first", rows, 64, 4),
                                                     pipeline::index_model("second", rows, 64, 4)};
  const auto samples = bench::sized<std::size_t>(std::max<std::size_t>(200, (std::size_t{1} << 26) / (rows * 64)), 50);
  pipeline::executor x({}, models, {{"device", models[0].footprint + models[1].footprint, 0b11}},
                       {.cpu_workers = 1, .queue_capacity = 16});
  auto first = models[0].load(), second = models[1].load();
  double loop_s = 0, executor_s = 0;
  for (auto _ : state) {
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < samples; ++i) {
      auto s = embedding(i);
      if (first->run(s)) (void)second->run(s);
      benchmark::DoNotOptimize(s.score);
    }
    loop_s += std::chrono::duration<double>(clock_type::now() - t0).count();
    const auto r = x.run(samples, embedding);
    if (r.samples != samples) state.SkipWithError("a sample was lost");
    executor_s += r.wall_seconds;
  }
  const double n = static_cast<double>(state.iterations()) * static_cast<double>(samples);
  state.counters["loop_samples_per_second"] = n / loop_s;
  state.counters["executor_samples_per_second"] = n / executor_s;
  state.counters["steps_per_sample"] = 8;
  state.counters["executor_over_loop"] = loop_s / executor_s;
}

BENCHMARK(executor_vs_loop)
    ->ArgName("rows")
    ->Arg(256)
    ->Arg(4096)
    ->Arg(65536)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return trinity::bench::run(argc, argv); }
