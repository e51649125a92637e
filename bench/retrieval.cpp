// trinity-bench-retrieval: the IVF, IVF-PQ and HNSW indexes, untiered and on tiers, beside FAISS's IndexIVFFlat,
// IndexIVFPQ (with exact re-ranking) and IndexHNSWFlat, in one run, on the same SYNTHETIC vectors (200,000 x 64
// fp32 in 256 clusters: each point a centre uniform in [-1, 1]^64 plus uniform noise of ±0.35; queries drawn the
// same way), one query at a time.
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
// ivf/nprobeN/faiss-pq FAISS IndexIVFPQ (the same 1,024 lists, 16 bytes a vector: 16 parts of 256 codes, on
//                      residuals) behind an IndexRefineFlat re-ranking the 100 best by exact distance (k_factor 10).
// ivf/nprobeN/pq       retrieval::tiered_ivf_pq: the same shape (16-byte codes of residuals, 100 re-ranked), the
//                      codes in a fast tier, the vectors in a capacity tier. Counters: recall_at_10, x_faiss-pq,
//                      fast_tier_bytes_per_query and capacity_tier_bytes_per_query.
// hnsw/faiss/EF        FAISS IndexHNSWFlat (M 16, efConstruction 100) searching with efSearch EF.
// hnsw/trinity/EF      retrieval::hnsw_index (hnswlib's graph, M 16, ef_construction 100) at ef EF. Counters:
//                      recall_at_10, x_faiss.
// hnsw/tiered/EF       retrieval::tiered_hnsw: the upper layers and the bottom layer's nodes most visited per byte
//                      (measured on other queries) in a fast tier of a tenth of the graph's bytes, the rest in a
//                      capacity tier. Counters: recall_at_10 (the untiered search's), fast_tier_share,
//                      x_untiered.
// ivf/recall/N         retrieval::ivf_index's recall_at_10 at nprobe N, and probe_share (N over the lists): the
//                      curve the rag-serve planner reads a recall target from (plan/detail/measured_curves.hpp,
//                      generated from bench/results/ivf-recall-ci.json, which this filter writes:
//                        trinity-bench-retrieval --benchmark_filter='ivf/(pq-)?recall' --benchmark_format=json).
// ivf/pq-recall/N      retrieval::tiered_ivf_pq's (16-byte codes, 100 re-ranked) at nprobe N: the planner's curve
//                      for an ivf-pq index, with code_bytes_per_dimension and rerank_per_hit, the shape it holds for.
// hnsw/recall/EF       retrieval::tiered_hnsw's (the graph of hnsw/trinity) recall_at_10 at ef EF, and what a query
//                      reads: vectors_per_query (scored), link_lists_per_query (nodes expanded), link_bytes_per_list,
//                      and the graph's link_bytes_per_node at its m: the planner's curve for an hnsw index
//                      (plan/detail/measured_curves.hpp, generated from bench/results/hnsw-recall-ci.json:
//                        trinity-bench-retrieval --benchmark_filter='hnsw/recall' --benchmark_format=json).

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <trinity/detail/splitmix.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/hnsw/hnsw_index.hpp>
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/synthetic.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>
#include <trinity/retrieval/hnsw/tiered_hnsw.hpp>
#include <trinity/retrieval/tiered_ivf_pq.hpp>

#ifdef TRINITY_BENCH_FAISS
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexRefine.h>
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
const std::size_t pq_parts = 16, pq_rerank = 100;
const std::size_t hnsw_m = 16, hnsw_construction = 100;

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

// One FAISS index's queries, one at a time, as it is set: queries/s under `name`, and recall@10.
void faiss_queries(benchmark::State& state, const faiss::Index& index, const std::string& name) {
  std::vector<float> d(10);
  std::vector<faiss::Index::idx_t> l(10);
  timed(state, name, "", "", [&](std::size_t i) {
    index.search(1, query(i).data(), 10, d.data(), l.data());
    benchmark::DoNotOptimize(l.data());
  });
  state.counters["recall_at_10"] = recall([&](std::size_t q) {
    index.search(1, query(q).data(), 10, d.data(), l.data());
    return std::vector<std::uint64_t>(l.begin(), l.end());
  });
}

