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

#include <cstdlib>
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
