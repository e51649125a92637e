#pragma once
// What every trinity benchmark records beside its figures, and its quick mode.
//
// Context: the build it was compiled by (the CMake preset and the flags, from TRINITY_BENCH_BUILD) and the
// instruction set trinity's kernels picked at run time, so a result file names what it measured. The
// machine (host, CPUs, caches) Google Benchmark records itself.
//
// Quick mode (TRINITY_BENCH_QUICK=1 in the environment): small problems and short runs, so a test can
// check that a documented benchmark command works. Its figures mean nothing, and the context says so.

#include <benchmark/benchmark.h>

#include <trinity/detail/host.hpp>
#include <trinity/detail/isa.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <cstring>
#include <string>
#include <vector>

#ifndef TRINITY_BENCH_BUILD
#define TRINITY_BENCH_BUILD "unknown build"
#endif

namespace trinity::bench {

inline bool quick() {
  const char* q = std::getenv("TRINITY_BENCH_QUICK");
  return q && *q && std::strcmp(q, "0") != 0;
}

//! n normally, `small` in quick mode.
template <class T>
T sized(T n, T small) {
  return quick() ? small : n;
}

inline void record_context() {
  benchmark::AddCustomContext("trinity_build", TRINITY_BENCH_BUILD);
  benchmark::AddCustomContext("cpu_model", trinity::detail::cpu_model());
  benchmark::AddCustomContext("trinity_isa", trinity::detail::to_string(trinity::detail::best_isa()));
  benchmark::AddCustomContext("trinity_quick", quick() ? "yes: small sizes, figures meaningless" : "no");
}

//! The rates this run has measured, by name: what a later benchmark's ratio against its peer divides by.
inline std::map<std::string, double>& rates() {
  static std::map<std::string, double> r;
  return r;
}

//! Runs `f(i)` for iteration i, records its iterations a second under `name` and, where `peer` already ran,
//! sets the counter x_<label> to the ratio of the two. Returns the rate.
template <class F>
double timed_against(benchmark::State& state, const std::string& name, const std::string& peer,
                     const std::string& label, F&& f) {
  std::size_t i = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) f(i++);
  const double rate = static_cast<double>(state.iterations()) /
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rates()[name] = rate;
  if (const auto it = rates().find(peer); it != rates().end()) state.counters["x_" + label] = rate / it->second;
  return rate;
}

//! Google Benchmark's main, with the context recorded and, in quick mode, a short minimum time.
inline int run(int argc, char** argv) {
  record_context();
  std::string min_time = "--benchmark_min_time=0.01";
  std::vector<char*> args(argv, argv + argc);
  if (quick()) args.push_back(min_time.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace trinity::bench

#define TRINITY_BENCH_MAIN() \
  int main(int argc, char** argv) { return trinity::bench::run(argc, argv); }