// IndexIVFPQ owns nothing it is given; the refine wrapper is handed its base index and owns that.
faiss::IndexRefineFlat& faiss_pq() {
  static faiss::IndexFlatL2 quantizer(static_cast<faiss::Index::idx_t>(dim));
  static const std::unique_ptr<faiss::IndexRefineFlat> index = [] {
    auto* ivf = new faiss::IndexIVFPQ(&quantizer, dim, lists, pq_parts, 8, faiss::METRIC_L2);
    auto r = std::make_unique<faiss::IndexRefineFlat>(ivf);
    r->own_fields = true;
    r->k_factor = static_cast<float>(pq_rerank) / 10.0f;
    r->train(static_cast<faiss::Index::idx_t>(rows), base().data());
    r->add(static_cast<faiss::Index::idx_t>(rows), base().data());
    return r;
  }();
  return *index;
}

void bm_faiss_pq(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  auto& index = faiss_pq();
  dynamic_cast<faiss::IndexIVFPQ&>(*index.base_index).nprobe = nprobe;
  faiss_queries(state, index, name_of("faiss-pq", nprobe));
}

faiss::IndexHNSWFlat& faiss_hnsw() {
  static const std::unique_ptr<faiss::IndexHNSWFlat> index = [] {
    auto i = std::make_unique<faiss::IndexHNSWFlat>(static_cast<int>(dim), static_cast<int>(hnsw_m));
    i->hnsw.efConstruction = static_cast<int>(hnsw_construction);
    i->add(static_cast<faiss::Index::idx_t>(rows), base().data());
    return i;
  }();
  return *index;
}

void bm_faiss_hnsw(benchmark::State& state) {
  const auto ef = static_cast<std::size_t>(state.range(0));
  auto& index = faiss_hnsw();
  index.hnsw.efSearch = static_cast<int>(ef);
  faiss_queries(state, index, "hnsw/ef" + std::to_string(ef) + "/faiss");
}

