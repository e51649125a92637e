// trinity-bench-collectives: all-reduce busbw, as nccl-tests defines it.
//
//   mpirun -n 2 build/bin/trinity-bench-collectives --benchmark_format=json
//       allreduce/trinity/<bytes>  trinity's all-reduce over trinity::mpi (shared-memory window on one node)
//       allreduce/mpi/<bytes>      MPI_Allreduce on the same buffers
//   build/bin/trinity-bench-collectives
//       allreduce/threads/<bytes>  the in-process backend, 2 ranks as threads
//       memcpy/<bytes>             one memcpy of the same bytes: the ceiling the threads backend is held to
//
// Counters: busbw = bytes / time · 2(n − 1)/n (bytes per second); x_mpi on
// allreduce/trinity = its busbw over MPI_Allreduce's, the median of 9 rounds
// alternating the two on the same buffers in the same benchmark, with
// busbw_median and mpi_busbw_median beside it; x_memcpy on allreduce/threads =
// its algbw over memcpy's bytes per second at the same size. Targets (2 ranks,
// one node): x_mpi >= 1.5 at 64 MiB, and >= 0.9 at every size from 1 KiB up.
// Every rank runs the MPI benchmarks with the same fixed iteration counts, in
// lockstep; only rank 0 reports.

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <mpi.h>

#include <trinity/backends/mpi.hpp>
#include <trinity/comm.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace trinity;

namespace {

using clock_type = std::chrono::steady_clock;

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s;
  const std::size_t largest = bench::sized(std::size_t{256} << 20, std::size_t{64} << 10);
  for (std::size_t b = 1 << 10; b <= largest; b *= 4) s.push_back(b);
  return s;
}

// Enough calls for ~0.25 s at 4 GB/s, at least 10.
benchmark::IterationCount iterations(std::size_t bytes) {
  return static_cast<benchmark::IterationCount>(std::clamp<std::size_t>((std::size_t{1} << 30) / bytes, 10, 20000));
}

double busbw_factor(int n) { return 2.0 * (n - 1) / n; }

// Alternating rounds of trinity and MPI_Allreduce per size; the ratio is their median.
constexpr int rounds = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

mpi::communicator& trinity_comm() {
  static mpi::communicator c;
  return c;
}

