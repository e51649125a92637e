#pragma once
//! \file
//! Planning retrieval-augmented generation (the CXL report's §5.2 RAG case): each query searches an IVF-Flat
//! index of the corpus (or an IVF-PQ one, an HNSW graph, or a flat scan) for its top-k chunks, and the LLM answers
//! a prompt lengthened by them. What the planner chooses, and what each choice trades:
//!  - nprobe, the lists a query scans: compute and bandwidth for recall, against the workload's target (read from
//!    a measured recall curve by the share of lists probed); for an HNSW graph, ef, the candidates its walk keeps
//!    (recall and the vectors and link lists a walk reads, from the measured ef curve);
//!  - where the lists live: all in each device's memory, sharded over the scale-up domain's memory (read over
//!    the interconnect), or a share of the most probed in device memory and the rest in one of the system's
//!    capacity tiers (host memory, a CXL pool): bandwidth and latency for memory. An IVF-PQ index keeps its
//!    codes in device memory and places its full vectors so; a query scans codes and reads only the `rerank`
//!    vectors it ranks exactly, each one random access where it lives (retrieval/tiered_ivf_pq.hpp). An HNSW
//!    graph's nodes (a vector and its link lists) are placed so, a hot share in device memory: every vector and
//!    list a walk reads is one dependent random access where its node lives (retrieval/hnsw/tiered_hnsw.hpp), and
//!    reads fall on the hot nodes in proportion to their share (no node is assumed more visited than another);
//!  - the LLM's replica (plan/serving.hpp's planner, on the lengthened prompt), whose weights and KV take device
//!    memory from the index.
//! Per query (model/vector_index.hpp): the centroids and hot lists from the fast tier, the rest from where they
//! live, each list one random access then a stream; distances at the device's fp32 rate. The query's latency is
//! its search, the LLM's time to first token and its decode; it keeps up when the device-seconds of search and
//! decode, times the query rate, fit the system's devices, and the pool's bytes per second fit its links.
//! The plan also prices its own placement with the pool reached over RDMA instead (the report's baseline):
//! plan/pool_access.hpp.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/vector_index.hpp>
#include <trinity/model/zipf.hpp>
#include <trinity/plan/detail/measured_curves.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/pool_access.hpp>
#include <trinity/plan/rag_workload.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct rag_plan {
  std::size_t nprobe = 1;  //!< the lists a query scans; an HNSW graph's: its walk's ef
  list_home home = list_home::replicated;
  std::size_t pool = 0;  //!< pooled: the tier the lists that are not hot live in
  double hot_share = 1;  //!< pooled: the share of the lists (the most probed) kept in device memory
  //! The share of the index each device keeps in its own memory: all of it replicated, none sharded (each reads
  //! the others' over the interconnect), the hot share pooled.
  [[nodiscard]] double device_share() const {
    return home == list_home::replicated ? 1.0 : home == list_home::sharded ? 0.0 : hot_share;
  }
  friend bool operator==(const rag_plan&, const rag_plan&) = default;
};

//! An IVF plan's lists in device memory: its device share of them, whole lists.
inline std::size_t hot_lists(const rag_workload& w, const rag_plan& p) {
  return static_cast<std::size_t>(std::floor(p.device_share() * static_cast<double>(w.list_count())));
}

struct rag_cost {
  double recall = 0;
  model::search_traffic traffic;  //!< per query: [0] device memory, [1] the interconnect or the pool
  seconds search{}, ttft{}, decode{};
  flops search_flops{};
  double devices_busy = 0;        //!< devices the query rate keeps busy (search and the LLM)
  bytes_per_second pool_rate{};   //!< what the query rate reads from the pool or the other devices
  bytes_per_second pool_limit{};  //!< what the system's links to them carry
  std::vector<bytes> tier_bytes;  //!< per device
  resource_vector total;          //!< per query: FLOPs, pool bytes, device bytes, energy, latency
  double dollars = 0;             //!< per query
};

