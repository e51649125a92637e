// trinity-bench-retrieval: the IVF index, untiered and with its lists on tiers, beside FAISS's IndexIVFFlat, in
// one run, on the same SYNTHETIC vectors (200,000 x 64 fp32 in 256 clusters: each point a
// centre uniform in [-1, 1]^64 plus uniform noise of ±0.35; queries drawn the same way), one query at a time.
//
//   build/bin/trinity-bench-retrieval --benchmark_format=json
//
// ivf/nprobeN/faiss    FAISS IndexIVFFlat (L2, 1,024 lists of its own k-means) scanning N lists a query.
// ivf/nprobeN/trinity  retrieval::ivf_index (1,024 lists of its k-means) scanning N lists. Counters: recall_at_10
//                      (against the exact search over 200 queries), queries_per_second, x_faiss (its queries/s
//                      over FAISS's at the same nprobe).
// ivf/nprobeN/tiered   retrieval::tiered_ivf: the lists most probed per byte (measured on other queries) in a
//                      fast tier a tenth the size of the lists, the rest in a capacity tier, both host memory
//                      here. Counters: recall_at_10 (the untiered search's: placement changes no result),
//                      fast_tier_share (of the bytes read), x_untiered (its queries/s over the untiered index's).
// ivf/recall/N         retrieval::ivf_index's recall_at_10 at nprobe N, and probe_share (N over the lists): the
//                      curve the rag-serve planner reads a recall target from (plan/detail/measured_curves.hpp,
//                      generated from bench/results/ivf-recall-ci.json, which this filter writes:
//                        trinity-bench-retrieval --benchmark_filter=ivf/recall --benchmark_format=json).

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/detail/splitmix.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/synthetic.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>

#ifdef TRINITY_BENCH_FAISS
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#endif

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace trinity;

const std::size_t dim = 64;
const std::size_t rows = bench::sized<std::size_t>(200'000, 8'000);
const std::size_t lists = bench::sized<std::size_t>(1024, 64);
const std::size_t query_count = bench::sized<std::size_t>(500, 50);

std::vector<float> points(std::size_t n, std::uint64_t seed) { return retrieval::clustered_vectors(n, dim, seed); }
const std::vector<float>& base() {
  static const auto v = points(rows, 1);
  return v;
}
const std::vector<float>& queries() {
  static const auto q = points(query_count, 2);
  return q;
}
std::span<const float> query(std::size_t i) {
  return std::span<const float>(queries()).subspan((i % query_count) * dim, dim);
}
// The exact 10 nearest of the first 200 queries (fewer in quick mode).
const std::vector<std::vector<neighbour>>& truth() {
  static const auto t = [] {
    std::vector<std::vector<neighbour>> out;
    for (std::size_t q = 0; q < std::min<std::size_t>(200, query_count); ++q)
      out.push_back(retrieval::exact_search(base(), dim, query(q), 10));
    return out;
  }();
  return t;
}
template <class Ids>
double recall(Ids&& ids_of) {
  double found = 0;
  for (std::size_t q = 0; q < truth().size(); ++q) {
    const auto got = ids_of(q);
    for (const auto& t : truth()[q])
      for (const auto id : got) found += id == t.id;
  }
  return found / static_cast<double>(10 * truth().size());
}

const retrieval::ivf_index& trinity_ivf() {
  static const auto index = [] {
    retrieval::ivf_index i(dim, {.lists = lists});
    i.train(base());
    i.add(base(), 0);
    return i;
  }();
  return index;
}

// Runs one query per iteration and records queries/s; x_<label> when the peer already ran.
template <class F>
void timed(benchmark::State& state, const std::string& name, const std::string& peer, const std::string& label, F f) {
  state.counters["queries_per_second"] = bench::timed_against(state, name, peer, label, f);
}
std::string name_of(const char* kind, std::size_t nprobe) { return "ivf/nprobe" + std::to_string(nprobe) + "/" + kind; }