// Times `calls` of f, all ranks starting together; returns the slowest rank's seconds.
template <class F>
double timed(int calls, F f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  for (int i = 0; i < calls; ++i) f();
  double s = std::chrono::duration<double>(clock_type::now() - t0).count(), worst = 0;
  MPI_Allreduce(&s, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

void bm_trinity(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(float);
  std::vector<float> buf(count, 1.0f), out(count);
  auto& c = trinity_comm();
  comm::all_reduce(c, std::span<float>(buf), comm::reduce_op::sum);  // warm: pages and window touched
  MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state) {
    comm::all_reduce(c, std::span<float>(buf), comm::reduce_op::sum);
    benchmark::ClobberMemory();
  }
  // The peer, on the same buffers, in alternating rounds that keep both under the same conditions; the
  // counters are the medians over the rounds (a shared machine stalls one round now and then).
  const int calls = static_cast<int>(std::clamp<benchmark::IterationCount>(state.iterations() / 4, 10, 2000));
  std::vector<double> ratio, mine, theirs;
  for (int round = 0; round < rounds; ++round) {
    const double t_trinity = timed(calls, [&] { comm::all_reduce(c, std::span<float>(buf), comm::reduce_op::sum); });
    const double t_mpi = timed(calls, [&] {
      MPI_Allreduce(buf.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    ratio.push_back(t_mpi / t_trinity);
    mine.push_back(static_cast<double>(bytes) * calls / t_trinity);
    theirs.push_back(static_cast<double>(bytes) * calls / t_mpi);
  }
  const int n = world_size();
  state.counters["busbw"] =
      benchmark::Counter(static_cast<double>(bytes) * busbw_factor(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["x_mpi"] = median(ratio);
  state.counters["busbw_median"] = median(mine) * busbw_factor(n);
  state.counters["mpi_busbw_median"] = median(theirs) * busbw_factor(n);
  state.counters["rounds"] = rounds;
  state.counters["ranks"] = n;
}

void bm_mpi(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(float);
  std::vector<float> buf(count, 1.0f), out(count);
  MPI_Allreduce(buf.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state) {
    MPI_Allreduce(buf.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::ClobberMemory();
  }
  state.counters["busbw"] = benchmark::Counter(static_cast<double>(bytes) * busbw_factor(world_size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// The in-process backend: 2 ranks as threads, one all-reduce per benchmark iteration.
void bm_threads(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(float);
  constexpr int ranks = 2;
  comm::thread_world world(ranks);
  std::vector<std::vector<float>> bufs(ranks, std::vector<float>(count, 1.0f));
  // Rank 1 runs in a helper thread for as many calls as the benchmark will make: max_iterations is fixed
  // before the loop starts, so the two ranks stay in step without any extra message.
  const auto calls = static_cast<std::size_t>(state.max_iterations) + 1;
  std::thread helper([&] {
    comm::thread_communicator c(world, 1);
    for (std::size_t i = 0; i < calls; ++i) comm::all_reduce(c, std::span<float>(bufs[1]), comm::reduce_op::sum);
  });
  comm::thread_communicator c(world, 0);
  const auto call = [&] { comm::all_reduce(c, std::span<float>(bufs[0]), comm::reduce_op::sum); };
  call();
  const auto start = clock_type::now();
  for (auto _ : state) call();
  const double per_call =
      std::chrono::duration<double>(clock_type::now() - start).count() / static_cast<double>(state.iterations());
  helper.join();
  // memcpy of the same bytes, same run.
  std::vector<float> dst(count);
  const auto t0 = clock_type::now();
  int copies = 0;
  do {
    std::memcpy(dst.data(), bufs[0].data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    ++copies;
  } while (clock_type::now() - t0 < std::chrono::milliseconds(50));
  const double memcpy_rate =
      static_cast<double>(bytes) * copies / std::chrono::duration<double>(clock_type::now() - t0).count();
  state.counters["busbw"] = benchmark::Counter(static_cast<double>(bytes) * busbw_factor(ranks),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["memcpy_Bps"] = memcpy_rate;
  state.counters["x_memcpy"] = static_cast<double>(bytes) / per_call / memcpy_rate;
}

class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  mpi::environment env(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = world_size();
  // Only rank 0 writes a report: drop --benchmark_out* elsewhere.
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0)
    args.erase(std::remove_if(args.begin() + 1, args.end(),
                              [](const char* a) { return std::strncmp(a, "--benchmark_out", 15) == 0; }),
               args.end());
  trinity::bench::record_context();
  std::string min_time = "--benchmark_min_time=0.01";
  if (trinity::bench::quick()) args.push_back(min_time.data());
  int nargs = static_cast<int>(args.size());
  benchmark::Initialize(&nargs, args.data());
  if (n >= 2) {
    for (const std::size_t b : sizes()) {
      benchmark::RegisterBenchmark(("allreduce/trinity/" + std::to_string(b)).c_str(), bm_trinity)
          ->Arg(static_cast<std::int64_t>(b))
          ->Iterations(iterations(b))
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("allreduce/mpi/" + std::to_string(b)).c_str(), bm_mpi)
          ->Arg(static_cast<std::int64_t>(b))
          ->Iterations(iterations(b))
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  } else {
    for (const std::size_t b : sizes())
      benchmark::RegisterBenchmark(("allreduce/threads/" + std::to_string(b)).c_str(), bm_threads)
          ->Arg(static_cast<std::int64_t>(b))
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
  }
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    silent_reporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  return 0;
}