namespace detail {

//! Expected lists a query probes among the `hot` most popular and among the rest, when each of `nprobe` probes
//! picks list r with weight r^-s and a list is probed at most once (its probability capped at 1).
inline std::array<double, 2> probes_split(std::size_t lists, std::size_t nprobe, std::size_t hot, double s) {
  const double L = static_cast<double>(lists), n = static_cast<double>(nprobe), H = static_cast<double>(hot);
  const double total = model::zipf_sum(1, L, s);
  // The lists certain to be probed: the first R, those with n·r^-s / total ≥ 1.
  const double R = s == 0 ? (n >= L ? L : 0) : std::min(L, std::floor(std::pow(n / total, 1 / s)));
  const double scale = n / total;
  const double hot_probes = std::min(H, R) + (H > R ? scale * model::zipf_sum(R + 1, H, s) : 0.0);
  const double cold_probes = std::max(0.0, R - H) + scale * model::zipf_sum(std::max(H, R) + 1, L, s);
  return {std::min(hot_probes, H), std::min(cold_probes, L - H)};
}

//! "25%", "0.1%": a share as a reader reads it.
inline std::string share(double v) { return units::detail::format_number(v * 100) + "%"; }

//! Recall at a share of the lists probed: the curve interpolated in log share; past its last point, that point's
//! recall (and 1 at every list: the scan is then exact); before its first, none (the curve does not say).
inline std::optional<double> recall_at(const std::vector<recall_point>& curve, double share) {
  if (share >= 1) return 1.0;
  if (share < curve.front().probe_share * (1 - 1e-12)) return std::nullopt;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    const auto &a = curve[i - 1], &b = curve[i];
    if (share <= b.probe_share) {
      const double t = std::log(share / a.probe_share) / std::log(b.probe_share / a.probe_share);
      return a.recall + t * (b.recall - a.recall);
    }
  }
  return curve.back().recall;
}

}  // namespace detail

//! The LLM's chosen replica on the lengthened prompt: what each RAG plan answers with.
struct rag_llm {
  serving_plan plan;
  serving_cost cost;
  std::string described;
};

//! The LLM's replicas a RAG plan may answer with, best first: the serving planner's plans for the lengthened
//! prompt that fit, without a prefix cache (retrieved chunks differ from query to query), whose replicas alone
//! keep up with the query rate on the system's devices (a plan's search adds device-time, never takes it away),
//! ordered by a query's share of the objective: for time, the answer (first token and decode); else the energy or
//! dollars a token. Where none keeps up, the serving planner's own choice alone, and the plan's query-rate check
//! says so.
inline std::vector<rag_llm> rag_llm_choices(const system& s, const rag_workload& w, const planner_options& o) {
  const auto r = plan_serving(s, w.answering(), o);
  const double devices = static_cast<double>(s.device.count);
  const auto per_query = [&](const serving_cost& c) {
    return o.objective == objective::time ? (c.ttft_batch + w.llm.output_tokens * c.tpot).value()
                                          : detail::score(c, o.objective);
  };
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& e = r.candidates[i];
    if (e.fits() && e.plan.cache == bytes{} &&
        w.queries_per_second * w.llm.output_tokens / e.cost.tokens_per_second <= devices)
      keep.push_back(i);
  }
  std::stable_sort(keep.begin(), keep.end(), [&](std::size_t a, std::size_t b) {
    return per_query(r.candidates[a].cost) < per_query(r.candidates[b].cost);
  });
  if (keep.empty()) keep.push_back(r.choice);
  std::vector<rag_llm> out;
  for (const auto i : keep)
    out.push_back({r.candidates[i].plan, r.candidates[i].cost, describe(r.candidates[i].plan, s, r.codecs)});
  return out;
}

//! The LLM replica a RAG plan answers with when the placement is planned apart: rag_llm_choices' first.
inline rag_llm plan_rag_llm(const system& s, const rag_workload& w, const planner_options& o) {
  return rag_llm_choices(s, w, o).front();
}

