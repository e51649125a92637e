// The prefix cache on a real trace (issue 15): Mooncake's conversation trace replayed through
// cache::prefix_cache, against the simplest Python replay of the same semantics run in the same process's
// run (tools/reference/prefix_replay.py, timed by itself without reading the file), and prefix lookups
// per second on the trace's cached chains. Targets: the whole 12,031-request replay under 1 s, lookups
// >= 10 M blocks/s.
//
// The trace: $TRINITY_TRACE, else ../shared/traces/mooncake_conversation_trace.jsonl beside the source
// tree, else the shipped 800-request excerpt (the JSON's context says which).
#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/cache/block_replay.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/io/block_trace.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace trinity;

namespace {

constexpr std::uint64_t capacity_blocks = 10'000;  // 1.7 TB of Llama-3-70B KV: mid-curve on the whole trace

std::string trace_path() {
  if (const char* t = std::getenv("TRINITY_TRACE")) return t;
  const std::string shared = TRINITY_SOURCE_DIR "/../shared/traces/mooncake_conversation_trace.jsonl";
  if (std::filesystem::exists(shared)) return shared;
  return TRINITY_SOURCE_DIR "/docs/examples/mooncake_conversation_excerpt.jsonl";
}

const std::vector<cache::block_request>& trace() {
  static const auto t = io::read_block_trace(trace_path());
  return t;
}

double trinity_seconds = 0;  // one replay, as the first benchmark measured it

void bm_replay_trinity(benchmark::State& state) {
  const auto& t = trace();
  cache::block_replay_result r;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    r = cache::replay_blocks(t, {.capacity_blocks = capacity_blocks});
    benchmark::DoNotOptimize(r.hit_blocks);
  }
  trinity_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                    static_cast<double>(state.iterations());
  state.counters["requests"] = static_cast<double>(r.requests);
  state.counters["block_hit_rate"] = r.block_hit_rate();
  state.counters["blocks_per_second"] = benchmark::Counter(
      static_cast<double>(r.blocks) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The Python replay, run once per iteration as a child process; its own clock excludes start-up and reading.
void bm_replay_python(benchmark::State& state) {
  const std::vector<std::string> argv{"python3", TRINITY_SOURCE_DIR "/tools/reference/prefix_replay.py", trace_path(),
                                      std::to_string(capacity_blocks), "lru"};
  double seconds = 0, hit_rate = 0;
  for (auto _ : state) {
    trinity::detail::program_run run;
    try {
      run = trinity::detail::run_program(argv);
    } catch (const std::exception& e) {
      state.SkipWithError((std::string("python3 cannot be started: ") + e.what()).c_str());
      return;
    }
    if (!run.end.succeeded() || run.out.empty()) {
      state.SkipWithError("the Python replay failed or printed nothing (is python3 installed?)");
      return;
    }
    const std::string line = run.out.substr(0, run.out.find('\n'));
    const std::string s(line);
    const auto at = [&](const std::string& key) {
      return std::stod(s.substr(s.find("\"" + key + "\": ") + key.size() + 4));
    };
    seconds = at("seconds");
    hit_rate = at("block_hit_rate");
    state.SetIterationTime(seconds);
  }
  state.counters["block_hit_rate"] = hit_rate;
  state.counters["python_seconds"] = seconds;
  // How many times faster trinity's replay is than the Python one, in the same run.
  if (trinity_seconds > 0) state.counters["x_trinity_faster"] = seconds / trinity_seconds;
}

void bm_prefix_lookup(benchmark::State& state) {
  const auto& t = trace();
  // Every chain cached (capacity for all), then each request's chain looked up: the blocks matched per second.
  cache::prefix_cache kv({.block_tokens = 1, .block_size = bytes{1}, .capacity = bytes{1e9}});
  for (const auto& q : t) (void)kv.insert(0, q.hash_ids);
  std::size_t i = 0;
  std::uint64_t blocks = 0;
  for (auto _ : state) {
    const auto m = kv.match(0, t[i].hash_ids);
    blocks += m.blocks();
    i = i + 1 == t.size() ? 0 : i + 1;
  }
  state.counters["blocks_per_second"] = benchmark::Counter(static_cast<double>(blocks), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(bm_replay_trinity)->Name("replay/trinity")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_replay_python)->Name("replay/python")->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
BENCHMARK(bm_prefix_lookup)->Name("prefix/lookup")->UseRealTime();

int main(int argc, char** argv) {
  benchmark::AddCustomContext("trace", trace_path());
  benchmark::AddCustomContext("capacity_blocks", std::to_string(capacity_blocks));
  return trinity::bench::run(argc, argv);
}