void bm_faiss(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  auto& index = faiss_ivf();
  index.nprobe = nprobe;
  faiss_queries(state, index, name_of("faiss", nprobe));
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

// Built once: Google Benchmark calls a benchmark again as it grows the iterations.
retrieval::tiered_ivf_pq& trinity_pq() {
  static place::tier_resource fast("fast", bytes{static_cast<double>(rows * (pq_parts + 8))}),
      capacity("capacity", bytes{static_cast<double>(rows * (dim + 1) * 4)});
  static retrieval::tiered_ivf_pq pq(trinity_ivf(), pq_parts, points(std::min<std::size_t>(rows, 50'000), 4),
                                     {&fast, &capacity});
  return pq;
}

void bm_pq(benchmark::State& state) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  auto& pq = trinity_pq();
  pq.reset_traffic();
  timed(state, name_of("pq", nprobe), name_of("faiss-pq", nprobe), "faiss-pq",
        [&](std::size_t i) { benchmark::DoNotOptimize(pq.search(query(i), 10, nprobe, pq_rerank).data()); });
  const auto& t = pq.traffic();
  state.counters["fast_tier_bytes_per_query"] = t.bytes[0] / static_cast<double>(t.queries);
  state.counters["capacity_tier_bytes_per_query"] = t.bytes[1] / static_cast<double>(t.queries);
  state.counters["recall_at_10"] =
      recall([&](std::size_t q) { return ids(pq.search(query(q), 10, nprobe, pq_rerank)); });
}

const retrieval::hnsw_index& trinity_hnsw() {
  static const auto index = [] {
    auto i = std::make_unique<retrieval::hnsw_index>(
        dim, retrieval::hnsw_options{.m = hnsw_m, .ef_construction = hnsw_construction});
    i->add(base(), 0);
    return i;
  }();
  return *index;
}

void bm_hnsw(benchmark::State& state) {
  const auto ef = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_hnsw();
  const std::string at = "hnsw/ef" + std::to_string(ef);
  timed(state, at + "/trinity", at + "/faiss", "faiss",
        [&](std::size_t i) { benchmark::DoNotOptimize(index.search(query(i), 10, ef).data()); });
  state.counters["recall_at_10"] = recall([&](std::size_t q) { return ids(index.search(query(q), 10, ef)); });
}

void bm_tiered_hnsw(benchmark::State& state) {
  const auto ef = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_hnsw();
  static place::tier_resource fast("fast", bytes{static_cast<double>(rows) * (dim * 4 + 200)}),
      capacity("capacity", bytes{static_cast<double>(rows) * (dim * 4 + 200)});
  static retrieval::tiered_hnsw tiered(index, {&fast, &capacity});
  std::size_t all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) all += tiered.node_bytes(v);
  tiered.place(tiered.visit_frequency(points(query_count, 3), 10, ef), all / 10);
  tiered.reset_traffic();
  const std::string at = "hnsw/ef" + std::to_string(ef);
  timed(state, at + "/tiered", at + "/trinity", "untiered",
        [&](std::size_t i) { benchmark::DoNotOptimize(tiered.search(query(i), 10, ef).data()); });
  const auto& t = tiered.traffic();
  state.counters["fast_tier_share"] = t.bytes[0] / (t.bytes[0] + t.bytes[1]);
  state.counters["recall_at_10"] = recall([&](std::size_t q) { return ids(tiered.search(query(q), 10, ef)); });
}

// Recall alone: one pass over the queries with an exact answer at nprobe range(0), timed as a whole.
template <class Search>
void recall_sweep(benchmark::State& state, Search&& search) {
  const auto nprobe = static_cast<std::size_t>(state.range(0));
  double r = 0;
  for (auto _ : state) r = recall([&](std::size_t q) { return ids(search(query(q), nprobe)); });
  state.counters["recall_at_10"] = r;
  state.counters["probe_share"] = static_cast<double>(nprobe) / static_cast<double>(trinity_ivf().lists());
}

void bm_recall(benchmark::State& state) {
  recall_sweep(state, [](std::span<const float> q, std::size_t nprobe) { return trinity_ivf().search(q, 10, nprobe); });
}

// IVF-PQ's: its codes' bytes a dimension and the vectors re-ranked a hit are the shape the curve holds for.
void bm_pq_recall(benchmark::State& state) {
  recall_sweep(state, [](std::span<const float> q, std::size_t nprobe) {
    return trinity_pq().search(q, 10, nprobe, pq_rerank);
  });
  state.counters["code_bytes_per_dimension"] = static_cast<double>(pq_parts) / static_cast<double>(dim);
  state.counters["rerank_per_hit"] = static_cast<double>(pq_rerank) / 10.0;
}

// HNSW's: what a query reads at ef, beside its recall, on the graph every other hnsw run searches.
void bm_hnsw_recall(benchmark::State& state) {
  const auto ef = static_cast<std::size_t>(state.range(0));
  const auto& index = trinity_hnsw();
  place::tier_resource fast("fast", bytes{static_cast<double>(rows) * (dim * 4 + 200)}),
      capacity("capacity", bytes{static_cast<double>(rows) * (dim * 4 + 200)});
  retrieval::tiered_hnsw tiered(index, {&fast, &capacity});
  double links = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) links += static_cast<double>(tiered.node_bytes(v) - dim * 4);
  double r = 0;
  for (auto _ : state) {
    tiered.reset_traffic();
    r = recall([&](std::size_t q) { return ids(tiered.search(query(q), 10, ef)); });
  }
  const auto& read = tiered.reads();
  const double searched = static_cast<double>(tiered.traffic().queries);
  state.counters["recall_at_10"] = r;
  state.counters["ef"] = static_cast<double>(ef);
  state.counters["m"] = static_cast<double>(hnsw_m);
  state.counters["vectors_per_query"] = (read.vectors[0] + read.vectors[1]) / searched;
  state.counters["link_lists_per_query"] = (read.lists[0] + read.lists[1]) / searched;
  state.counters["link_bytes_per_list"] = (read.list_bytes[0] + read.list_bytes[1]) / (read.lists[0] + read.lists[1]);
  state.counters["link_bytes_per_node"] = links / static_cast<double>(tiered.nodes());
}

}  // namespace

#ifdef TRINITY_BENCH_FAISS
BENCHMARK(bm_faiss)->Name("ivf/faiss")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_faiss_pq)->Name("ivf/faiss-pq")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_faiss_hnsw)->Name("hnsw/faiss")->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();
#endif
BENCHMARK(bm_trinity)->Name("ivf/trinity")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_tiered)->Name("ivf/tiered")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_pq)->Name("ivf/pq")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_hnsw)->Name("hnsw/trinity")->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_tiered_hnsw)->Name("hnsw/tiered")->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(bm_recall)
    ->Name("ivf/recall")
    ->RangeMultiplier(2)
    ->Range(1, 64)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_hnsw_recall)
    ->Name("hnsw/recall")
    ->Arg(10)
    ->RangeMultiplier(2)
    ->Range(16, 256)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bm_pq_recall)
    ->Name("ivf/pq-recall")
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