//! How a plan's second tier is read: the interconnect to the other devices' memory, or the pool's tier.
inline model::tier_access second_tier_access(const system& s, const rag_plan& p) {
  const auto& hbm = s.tiers.front();
  if (p.home == list_home::sharded)
    return {s.interconnect.latency + hbm.latency, std::min(s.interconnect.bandwidth, hbm.bandwidth)};
  if (p.home == list_home::pooled) return {s.tiers.at(p.pool).latency, s.tiers.at(p.pool).bandwidth};
  return {hbm.latency, hbm.bandwidth};
}

//! One query's search: its recall, bytes and reads per tier, distance FLOPs and time.
struct rag_search {
  double recall = 0;
  model::search_traffic traffic;  //!< [0] device memory, [1] the interconnect or the pool
  flops distance_flops{};
  seconds time{};
};

//! The search of plan `p`, its second tier read as `second` (second_tier_access, or rdma_pool_access): the
//! centroids and the hot lists' probes from device memory, the rest from the second tier, each list one random
//! access and a stream; the distances at the device's fp32 rate.
inline rag_search search_cost(const system& s, const rag_workload& w, const rag_plan& p,
                              const model::tier_access& second) {
  const std::size_t L = w.list_count();
  const double list = w.list_bytes().value();
  rag_search q;
  const model::tier_access tiers[] = {{s.tiers.front().latency, s.tiers.front().bandwidth}, second};
  if (w.graph()) {
    // As retrieval::tiered_hnsw reads: each vector the walk scores and each link list it reads, one random access
    // where its node lives; the hot nodes take their share of the reads.
    const auto walk = hnsw_walk_at(p.nprobe);
    const double h = p.device_share();
    const double read = walk.vectors * 4.0 * static_cast<double>(w.dimension) +
                        walk.lists * detail::hnsw_link_bytes_per_list,
                 reads = walk.vectors + walk.lists;
    q.recall = walk.recall;
    q.traffic = {{h * read, (1 - h) * read}, {h * reads, (1 - h) * reads}};
    q.distance_flops = flops{2.0 * static_cast<double>(w.dimension) * walk.vectors};
    q.time = model::search_time(q.traffic, tiers) + q.distance_flops / s.device.rate("fp32");
    return q;
  }
  q.recall = detail::recall_at(w.recall_curve, static_cast<double>(p.nprobe) / static_cast<double>(L)).value_or(0);
  const std::size_t hot = hot_lists(w, p);
  const auto probes = detail::probes_split(L, p.nprobe, hot, w.probe_skew);
  const double d = static_cast<double>(w.dimension), probed = probes[0] + probes[1];
  if (w.product_quantized()) {
    // As retrieval::tiered_ivf_pq reads: the centroids and codebooks, each probed list's codes and the kept ids from
    // device memory; then each kept vector, one random access where its list lives (a hot list's in device memory).
    const double m = static_cast<double>(w.code_size()), scanned = probed * w.list_vectors();
    const double kept = std::min(static_cast<double>(w.rerank_count()), scanned);
    const double hot_kept = probed > 0 ? kept * probes[0] / probed : 0.0, cold_kept = kept - hot_kept;
    const double vector = w.vector_bytes().value();
    q.traffic = {{w.centroid_bytes().value() + scanned * m + kept * 8.0 + hot_kept * vector, cold_kept * vector},
                 {2.0 + probed + hot_kept, cold_kept}};
    // The centroids' distances, a distance table a probed list (256 codewords of every part: a subtraction, a
    // multiply and an add a value, after the query's residual), a sum of m table entries a code, the exact re-rank.
    q.distance_flops = flops{2.0 * d * static_cast<double>(L) + probed * (3.0 * detail::pq_codewords * d + d) +
                             scanned * m + 2.0 * d * kept};
  } else {
    q.traffic = {{w.centroid_bytes().value() + probes[0] * list, probes[1] * list}, {1.0 + probes[0], probes[1]}};
    const double scanned = probed * list / w.vector_bytes().value();
    q.distance_flops = flops{2.0 * d * (static_cast<double>(L) + scanned)};
  }
  q.time = model::search_time(q.traffic, tiers) + q.distance_flops / s.device.rate("fp32");
  return q;
}

