// trinity-bench-compress: every compressor's encode and decode on 64 MiB of
// N(0,1) fp32, one thread, beside memcpy of the same bytes in the same run.
//
//   build/bin/trinity-bench-compress --benchmark_format=json
//
// bytes_per_second counts input bytes. Counters: ratio (input / wire bytes),
// rel_error (||x - y|| / ||x||), x_memcpy (this encode's or decode's rate over
// memcpy's, measured first in the same run) and, for the sampled top-k
// encoders, x_exact_topk (over exact top-k at the same density). Targets from
// issue 3: int8 encode >= 0.6 x_memcpy; sampled top-k at 1% and 0.1% >= 0.25
// x_memcpy and >= 3 x_exact_topk; 1-bit sign encode >= 0.5 x_memcpy.

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/lossless/catalog.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <ratio>
#include <string>
#include <vector>

using namespace trinity;
using namespace trinity::compress;

namespace {

const std::size_t n = bench::sized<std::size_t>(std::size_t{64} << 20, std::size_t{1} << 20) / sizeof(float);

const std::vector<std::vector<float>>& data() {
  static const auto tensors = normal_tensors(2, n, 42);
  return tensors;
}

//! Rates measured earlier in this run, by benchmark name, for the ratio counters.
std::map<std::string, double>& rates() {
  static std::map<std::string, double> r;
  return r;
}

using clock_type = std::chrono::steady_clock;

void record(benchmark::State& state, const std::string& key, double seconds, std::size_t calls) {
  const double rate = static_cast<double>(calls * n * sizeof(float)) / seconds;
  rates()[key] = rate;
  if (const auto m = rates().find("memcpy"); m != rates().end() && key != "memcpy")
    state.counters["x_memcpy"] = rate / m->second;
}

void bm_memcpy(benchmark::State& state) {
  std::vector<float> dst(n);
  const auto& src = data()[0];
  std::size_t calls = 0;
  const auto t0 = clock_type::now();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
    ++calls;
  }
  record(state, "memcpy", std::chrono::duration<double>(clock_type::now() - t0).count(), calls);
  state.SetBytesProcessed(static_cast<std::int64_t>(calls * n * sizeof(float)));
}

double rel_error(const std::vector<float>& x, const std::vector<float>& y) {
  double e = 0, s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    s += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(e / s);
}

void bm_encode(benchmark::State& state, const catalog_entry* entry) {
  auto c = entry->make();
  frame_buffer frame;
  c.encode(data()[0], frame);  // warm-up: state, page faults, the frame's capacity
  std::size_t calls = 0, wire = 0;
  const auto t0 = clock_type::now();
  for (auto _ : state) {
    frame.clear();
    c.encode(data()[1 - calls % 2], frame);  // alternate, so a stateful codec never sees a repeat
    benchmark::DoNotOptimize(frame.data());
    wire = frame.size();
    ++calls;
  }
  record(state, entry->name + "/encode", std::chrono::duration<double>(clock_type::now() - t0).count(), calls);
  state.SetBytesProcessed(static_cast<std::int64_t>(calls * n * sizeof(float)));
  state.counters["ratio"] = static_cast<double>(n * sizeof(float)) / static_cast<double>(wire);
  if (entry->name.rfind("sampled-topk-", 0) == 0) {
    const auto exact = rates().find("topk-" + entry->name.substr(13) + "/encode");
    if (exact != rates().end()) state.counters["x_exact_topk"] = rates()[entry->name + "/encode"] / exact->second;
  }
  // The error of one call on fresh state, on the tensor the timing used.
  auto fresh = entry->make();
  frame.clear();
  fresh.encode(data()[1], frame);
  state.counters["rel_error"] = rel_error(data()[1], decode(frame.bytes(), {.max_bytes = std::size_t{1} << 31}));
}

void bm_decode(benchmark::State& state, const catalog_entry* entry) {
  auto c = entry->make();
  frame_buffer frame;
  c.encode(data()[1], frame);  // a first frame: for delta a key frame, which decodes on its own every time
  decoder rx{{.max_bytes = std::size_t{1} << 31}};
  std::vector<float> out(n);
  std::size_t calls = 0;
  const auto t0 = clock_type::now();
  for (auto _ : state) {
    rx.decode_into(frame.bytes(), out);
    benchmark::DoNotOptimize(out.data());
    ++calls;
  }
  record(state, entry->name + "/decode", std::chrono::duration<double>(clock_type::now() - t0).count(), calls);
  state.SetBytesProcessed(static_cast<std::int64_t>(calls * n * sizeof(float)));
  state.counters["ratio"] = static_cast<double>(n * sizeof(float)) / static_cast<double>(frame.size());
}

//! The catalog, plus the plain (no error feedback) codecs the targets name.
const std::vector<catalog_entry>& benchmarked() {
  using percent = std::ratio<1, 100>;
  using permille = std::ratio<1, 1000>;
  static const std::vector<catalog_entry> all = [] {
    auto entry = [](std::string name, auto c) {
      return catalog_entry{name, "", [name, c] { return any_compressor(name, c); }};
    };
    std::vector<catalog_entry> v = {entry("int8", int8{}),
                                    entry("int4", int4{}),
                                    entry("sign", sign<>{}),
                                    entry("topk-1%", topk<percent>{}),
                                    entry("topk-0.1%", topk<permille>{}),
                                    entry("sampled-topk-1%", sampled_topk<percent>{}),
                                    entry("sampled-topk-0.1%", sampled_topk<permille>{})};
    for (const auto& e : catalog()) v.push_back(e);
    return v;
  }();
  return all;
}

const bool registered = [] {
  benchmark::RegisterBenchmark("compress/memcpy", bm_memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const auto& e : benchmarked()) {
    benchmark::RegisterBenchmark(("compress/" + e.name + "/encode").c_str(), bm_encode, &e)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("compress/" + e.name + "/decode").c_str(), bm_decode, &e)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace

TRINITY_BENCH_MAIN()
