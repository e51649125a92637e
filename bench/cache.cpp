// trinity-bench-cache: the cache's lookups beside their peers, in one run.
//
//   build/bin/trinity-bench-cache --benchmark_format=json
//
// flat/single/{trinity,faiss}   one query, top-1, over 100,000 x 768 fp32 (inner product), trinity's
//                               flat_index beside FAISS IndexFlatIP on the same vectors. Counters:
//                               x_faiss (trinity's queries/s over FAISS's); x_memory_bandwidth (bytes scanned/s
//                               over memory/read's). Targets (issue 6): x_faiss >= 1.0, x_memory_bandwidth >= 0.8.
// flat/batch64/{trinity,faiss}  64 queries at once, top-1; target x_faiss >= 0.8.
// memory/read                   the ceiling: the same 307 MB read once, by as many threads as the index uses.
// hnsw/search                   trinity's hnsw_index (hnswlib) on 100,000 x 768 clustered vectors: counters
//                               recall_at_1 (against the exact flat index) and queries/s; target recall >= 0.95
//                               at >= 10,000 queries/s.
// prefix/match                  the prefix cache's longest-prefix match: tokens/s; target >= 5 million.
// The context names the BLAS that FAISS links (Debian's default is the netlib reference BLAS).

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>
#include <trinity/cache/prefix_cache.hpp>
#include <trinity/units/literals.hpp>

#ifdef TRINITY_BENCH_FAISS
#include <faiss/IndexFlat.h>
#endif

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace trinity;
using namespace trinity::literals;

namespace {

const std::size_t rows = bench::sized<std::size_t>(100'000, 4'000);
constexpr std::size_t dim = 768;

const std::vector<float>& base_vectors() {
  static const std::vector<float> v = [] {
    std::vector<float> x(rows * dim);
    std::mt19937_64 gen(1);
    std::normal_distribution<float> normal(0, 1);
    for (auto& f : x) f = normal(gen);
    return x;
  }();
  return v;
}

std::vector<float> queries(std::size_t n, std::uint64_t seed) {
  std::vector<float> q(n * dim);
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0, 1);
  for (auto& f : q) f = normal(gen);
  return q;
}

const cache::flat_index& trinity_flat() {
  static const cache::flat_index index = [] {
    cache::flat_index i(dim, {.measure = cache::metric::inner_product});
    i.reserve(rows);
    const auto& v = base_vectors();
    for (std::size_t r = 0; r < rows; ++r) i.add(r, std::span<const float>(&v[r * dim], dim));
    return i;
  }();
  return index;
}

using bench::rates;

// Runs f per iteration and records its rate; sets x_<peer> when the peer already ran.
template <class F>
void timed(benchmark::State& state, const std::string& name, const std::string& peer, std::size_t items, F f) {
  bench::timed_against(state, name, peer, peer.substr(peer.rfind('/') + 1), [&](std::size_t) { f(); });
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(items));
}

void bm_memory_read(benchmark::State& state) {
  const auto& v = base_vectors();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto set = cache::detail::best_isa();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::vector<std::thread> pool;
    std::vector<float> sums(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::size_t a = v.size() * t / threads, b = v.size() * (t + 1) / threads;
        sums[t] = cache::detail::dot(set, &v[a], &v[a], b - a);  // every float read once from memory
      });
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(sums.data());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rates()["memory/read"] =
      static_cast<double>(v.size() * sizeof(float)) * static_cast<double>(state.iterations()) / seconds;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(v.size() * sizeof(float)));
  state.counters["threads"] = threads;
}

#ifdef TRINITY_BENCH_FAISS
const faiss::IndexFlatIP& faiss_flat() {
  static const std::unique_ptr<faiss::IndexFlatIP> index = [] {
    auto i = std::make_unique<faiss::IndexFlatIP>(static_cast<faiss::Index::idx_t>(dim));
    i->add(static_cast<faiss::Index::idx_t>(rows), base_vectors().data());
    return i;
  }();
  return *index;
}

void bm_faiss(benchmark::State& state, std::size_t nq, const char* name) {
  const auto q = queries(nq, 2);
  std::vector<float> d(nq);
  std::vector<faiss::Index::idx_t> l(nq);
  const auto& index = faiss_flat();
  timed(state, name, "", nq, [&] {
    index.search(static_cast<faiss::Index::idx_t>(nq), q.data(), 1, d.data(), l.data());
    benchmark::DoNotOptimize(l.data());
  });
}
void bm_faiss_single(benchmark::State& state) { bm_faiss(state, 1, "flat/single/faiss"); }
void bm_faiss_batch(benchmark::State& state) { bm_faiss(state, 64, "flat/batch64/faiss"); }
#endif