//! A plan's cost per query, its second tier read as `second` (second_tier_access, or rdma_pool_access).
inline rag_cost price(const system& s, const rag_workload& w, const rag_llm& llm, const rag_plan& p,
                      const model::tier_access& second) {
  const std::size_t L = w.list_count();
  const double devices = static_cast<double>(s.device.count);
  rag_cost c;
  const auto q = search_cost(s, w, p, second);
  c.recall = q.recall;
  c.traffic = q.traffic;
  c.search_flops = q.distance_flops;
  c.search = q.time;
  c.ttft = llm.cost.ttft_batch;  // a query arrives into the LLM's batch: its prefill is the batch's
  c.decode = w.llm.output_tokens * llm.cost.tpot;
  // Device-seconds a query takes: its search on one device, and its share of the replicas' decode.
  const seconds device_time = c.search + seconds{w.llm.output_tokens / llm.cost.tokens_per_second};
  c.devices_busy = w.queries_per_second * device_time.value();
  c.pool_rate = bytes_per_second{w.queries_per_second * c.traffic.bytes[1]};
  c.pool_limit = devices * (p.home == list_home::sharded ? s.interconnect.bandwidth : second.bandwidth);
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  // An HNSW graph keeps its hot share of the nodes; an IVF index whole lists.
  const bytes kept = (w.graph() ? p.device_share() : static_cast<double>(hot_lists(w, p))) * w.list_bytes();
  const bytes cold = w.list_bytes() * static_cast<double>(L) - kept;
  c.tier_bytes[0] = llm.cost.tier_bytes[0] + w.centroid_bytes() + w.corpus_vectors * w.code_bytes() + kept +
                    (p.home == list_home::sharded ? cold / devices : bytes{});
  // A pool holds one copy of the cold lists for every device: its share per device, as tiers count capacity.
  if (p.home == list_home::pooled) c.tier_bytes[p.pool] += cold / devices;
  c.total.time = c.search + c.ttft + c.decode;
  c.total.compute = c.search_flops + w.llm.output_tokens * llm.cost.total.compute;
  c.total.bandwidth = bytes{c.traffic.bytes[1]};
  c.total.memory = c.tier_bytes[0];
  c.total.energy =
      device_time * s.device.power + bytes{c.traffic.bytes[0]} * s.tiers.front().energy +
      bytes{c.traffic.bytes[1]} * (p.home == list_home::pooled    ? s.tiers[p.pool].energy
                                   : p.home == list_home::sharded ? s.interconnect.energy + s.tiers.front().energy
                                                                  : s.tiers.front().energy);
  c.dollars = dollars(s, device_time, c.tier_bytes, bytes{});
  return c;
}

inline rag_cost price(const system& s, const rag_workload& w, const rag_llm& llm, const rag_plan& p) {
  return price(s, w, llm, p, second_tier_access(s, p));
}

inline std::string describe(const rag_plan& p, const rag_workload& w, const system& s) {
  std::string d = w.index == "flat" ? std::string("exact scan")
                  : w.graph()
                      ? "ef " + std::to_string(p.nprobe) + " on an HNSW graph of degree " +
                            units::detail::format_number(detail::hnsw_m)
                      : "nprobe " + std::to_string(p.nprobe) + " of " + std::to_string(w.list_count()) + " lists";
  // An IVF-PQ index's codes stay in device memory; what the placement moves is its full vectors.
  const bool pq = w.product_quantized();
  if (pq)
    d += ", " + std::to_string(w.code_size()) + "-byte codes in " + s.tiers.front().name + ", " +
         std::to_string(w.rerank_count()) + " re-ranked";
  const std::string index = pq ? "vectors" : w.graph() ? "graph" : "index";
  switch (p.home) {
    case list_home::replicated:
      return d + ", " + index + " in every " + s.tiers.front().name;
    case list_home::sharded:
      return d + ", " + index + " sharded over " + std::to_string(s.device.count) + " x " + s.tiers.front().name +
             " (" + s.interconnect.name + ")";
    default:
      return d + ", " +
             (p.hot_share > 0 ? detail::share(p.hot_share) +
                                    (pq          ? " hottest lists' vectors in "
                                     : w.graph() ? " of the graph's nodes in "
                                                 : " hottest lists in ") +
                                    s.tiers.front().name + ", the rest in "
                              : index + " in ") +
             s.tiers[p.pool].name;
  }
}