#ifdef TRINITY_BENCH_FAISS
faiss::IndexIVFFlat& faiss_ivf() {
  static faiss::IndexFlatL2 quantizer(static_cast<faiss::Index::idx_t>(dim));
  static const std::unique_ptr<faiss::IndexIVFFlat> index = [] {
    auto i = std::make_unique<faiss::IndexIVFFlat>(&quantizer, dim, lists, faiss::METRIC_L2);
    i->train(static_cast<faiss::Index::idx_t>(rows), base().data());
    i->add(static_cast<faiss::Index::idx_t>(rows), base().data());
    return i;
  }();
  return *index;
}

void bm_faiss(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  auto& index = faiss_ivf();
  index.nprobe = nprobe;
  std::vector<float> d(10);
  std::vector<faiss::Index::idx_t> l(10);
  timed(state, name_of("faiss", nprobe), "", "", [&](std::size_t i) {
    index.search(1, query(i).data(), 10, d.data(), l.data());
    benchmark::DoNotOptimize(l.data());
  });
  state.counters["recall_at_10"] = recall([&](std::size_t q) {
    index.search(1, query(q).data(), 10, d.data(), l.data());
    return std::vector<std::uint64_t>(l.begin(), l.end());
  });
}
#endif

std::vector<std::uint64_t> ids(const std::vector<neighbour>& hits) {
  std::vector<std::uint64_t> out;
  for (const auto& h : hits) out.push_back(h.id);
  return out;
}

void bm_trinity(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_ivf();
  timed(state, name_of("trinity", nprobe), name_of("faiss", nprobe), "faiss",
        [&](std::size_t i) { benchmark::DoNotOptimize(index.search(query(i), 10, nprobe).data()); });
  state.counters["recall_at_10"] = recall([&](std::size_t q) { return ids(index.search(query(q), 10, nprobe)); });
}

void bm_tiered(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_ivf();
  std::size_t all = 0;
  for (std::size_t l = 0; l < index.lists(); ++l) all += index.list_bytes(l);
  place::tier_resource fast("fast", bytes{static_cast<double>(all)}), capacity("capacity", bytes{2.0 * all});
  retrieval::tiered_ivf tiered(index, {&fast, &capacity});
  tiered.place(retrieval::probe_frequency(index, points(query_count, 3), nprobe), index.centroid_bytes() + all / 10);
  timed(state, name_of("tiered", nprobe), name_of("trinity", nprobe), "untiered",
        [&](std::size_t i) { benchmark::DoNotOptimize(tiered.search(query(i), 10, nprobe).data()); });
  const auto& t = tiered.traffic();
  state.counters["fast_tier_share"] = t.bytes[0] / (t.bytes[0] + t.bytes[1]);
  state.counters["recall_at_10"] = recall([&](std::size_t q) { return ids(tiered.search(query(q), 10, nprobe)); });
}

// Recall alone: one pass over the queries with an exact answer, timed as a whole.
void bm_recall(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_ivf();
  double r = 0;
  for (auto _ : state) r = recall([&](std::size_t q) { return ids(index.search(query(q), 10, nprobe)); });
  state.counters["recall_at_10"] = r;
  state.counters["probe_share"] = static_cast<double>(nprobe) / static_cast<double>(index.lists());
}

}  // namespace

#ifdef TRINITY_BENCH_FAISS
BENCHMARK(bm_faiss)->Name("ivf/faiss")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
#endif
BENCHMARK(bm_trinity)->Name("ivf/trinity")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_tiered)->Name("ivf/tiered")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_recall)
    ->Name("ivf/recall")
    ->RangeMultiplier(2)
    ->Range(1, 64)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
#ifndef TRINITY_BENCH_FAISS
  benchmark::AddCustomContext("faiss", "not built: install libfaiss-dev (scripts/setup.sh) for the comparison");
#endif
  return trinity::bench::run(argc, argv);
}
