// trinity-bench-embedding: embedding-bag lookups beside a plain gather and memcpy, in one run, on one SYNTHETIC
// table (1,000,000 rows of 64 fp32 values) and one batch (2,048 bags of 32 rows, drawn Zipf 1.05).
//
//   build/bin/trinity-bench-embedding --benchmark_format=json
//
// embedding/memcpy         the batch's row bytes copied contiguously: the ceiling a gather of them approaches.
// embedding/gather         a plain gather: each looked-up row copied out, one after another, no pooling.
// embedding/bag            embedding::embedding_bag, summing each bag's rows (what nn.EmbeddingBag computes).
// embedding/tiered/SHARE   embedding::tiered_table's bags through an LFU cache of SHARE percent of the rows, the
//                          table in a second tier (both this machine's memory), after one warm-up batch.
// Counters: bytes_per_second (of rows read), x_memcpy (over memcpy's), x_gather (over the plain gather's), and
// hit_rate for the tiered table.

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/detail/splitmix.hpp>
#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/embedding/tiered_table.hpp>
#include <trinity/place/tier_resource.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace trinity;

const std::size_t dim = 64;
const std::size_t rows = bench::sized<std::size_t>(1'000'000, 20'000);
const std::size_t bags = 2048, per_bag = 32;

const std::vector<float>& values() {
  static const auto v = [] {
    std::vector<float> out(rows * dim);
    std::uint64_t s = 3;
    for (auto& x : out) x = static_cast<float>(trinity::detail::splitmix_next(s) >> 40) * 0x1p-24f;
    return out;
  }();
  return v;
}
const std::vector<std::uint64_t>& indices() {
  static const auto v = [] {
    std::vector<double> cdf(rows);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) cdf[r] = total += std::pow(static_cast<double>(r + 1), -1.05);
    std::vector<std::uint64_t> out(bags * per_bag);
    std::uint64_t s = 5;
    for (auto& x : out) {
      const double u = static_cast<double>(trinity::detail::splitmix_next(s) >> 11) * 0x1p-53 * total;
      // Popularity by rank, rows scattered over the table (rank r at a fixed odd multiple, mod rows).
      const auto rank = static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      x = (std::min<std::uint64_t>(rank, rows - 1) * 2654435761u) % rows;
    }
    return out;
  }();
  return v;
}
const std::vector<std::size_t>& offsets() {
  static const auto v = [] {
    std::vector<std::size_t> out(bags + 1);
    for (std::size_t b = 0; b <= bags; ++b) out[b] = b * per_bag;
    return out;
  }();
  return v;
}
double batch_bytes() { return static_cast<double>(bags * per_bag * dim * sizeof(float)); }

// One batch per iteration; bytes_per_second of rows read, and the ratios against the peers that already ran.
template <class F>
void measured(benchmark::State& state, const std::string& name, F f) {
  const double rate = bench::timed_against(state, name, "embedding/memcpy", "memcpy", f) * batch_bytes();
  state.counters["bytes_per_second"] = rate;
  if (const auto it = bench::rates().find("embedding/gather"); it != bench::rates().end() && name != "embedding/gather")
    state.counters["x_gather"] = rate / (it->second * batch_bytes());
}

void bm_memcpy(benchmark::State& state) {
  // As many bytes as the batch's rows, from a buffer of their size (the table may be smaller: quick mode).
  const std::vector<float> in(bags * per_bag * dim, 1.0f);
  std::vector<float> out(in.size());
  measured(state, "embedding/memcpy", [&](std::size_t) {
    std::memcpy(out.data(), in.data(), out.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
  });
}

void bm_gather(benchmark::State& state) {
  std::vector<float> out(bags * per_bag * dim);
  const auto& v = values();
  measured(state, "embedding/gather", [&](std::size_t) {
    float* o = out.data();
    for (const auto i : indices()) o = std::copy_n(v.data() + i * dim, dim, o);
    benchmark::DoNotOptimize(out.data());
  });
}

void bm_bag(benchmark::State& state) {
  std::vector<float> out(bags * dim);
  const embedding::bag_batch batch{indices(), offsets()};
  measured(state, "embedding/bag", [&](std::size_t) {
    embedding::embedding_bag(values(), dim, batch, embedding::pooling::sum, out);
    benchmark::DoNotOptimize(out.data());
  });
}

void bm_tiered(benchmark::State& state) {
  const auto percent = static_cast<std::size_t>(state.range(0));
  const std::size_t cached = rows * percent / 100;
  place::tier_resource fast("fast", bytes{static_cast<double>(cached * dim * 4) + 64}),
      capacity("capacity", bytes{static_cast<double>(rows * dim * 4) + 64});
  place::tier_resource* tiers[] = {&fast, &capacity};
  embedding::tiered_table table(rows, dim, values(), tiers, cached, embedding::cache_policy::lfu);
  std::vector<float> out(bags * dim);
  const embedding::bag_batch batch{indices(), offsets()};
  table.bag(batch, embedding::pooling::sum, out);  // warm-up: the cache fills
  table.reset_traffic();
  measured(state, "embedding/tiered/" + std::to_string(percent), [&](std::size_t) {
    table.bag(batch, embedding::pooling::sum, out);
    benchmark::DoNotOptimize(out.data());
  });
  state.counters["hit_rate"] = table.traffic().hit_rate();
}

}  // namespace

BENCHMARK(bm_memcpy)->Name("embedding/memcpy")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_gather)->Name("embedding/gather")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_bag)->Name("embedding/bag")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_tiered)->Name("embedding/tiered")->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMicrosecond)->UseRealTime();

TRINITY_BENCH_MAIN()