using rag_evaluated = candidate<rag_plan, rag_cost>;
//! Pareto keys: latency, energy, device bytes, pool bytes a query, dollars.
using rag_plan_result = result<rag_plan, rag_cost>;

namespace detail {

struct rag_problem {
  struct probes {
    using spends = resources::bandwidth;
    using saves = resources::compute;
    static constexpr std::string_view name = "lists a query scans (nprobe)";
    static std::size_t& of(rag_plan& p) { return p.nprobe; }
  };
  struct home {
    using spends = resources::bandwidth;
    using saves = resources::memory;
    static constexpr std::string_view name = "where the index lives";
    static list_home& of(rag_plan& p) { return p.home; }
  };
  using slots = slot_list<probes, home>;
  using plan_type = rag_plan;
  using cost_type = rag_cost;
  static constexpr const char* time_word = "query latency";

  const system& s;
  const rag_workload& w;
  const planner_options& o;
  const rag_llm& llm;
  std::vector<model::compressor_cost> none = {};

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return none; }
  //! nprobe: 1, 2, 4, ... up to every list (a flat index: its one); each placement of the lists.
  template <class F>
  void for_each_plan(F&& f) const {
    const std::size_t L = w.list_count();
    std::vector<std::size_t> scans;
    if (w.graph()) {
      for (const auto& walk : measured_hnsw_walks()) scans.push_back(static_cast<std::size_t>(walk.ef));
    } else {
      for (std::size_t n = 1; n < L; n *= 2) scans.push_back(n);
      scans.push_back(L);
    }
    static constexpr double hot_shares[] = {0.0, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2};
    for (const auto n : scans) {
      f(rag_plan{n, list_home::replicated, 0, 1});
      if (s.device.count > 1) f(rag_plan{n, list_home::sharded, 0, 0});
      for (std::size_t t = 1; t < s.tiers.size(); ++t)
        for (const double h : hot_shares) f(rag_plan{n, list_home::pooled, t, h});
    }
  }
  [[nodiscard]] rag_cost price(const rag_plan& p) const { return plan::price(s, w, llm, p); }
  [[nodiscard]] std::string check(const rag_plan& p, const rag_cost& c) const {
    const double share = static_cast<double>(p.nprobe) / static_cast<double>(w.list_count());
    if (c.recall < w.recall_target && w.graph())
      return "recall target: ef " + std::to_string(p.nprobe) + " reaches " + units::detail::format_number(c.recall) +
             " of the " + units::detail::format_number(w.recall_target) + " asked";
    if (!w.graph() && !detail::recall_at(w.recall_curve, share))
      return "recall target: nprobe " + std::to_string(p.nprobe) + " probes " + pct(share) +
             " of the lists, fewer than the recall curve's first point (" + pct(w.recall_curve.front().probe_share) +
             "): its recall is not measured";
    if (c.recall < w.recall_target)
      return "recall target: nprobe " + std::to_string(p.nprobe) + " reaches " +
             units::detail::format_number(c.recall) + " of the " + units::detail::format_number(w.recall_target) +
             " asked";
    if (auto broken = tiers_fit(s, c.tier_bytes, c.devices_busy,
                                "query rate: " + units::detail::format_number(w.queries_per_second) + " queries/s",
                                c.pool_rate, c.pool_limit);
        !broken.empty())
      return broken;
    if (c.ttft + c.search > w.llm.ttft_slo)
      return "time to first token: " + to_string(c.search) + " search + " + to_string(c.ttft) + " prefill, more than " +
             to_string(w.llm.ttft_slo);
    return {};
  }
  //! Untraded: the index in device memory, scanned at the fewest lists that reach the target.
  [[nodiscard]] bool is_baseline(const rag_plan& p) const {
    if (p.home != list_home::replicated) return false;
    if (w.graph()) {  // the smallest ef that reaches the target, else the largest measured
      const auto walks = measured_hnsw_walks();
      for (const auto& walk : walks)
        if (walk.recall >= w.recall_target) return p.nprobe == static_cast<std::size_t>(walk.ef);
      return p.nprobe == static_cast<std::size_t>(walks.back().ef);
    }
    const std::size_t L = w.list_count();
    std::size_t n = 1;
    while (n < L && detail::recall_at(w.recall_curve, static_cast<double>(n) / static_cast<double>(L)).value_or(0) <
                        w.recall_target)
      n = std::min(L, n * 2);
    return p.nprobe == n;
  }
  // The objective, the runner-up, then less device memory, then fewer pool bytes.
  [[nodiscard]] bool better(const rag_evaluated& a, const rag_evaluated& b) const {
    const auto key = [&](const rag_cost& c) {
      return std::array{score(c, o.objective), score(c, runner_up(o.objective)), c.total.memory.value(),
                        c.total.bandwidth.value()};
    };
    return key(a.cost) < key(b.cost);
  }
  [[nodiscard]] std::array<double, 5> pareto_keys(const rag_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.total.bandwidth.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const rag_plan& p) const { return plan::describe(p, w, s); }
  [[nodiscard]] std::string binding(const rag_evaluated& e) const {
    if (!e.fits()) return e.violation;
    const auto& c = e.cost;
    const std::pair<double, std::string> parts[] = {{c.search.value(), "the search"},
                                                    {c.ttft.value(), "the LLM's prefill"},
                                                    {c.decode.value(), "the LLM's decode"}};
    const auto top = *std::max_element(std::begin(parts), std::end(parts));
    return top.second + " (" + pct(top.first / c.total.time.value()) + " of a " + to_string(c.total.time) +
           " query); " + units::detail::format_number(c.devices_busy) + " of " + std::to_string(s.device.count) +
           " devices busy";
  }
  [[nodiscard]] std::vector<std::string> trades(const rag_plan_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    if (r.choice == r.baseline) return {"none: the whole index in device memory is already the best that fits"};
    return {describe(c.plan) + ": device memory " + to_string(b.cost.total.memory) + " -> " +
            to_string(c.cost.total.memory) + " a device, bytes beyond it " + to_string(b.cost.total.bandwidth) +
            " -> " + to_string(c.cost.total.bandwidth) + " a query, search " + to_string(b.cost.search) + " -> " +
            to_string(c.cost.search)};
  }
  //! The same placement at other nprobe, and other placements at the same nprobe.
  [[nodiscard]] bool neighbour(const rag_plan_result& r, std::size_t i) const {
    const auto& a = r.candidates[i].plan;
    const auto& c = r.chosen().plan;
    const bool same_home = a.home == c.home && a.pool == c.pool && a.hot_share == c.hot_share;
    return (same_home && (a.nprobe * 2 == c.nprobe || c.nprobe * 2 == a.nprobe)) ||
           (a.nprobe == c.nprobe && (a.home != c.home || a.pool != c.pool) &&
            (a.home != list_home::pooled || a.hot_share == 0));
  }
  // How far a plan got through check's order: recall, capacity, query rate, pool bandwidth, first token.
  [[nodiscard]] static int progress(const std::string& violation) {
    static constexpr std::string_view order[] = {"recall target", "capacity", "query rate", "pool bandwidth",
                                                 "time to first token"};
    return check_stage(violation, order);
  }
  // The LLM's objectives that cap its batch: looser, larger batches answer more queries a device.
  [[nodiscard]] std::string looser_llm_objectives() const {
    std::vector<std::string> given;
    if (std::isfinite(w.llm.ttft_slo.value())) given.emplace_back("llm.ttft_slo");
    if (std::isfinite(w.llm.tpot_slo.value())) given.emplace_back("llm.tpot_slo");
    if (given.empty()) return "";
    return ", or a looser " + (given.size() == 1 ? given[0] : given[0] + " or " + given[1]) +
           " (larger LLM batches answer more queries a device)";
  }
  // What would lift the binding constraint of the plan that got furthest, on this system.
  [[nodiscard]] std::string fix_for(const rag_evaluated& e) const {
    const auto& c = e.cost;
    switch (progress(e.violation)) {
      case 0:
        return "a lower recall_target, or a recall_curve measured on your own index";
      case 1:
        return "fewer corpus_vectors, an ivf-pq index (its codes stay in device memory, its vectors go to a "
               "capacity tier), or a system whose tiers hold the index";
      case 2:
        return "queries_per_second at most " +
               units::detail::format_number(w.queries_per_second * static_cast<double>(s.device.count) /
                                            c.devices_busy) +
               " (what " + std::to_string(s.device.count) + " devices keep up with), a system of at least " +
               units::detail::format_number(std::ceil(c.devices_busy)) + " devices" + looser_llm_objectives();
      case 3:
        return "a hotter share of the lists in device memory, fewer lists probed (a lower recall_target), or a "
               "pool on faster links";
      default:
        return "a looser llm.ttft_slo (the nearest plan needs " + to_string(c.search + c.ttft) + ")";
    }
  }
  // How far past its binding constraint a plan is, as a ratio (1: just at it): what it needs over what it has.
  [[nodiscard]] double overshoot(const rag_evaluated& e) const {
    const auto& c = e.cost;
    switch (progress(e.violation)) {
      case 0:
        return c.recall > 0 ? w.recall_target / c.recall : std::numeric_limits<double>::infinity();
      case 1:
        return fullest_tier_share(s, c.tier_bytes);
      case 2:
        return c.devices_busy / static_cast<double>(s.device.count);
      case 3:
        return c.pool_rate / c.pool_limit;
      default:
        return (c.search + c.ttft) / w.llm.ttft_slo;
    }
  }
  [[noreturn]] void none_fits(const rag_plan_result& r) const {
    const rag_evaluated* nearest = &nearest_to_fitting(
        r.candidates, o.objective, [](const rag_evaluated& e) { return progress(e.violation); },
        [&](const rag_evaluated& e) { return overshoot(e); });
    std::string others;
    std::vector<int> seen{progress(nearest->violation)};
    for (const auto& e : r.candidates) {
      if (std::find(seen.begin(), seen.end(), progress(e.violation)) != seen.end()) continue;
      seen.push_back(progress(e.violation));
      others += "\n  " + describe(e.plan) + ": " + e.violation;
    }
    throw invalid_input("workload", "no placement of " + w.name + "'s index serves it on " + s.name +
                                        " with the LLM as " + llm.described + ". The nearest, " +
                                        describe(nearest->plan) + ", breaks the " + nearest->violation + ". Fix: " +
                                        fix_for(*nearest) + (others.empty() ? "" : ".\nOther plans break:" + others));
  }
};

}  // namespace detail