void bm_trinity(benchmark::State& state, std::size_t nq, const char* name, const char* peer) {
  const auto q = queries(nq, 2);
  const auto& index = trinity_flat();
  timed(state, name, peer, nq, [&] { benchmark::DoNotOptimize(index.search_batch(q, 1)); });
  if (nq == 1 && rates().contains("memory/read"))
    state.counters["x_memory_bandwidth"] =
        rates()[name] * static_cast<double>(rows * dim * sizeof(float)) / rates()["memory/read"];
#ifdef TRINITY_BENCH_FAISS
  // The same answers as FAISS: same top-1 for every query.
  std::vector<float> d(nq);
  std::vector<faiss::Index::idx_t> l(nq);
  faiss_flat().search(static_cast<faiss::Index::idx_t>(nq), q.data(), 1, d.data(), l.data());
  const auto mine = index.search_batch(q, 1);
  std::size_t same = 0;
  for (std::size_t i = 0; i < nq; ++i) same += mine[i][0].id == static_cast<std::uint64_t>(l[i]);
  state.counters["same_top1_as_faiss"] = static_cast<double>(same) / static_cast<double>(nq);
#endif
}
void bm_trinity_single(benchmark::State& state) { bm_trinity(state, 1, "flat/single/trinity", "flat/single/faiss"); }
void bm_trinity_batch(benchmark::State& state) { bm_trinity(state, 64, "flat/batch64/trinity", "flat/batch64/faiss"); }

// 100,000 vectors around 1,000 centres (prompt embeddings cluster by topic), queries near the same centres; the
// graph is built once (counter build_s) and searched at several ef, on every core (search_batch).
struct hnsw_fixture {
  const std::size_t centres = bench::sized<std::size_t>(1000, 40), nq = bench::sized<std::size_t>(4000, 200);
  std::vector<float> q;
  std::unique_ptr<cache::hnsw_index> index;
  std::vector<std::vector<neighbour>> truth;
  double build_s = 0;

  hnsw_fixture() {
    std::mt19937_64 gen(5);
    std::normal_distribution<float> normal(0, 1);
    std::vector<float> c(centres * dim);
    for (auto& f : c) f = normal(gen);
    auto around = [&](std::size_t n) {
      std::vector<float> v(n * dim);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = gen() % centres;
        for (std::size_t j = 0; j < dim; ++j) v[i * dim + j] = c[k * dim + j] + 0.6f * normal(gen);
      }
      return v;
    };
    const auto data = around(rows);
    q = around(nq);
    index = std::make_unique<cache::hnsw_index>(
        dim, cache::hnsw_options{.m = 16, .ef_construction = 100, .initial_capacity = rows});
    const auto b0 = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < rows; ++r) index->add(r, std::span<const float>(&data[r * dim], dim));
    build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
    cache::flat_index exact(dim);
    exact.reserve(rows);
    for (std::size_t r = 0; r < rows; ++r) exact.add(r, std::span<const float>(&data[r * dim], dim));
    truth = exact.search_batch(q, 1);
  }
};

void bm_hnsw(benchmark::State& state) {
  static hnsw_fixture f;
  f.index->set_ef_search(static_cast<std::size_t>(state.range(0)));
  std::size_t right = 0, done = 0;
  for (auto _ : state) {
    const auto r = f.index->search_batch(f.q, 1);
    for (std::size_t i = 0; i < r.size(); ++i) right += r[i][0].id == f.truth[i][0].id;
    done += r.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(done));
  state.counters["recall_at_1"] = static_cast<double>(right) / static_cast<double>(done);
  state.counters["build_s"] = f.build_s;
}

void bm_prefix_match(benchmark::State& state) {
  const std::size_t sequences = bench::sized<std::size_t>(2000, 100), length = 2048;
  cache::prefix_cache kv({.block_tokens = 16, .block_size = 1_MiB, .capacity = bytes{1e15}});
  std::mt19937_64 gen(3);
  std::vector<std::vector<cache::token>> seqs(sequences, std::vector<cache::token>(length));
  for (std::size_t s = 0; s < sequences; ++s) {
    // Sequences share a system prompt of 512 tokens, then diverge.
    for (std::size_t t = 0; t < length; ++t)
      seqs[s][t] = t < 512 ? static_cast<cache::token>(t) : static_cast<cache::token>(gen());
    auto held = kv.insert(s % 4, seqs[s]);
  }
  std::size_t i = 0, tokens = 0;
  for (auto _ : state) {
    auto m = kv.match(i % 4, seqs[i]);
    tokens += m.tokens();
    i = (i + 7) % sequences;
  }
  state.counters["tokens_per_second"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(bm_memory_read)->Name("memory/read")->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef TRINITY_BENCH_FAISS
BENCHMARK(bm_faiss_single)->Name("flat/single/faiss")->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
BENCHMARK(bm_trinity_single)->Name("flat/single/trinity")->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef TRINITY_BENCH_FAISS
BENCHMARK(bm_faiss_batch)->Name("flat/batch64/faiss")->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
BENCHMARK(bm_trinity_batch)->Name("flat/batch64/trinity")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_hnsw)->Name("hnsw/search")->Arg(16)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_prefix_match)->Name("prefix/match")->UseRealTime();

int main(int argc, char** argv) {
  std::error_code ec;
  const auto blas = std::filesystem::canonical("/usr/lib/x86_64-linux-gnu/libblas.so.3", ec);
  benchmark::AddCustomContext("faiss_blas", ec ? std::string("unknown") : blas.string());
#ifndef TRINITY_BENCH_FAISS
  benchmark::AddCustomContext("faiss", "not built: install libfaiss-dev (scripts/setup.sh) for the comparison");
#endif
  return trinity::bench::run(argc, argv);
}
