// The overlap model (model/overlap.hpp) against shard::data_parallel's own overlapped schedule
// (shard::schedule{.overlap}), run here: two ranks as threads, ZeRO stage 0 (DDP's all-reduce), `layers` equal
// layers, buckets of `bucket_layers` of them, and a backward pass that sleeps a fixed time per layer, as a
// device's compute leaves the host's cores to the collectives.
//
// Per window (the backward pass's length, as a share of the reduction's), three runs of the same steps:
//  - without overlap, step()'s time is the reduction and the optimizer: C + U;
//  - with overlap, it is what the backward pass left exposed and the optimizer: E + U;
//  - with overlap and a pause before step() long enough for every bucket to finish, it is U alone.
// The optimizer updates nothing (no_update below), so U is step()'s bookkeeping and the collectives' times
// are differences of small figures. The window includes data_parallel's own per-layer work (gradient_ready's
// scan for NaN), host compute that shares the cores with the collectives, which the model leaves out.
// The prediction is exposed_after_overlap(C, W, buckets) with C and W as measured; the counters give it, the
// measured E, and their ratio. Medians over the steps after a warm-up step.

#include "bench_support.hpp"

#include <trinity/comm/thread_world.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/shard/data_parallel.hpp>
#include <trinity/shard/ledger.hpp>
#include <trinity/shard/schemes.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

namespace {

using namespace trinity;
using clock_type = std::chrono::steady_clock;

// No update: what step() costs beyond the reduction is then only its own bookkeeping, so the difference of
// two step() times is the collectives' and not the noise of an optimizer pass over every parameter.
struct no_update {
  static constexpr std::size_t states_per_parameter = 0;
  void update(std::span<float>, std::span<const float>, std::span<float>, long) const {}
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct shape {
  std::size_t layers = 16, per_layer = std::size_t{1} << 21, bucket_layers = 4;
  int steps = 7;
};

struct timings {
  double tail = 0;    //!< step()'s time, median
  double window = 0;  //!< the backward pass's time, median
};

// One run of `s.steps` + 1 steps on two thread ranks; rank 0's times.
timings run(const shape& s, bool overlap, std::chrono::microseconds per_layer, std::chrono::microseconds pause) {
  std::vector<double> tails, windows;
  comm::thread_world world(2);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    shard::memory_ledger ledger;
    const no_update opt;
    const std::vector<float> initial(s.layers * s.per_layer, 0.5f);
    shard::data_parallel<shard::replicate, comm::thread_communicator> dp(
        c, ledger, std::vector<std::size_t>(s.layers, s.per_layer), initial, opt, {}, {},
        {.overlap = overlap, .bucket_bytes = s.bucket_layers * s.per_layer * sizeof(float)});
    std::vector<float> token(1, 0.0f);
    for (int step = 0; step <= s.steps; ++step) {
      comm::all_reduce(c, std::span<float>(token), comm::reduce_op::sum);  // both ranks start the pass together
      const auto begin = clock_type::now();
      for (std::size_t l = s.layers; l-- > 0;) {
        // The gradient is left as the last step left it: writing it would be host compute on the cores the
        // collectives run on, which a device's backward pass does not take.
        std::this_thread::sleep_for(per_layer);
        (void)dp.gradient(l);
        dp.gradient_ready(l);
      }
      const auto end = clock_type::now();
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
      const auto t0 = clock_type::now();
      dp.step(opt);
      const auto t1 = clock_type::now();
      if (c.rank() == 0 && step > 0) {
        tails.push_back(seconds_between(t0, t1));
        windows.push_back(seconds_between(begin, end));
      }
    }
  });
  return {median(tails), median(windows)};
}

// state.range(0): the backward pass as a percentage of the reduction's time.
void overlap_against_model(benchmark::State& state) {
  shape s;
  if (bench::quick()) s = {4, std::size_t{1} << 14, 2, 2};
  // The reduction's time with nothing to hide behind, first without a pass, to size the pass.
  const auto bare = run(s, false, std::chrono::microseconds{0}, std::chrono::microseconds{0});
  const auto alone0 =
      run(s, true, std::chrono::microseconds{0}, std::chrono::microseconds{static_cast<long>(4e6 * bare.tail)});
  const double reduce0 = std::max(bare.tail - alone0.tail, 1e-6);
  const auto per_layer = std::chrono::microseconds{
      static_cast<long>(1e6 * reduce0 * static_cast<double>(state.range(0)) / 100.0 / static_cast<double>(s.layers))};
  timings without{}, with{}, alone{};
  for (auto _ : state) {
    without = run(s, false, per_layer, std::chrono::microseconds{0});
    with = run(s, true, per_layer, std::chrono::microseconds{0});
    alone = run(s, true, per_layer, std::chrono::microseconds{static_cast<long>(4e6 * without.tail)});
  }
  const double reduce = std::max(without.tail - alone.tail, 0.0);
  const double exposed = std::max(with.tail - alone.tail, 0.0);
  const double buckets = static_cast<double>(s.layers / s.bucket_layers);
  const double predicted = model::exposed_after_overlap(seconds{reduce}, seconds{with.window}, buckets).value();
  state.counters["window_ms"] = 1e3 * with.window;
  state.counters["reduce_ms"] = 1e3 * reduce;
  state.counters["step_rest_ms"] = 1e3 * alone.tail;
  state.counters["buckets"] = buckets;
  state.counters["exposed_measured_ms"] = 1e3 * exposed;
  state.counters["exposed_predicted_ms"] = 1e3 * predicted;
  state.counters["predicted_over_measured"] = exposed > 0 ? predicted / exposed : 0.0;
}
BENCHMARK(overlap_against_model)->Arg(25)->Arg(100)->Arg(400)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return trinity::bench::run(argc, argv); }