//! Every nprobe and placement priced and checked, the answers given by `llm` (one of rag_llm_choices'); the best
//! for the objective; the Pareto front; why.
inline rag_plan_result plan_rag(const system& s, const rag_workload& w, const planner_options& o, const rag_llm& llm) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  return solve(detail::rag_problem{s, w, o, llm}, o);
}

//! A RAG plan and the LLM replica it answers with, chosen together.
struct rag_answer {
  rag_llm llm;
  rag_plan_result plan;
};

//! The first LLM replica in rag_llm_choices' order with which some placement of the index fits, and that
//! placement's plan: the answer's time is most of a query's, so the LLM is chosen first and the search second,
//! and an LLM whose replicas leave too few devices for the search gives way to the next. Where none fits, the
//! refusal with the first: its nearest plan's binding constraint and the fix.
inline rag_answer plan_rag_answer(const system& s, const rag_workload& w, const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  const auto llms = rag_llm_choices(s, w, o);
  std::optional<invalid_input> first;
  for (const auto& llm : llms) {
    try {
      return {llm, solve(detail::rag_problem{s, w, o, llm}, o)};  // checked once above
    } catch (const invalid_input& e) {
      if (!first) first = e;
    }
  }
  throw *first;
}

//! The same plan alone.
inline rag_plan_result plan_rag(const system& s, const rag_workload& w, const planner_options& o = {}) {
  return plan_rag_answer(s, w, o).plan;
}

}  // namespace trinity::plan
