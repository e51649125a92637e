#pragma once
//! \file
//! Retrieval-augmented generation as a workload (workloads/workload.hpp): its reader (workloads/rag_serve_reader.hpp,
//! `"type": "rag-serve"`: the corpus, the index, the recall target, the query rate, the chunks and the LLM), its
//! preset, its plan (where the index lives, its nprobe, the LLM's replica; beside it, the same placement with the pool
//! over RDMA) and its simulation (a query's pool reads on the system's fabric, and on an RDMA memory server).

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/workloads/rag_serve_reader.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/rag_serve.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/hnsw/hnsw_index.hpp>
#include <trinity/retrieval/hnsw/tiered_hnsw.hpp>
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/synthetic.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>
#include <trinity/retrieval/tiered_ivf_pq.hpp>
#include <trinity/reports/gnuplot.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/verify.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::workloads {
namespace detail {

inline json rag_json(const plan::rag_evaluated& e, const plan::system& s, const plan::rag_workload& w) {
  const auto& c = e.cost;
  const auto& p = e.plan;
  const std::string second = p.home == plan::list_home::pooled ? s.tiers[p.pool].name : s.interconnect.name;
  return {{w.graph() ? "ef" : "nprobe", p.nprobe},
          {"index_home", plan::home_name(p.home)},
          {"pool_tier", p.home == plan::list_home::pooled ? json(s.tiers[p.pool].name) : json(nullptr)},
          {"hot_share", p.home == plan::list_home::pooled ? json(p.hot_share) : json(nullptr)},
          {"recall", c.recall},
          {"latency_s", c.total.time.value()},
          {"time_parts_s", {{"search", c.search.value()}, {"ttft", c.ttft.value()}, {"decode", c.decode.value()}}},
          {"search_bytes_per_query", {{s.tiers.front().name, c.traffic.bytes[0]}, {second, c.traffic.bytes[1]}}},
          {"search_reads_per_query", {{s.tiers.front().name, c.traffic.reads[0]}, {second, c.traffic.reads[1]}}},
          {"search_flops_per_query", c.search_flops.value()},
          {"devices_busy", c.devices_busy},
          {"pool_bytes_per_second", c.pool_rate.value()},
          {"energy_j_per_query", c.total.energy.value()},
          {"dollars_per_query", c.dollars},
          {"bytes_per_tier", tier_bytes_json(s, c.tier_bytes)},
          {"fits", e.fits()}};
}

//! The chosen placement with its pool reached over RDMA: its search, and how much slower than over the pool's
//! own link. None where the choice reads no pool.
struct rdma_comparison {
  seconds search{}, latency{};
  double slower = 1;
};
inline std::optional<rdma_comparison> over_rdma(const plan::system& s, const plan::rag_workload& w,
                                                const plan::rag_llm& llm, const plan::rag_evaluated& e) {
  if (e.plan.home != plan::list_home::pooled || s.tiers[e.plan.pool].level != tier_level::capacity_pool)
    return std::nullopt;
  const auto c = plan::price(s, w, llm, e.plan, plan::rdma_pool_access(s.tiers[e.plan.pool]));
  return rdma_comparison{c.search, c.total.time, c.search / e.cost.search};
}

//! `--plot`: search latency against the share of the index's lists kept in device memory, a line for each nprobe
//! whose recall reaches within 0.05 of the target (at most five, the fewest lists first), in the chosen plan's
//! capacity tier and, at share 1, a copy in every device; the lists sharded over the scale-up domain beside it
//! at 1. Plans that fit (tier capacities, devices, the pool's bandwidth) are filled, those refused hollow; the
//! choice marked. Drawn with gnuplot.
inline void draw_rag_tiers(const std::string& path, const plan::system& s, const plan::rag_workload& w,
                           const plan::rag_plan_result& r) {
  auto begun = reports::begin_plot(path, "trinity plan");
  if (!begun) return;
  auto& gp = *begun;
  struct point {
    double x, y;
    bool fits;
  };
  const auto& chosen = r.chosen();
  const std::size_t pool = chosen.plan.home == plan::list_home::pooled ? chosen.plan.pool : s.tiers.size() - 1;
  std::map<std::size_t, std::vector<point>> lines;  // nprobe: its placements, by the share in device memory
  std::map<std::size_t, double> recall;
  std::map<std::size_t, point> sharded_at;  // nprobe: the lists sharded over the domain
  for (const auto& e : r.candidates) {
    if (e.cost.recall < w.recall_target - 0.05) continue;
    const bool pooled = e.plan.home == plan::list_home::pooled && e.plan.pool == pool;
    const point p{pooled ? e.plan.hot_share : 1.0, e.cost.search.value(), e.fits()};
    if (e.plan.home == plan::list_home::sharded) sharded_at.insert_or_assign(e.plan.nprobe, p);
    if (!pooled && e.plan.home != plan::list_home::replicated) continue;
    lines[e.plan.nprobe].push_back(p);
    recall[e.plan.nprobe] = e.cost.recall;
  }
  while (lines.size() > 5) lines.erase(std::prev(lines.end()));
  std::vector<point> sharded;
  for (const auto& [nprobe, p] : sharded_at)
    if (lines.contains(nprobe)) sharded.push_back(p);
  gp << "set logscale y\nset grid\n"
     << "set key below\nset xrange [-0.02:1.02]\nset xlabel "
     << reports::quoted(std::string("share of the ") + (w.graph() ? "graph's nodes" : "lists") + " in " +
                        s.tiers.front().name + " (the rest in " + s.tiers[pool].name +
                        "); filled: fits, hollow: refused")
     << "\nset ylabel 'search latency a query (s)'\nset title "
     << reports::quoted(w.name + " on " + s.name + ": recall and search latency against fast-tier capacity (model)")
     << "\nplot ";
  int colour = 1;
  for (const auto& [nprobe, points] : lines) {
    gp << "'-' using 1:2 with lines lw 2 lc " << colour << " title "
       << reports::quoted((w.graph() ? "ef " : "nprobe ") + std::to_string(nprobe) + ", recall@" +
                          std::to_string(w.top_k) + " " + units::detail::format_number(recall[nprobe]))
       << ", '-' using 1:2 with points pt 7 lc " << colour << " notitle, '-' using 1:2 with points pt 6 lc " << colour
       << " notitle, ";
    ++colour;
  }
  gp << "'-' using 1:2 with points pt 4 ps 1.5 lw 2 lc rgb '#555555' title 'lists sharded over the scale-up "
     << "domain (at 1)', '-' using 1:2 with points pt 3 ps 3 lw 3 lc rgb '#d62728' title 'chosen'\n";
  const auto series = [&](const std::vector<point>& points, int which) {  // 0 all, 1 fitting, 2 refused
    for (const auto& p : points)
      if (which == 0 || (which == 1) == p.fits) gp << p.x << ' ' << p.y << '\n';
    gp << (which == 0 || std::any_of(points.begin(), points.end(), [&](auto& p) { return (which == 1) == p.fits; })
               ? "e\n"
               : "1 nan\ne\n");
  };
  for (auto& [nprobe, points] : lines) {
    std::sort(points.begin(), points.end(), [](const point& a, const point& b) { return a.x < b.x; });
    for (const int which : {0, 1, 2}) series(points, which);
  }
  series(sharded, 0);
  gp << (chosen.plan.home == plan::list_home::pooled ? chosen.plan.hot_share : 1.0) << ' ' << chosen.cost.search.value()
     << "\ne\n";
  reports::finish_plot(path, gp, "trinity plan");
  std::cerr << "trinity plan: wrote " << path << '\n';
}

inline void plan_rag(const request& a, const plan::system& s, const plan::rag_workload& w, std::ostream& out) {
  const auto o = options_of(a.planning);
  // The LLM's replica chosen with the placement, printed beside the plan that answers with it.
  const auto answer = planned([&] { return plan::plan_rag_answer(s, w, o); });
  const auto& llm = answer.llm;
  const auto& r = answer.plan;
  const auto rdma = over_rdma(s, w, llm, r.chosen());
  if (!a.plot.empty()) draw_rag_tiers(a.plot, s, w, r);
  if (a.json) {
    json own{{"lists", w.graph() ? json(nullptr) : json(w.list_count())},
             {"graph_degree", w.graph() ? json(static_cast<std::size_t>(plan::detail::hnsw_m)) : json(nullptr)},
             {"index_bytes", w.index_bytes().value()},
             {"list_bytes", w.list_bytes().value()},
             {"code_bytes", w.code_bytes().value()},
             {"rerank", w.rerank_count()},
             {"prompt_tokens", w.answering().prompt_tokens},
             {"llm",
              {{"plan", llm.described},
               {"ttft_s", llm.cost.ttft.value()},
               {"ttft_in_batch_s", llm.cost.ttft_batch.value()},
               {"tpot_s", llm.cost.tpot.value()},
               {"output_tokens_per_device_second", llm.cost.tokens_per_second}}},
             {"pool_over_rdma", rdma ? json{{"search_s", rdma->search.value()},
                                            {"latency_s", rdma->latency.value()},
                                            {"search_slower", rdma->slower}}
                                     : json(nullptr)}};
    print_result_json(out, a, s, w, "rag", std::move(own), r,
                      [&](const plan::rag_evaluated& e) { return rag_json(e, s, w); });
    return;
  }
  const auto& c = r.chosen().cost;
  const auto& p = r.chosen().plan;
  out << "Plan for " << w.name << " on " << s.name << " (" << s.device.count << " x " << s.device.name << "), best "
      << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(p, w, s)
      << "\n  LLM: " << llm.described << ", prompts of " << std::lround(w.answering().prompt_tokens) << " tokens\n\n";
  table t({"resource", "predicted per query"});
  t.add({"latency", to_string(c.total.time) + " (search " + to_string(c.search) + ", first token " + to_string(c.ttft) +
                        " in the LLM's batch, decode " + to_string(c.decode) + ")"});
  t.add({"recall@" + std::to_string(w.top_k),
         units::detail::format_number(c.recall) + " (target " + units::detail::format_number(w.recall_target) + ")"});
  t.add({"search reads", to_string(bytes{c.traffic.bytes[0]}) + " from " + s.tiers.front().name + ", " +
                             to_string(bytes{c.traffic.bytes[1]}) + " beyond it in " +
                             units::detail::format_number(c.traffic.reads[1]) +
                             (w.product_quantized() ? " vectors"
                              : w.graph()           ? " reads (vectors and link lists)"
                                                    : " lists")});
  t.add({"devices busy", units::detail::format_number(c.devices_busy) + " of " + std::to_string(s.device.count) +
                             " at " + units::detail::format_number(w.queries_per_second) + " queries/s"});
  t.add({"energy", to_string(c.total.energy)});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity) + " per device"});
  t.print(out);
  if (rdma)
    out << "\nThe same placement with " << s.tiers[p.pool].name
        << " reached over RDMA (plan::rdma_pool_access): search " << to_string(rdma->search) << ", "
        << units::detail::format_number(rdma->slower) << "x slower; latency " << to_string(rdma->latency) << ".\n";
  print_assumed(out, s, w.assumed);
  print_explanation(out, r.explanation, plan::describe(r.candidates[r.baseline].plan, w, s), "Alternatives");
  out << "\nPareto front (latency, energy, device memory, bytes beyond it, dollars): " << r.pareto.size() << " plans\n";
}

//! A query's reads from a capacity pool, on the fabric: one list from the system's pool node (where its fabric has
//! one standing for that tier), and one from an RDMA memory server, each times the lists a query reads there. The
//! plan laid out is the choice where it reads the pool, else the best that does (the first row says which).
inline std::vector<plan::simulated_pair> simulate_rag(const plan::system& s, const plan::rag_workload& w,
                                                      const plan::rag_plan_result& r, plan::objective o) {
  const auto i = plan::pooled_candidate(s, r, o);
  if (!i) return {};
  const auto& e = r.candidates[*i];
  const auto& pool = s.tiers[e.plan.pool];
  const double reads = e.cost.traffic.reads[1];
  // IVF-Flat reads whole lists from the pool; IVF-PQ the vectors it re-ranks, one each; an HNSW walk its cold
  // nodes' vectors and link lists, each a read of their mean size.
  const bytes read = w.product_quantized() ? w.vector_bytes()
                     : w.graph()           ? bytes{e.cost.traffic.bytes[1] / std::max(reads, 1.0)}
                                           : w.list_bytes();
  const std::string what = w.product_quantized() ? " vectors of " : w.graph() ? " reads of " : " lists of ";
  const std::string which = *i == r.choice ? "" : " (" + plan::describe(e.plan, w, s) + ", not the choice)";
  return plan::simulate_pool_reads(s, pool, read, reads, units::detail::format_number(reads) + what + to_string(read),
                                   which);
}

//! The workload scaled down to run here: SYNTHETIC clustered vectors (retrieval/synthetic.hpp), as many as the
//! corpus up to 20,000, at its dimension up to 128, in 4·√n lists (one for a flat index), scanned at the plan's
//! share of lists, and the IVF index built on them; 200 queries to search, 4,000 others to measure probes on.
struct scaled_rag {
  plan::rag_workload small;
  std::size_t n = 0, d = 0, lists = 0, nprobe = 1, k = 1;
  std::vector<float> base, placing, queries;
  retrieval::ivf_index index;
};

inline scaled_rag scaled(const plan::rag_workload& w, const plan::rag_plan& p) {
  auto small = w;
  small.corpus_vectors = std::min(w.corpus_vectors, 20000.0);
  small.dimension = std::min<std::size_t>(w.dimension, 128);
  small.lists = 0;
  small.probe_skew = 0;
  // An IVF-PQ code keeps the plan's bytes a dimension: the largest divisor of the scaled dimension not above it.
  if (w.product_quantized()) {
    const double per_dimension = static_cast<double>(w.code_size()) / static_cast<double>(w.dimension);
    std::size_t m = std::max<std::size_t>(1, static_cast<std::size_t>(per_dimension * small.dimension));
    while (small.dimension % m != 0) --m;
    small.pq_bytes = m;
  }
  const std::size_t n = static_cast<std::size_t>(small.corpus_vectors), d = small.dimension, L = small.list_count();
  const double share = static_cast<double>(p.nprobe) / static_cast<double>(w.list_count());
  const auto nprobe =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(share * static_cast<double>(L))), 1, L);
  std::cerr << "trinity verify: building an IVF index of " << n << " x " << d << " SYNTHETIC vectors in " << L
            << " lists...\n";
  scaled_rag r{small,
               n,
               d,
               L,
               nprobe,
               std::min<std::size_t>(w.top_k, n),
               retrieval::clustered_vectors(n, d, 1),
               retrieval::clustered_vectors(4000, d, 3),
               retrieval::clustered_vectors(200, d, 2),
               retrieval::ivf_index(d, {.lists = L})};
  r.index.train(r.base);
  r.index.add(r.base, 0);
  return r;
}

//! Hits of `search` among the exact top k, over the 200 queries, as a share.
template <class Search>
double measured_recall(const scaled_rag& r, Search&& search) {
  double found = 0;
  for (std::size_t q = 0; q < 200; ++q) {
    const auto query = std::span<const float>(r.queries).subspan(q * r.d, r.d);
    const auto got = search(query);
    for (const auto& t : retrieval::exact_search(r.base, r.d, query, r.k))
      for (const auto& g : got) found += g.id == t.id;
  }
  return found / (200.0 * static_cast<double>(r.k));
}

inline verified_row curve_row(const scaled_rag& r) {
  return {"recall@" + std::to_string(r.k) + " (the workload's curve at nprobe " + std::to_string(r.nprobe) + " of " +
              std::to_string(r.lists) + ")",
          plan::detail::recall_at(r.small.recall_curve, static_cast<double>(r.nprobe) / static_cast<double>(r.lists))
              .value_or(0),
          0};
}

inline void print_verified_rag(const verify_request& a, const plan::system& s, const plan::rag_workload& w,
                               const plan::rag_plan& p, const scaled_rag& r, double hot,
                               const std::vector<verified_row>& rows, std::ostream& out) {
  if (a.json) {
    out << json{{"system", s.name},
                {"choice", plan::describe(p, w, s)},
                {"scaled",
                 {{"vectors", r.n},
                  {"dimension", r.d},
                  {"lists", r.lists},
                  {"nprobe", r.nprobe},
                  {"hot_share", hot},
                  {"pq_bytes", r.small.code_size()},
                  {"rerank", r.small.rerank_count()}}},
                {"rows", rows_json(rows, 0.05)}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Plan: " << plan::describe(p, w, s) << "\nRun here: " << r.n << " x " << r.d << " SYNTHETIC vectors in "
      << r.lists << " lists, nprobe " << r.nprobe << ", ";
  if (w.product_quantized())
    out << r.small.code_size() << "-byte codes in the fast tier, " << r.small.rerank_count()
        << " re-ranked from the vectors in the capacity tier\n\n";
  else
    out << plan::detail::share(hot) << " of the lists' bytes in the fast tier\n\n";
  print_rows(out, rows);
}

//! An IVF-PQ plan's search run here on retrieval::tiered_ivf_pq: the codes in a fast tier, every vector in a
//! capacity tier (the mechanism's split; the plan's placement of the vectors moves only where the re-ranked reads
//! land). Beside it the model's count of the same split, at the probe frequencies of other queries and at the
//! uniform probes the plan prices.
inline void verify_rag_pq(const verify_request& a, const plan::system& s, const plan::rag_workload& w,
                          const plan::rag_plan& p, std::ostream& out) {
  auto r = scaled(w, p);
  const std::size_t m = r.small.code_size(), rerank = r.small.rerank_count();
  place::tier_resource fast("fast", bytes{static_cast<double>(r.n * (m + 8))}),
      capacity("capacity", bytes{static_cast<double>(r.n * (r.d + 1) * 4)});
  const auto sample = std::span<const float>(r.base).first(std::min<std::size_t>(r.n, 2560) * r.d);
  retrieval::tiered_ivf_pq pq(r.index, m, sample, {&fast, &capacity});
  auto recall = curve_row(r);
  recall.measured = measured_recall(r, [&](std::span<const float> q) { return pq.search(q, r.k, r.nprobe, rerank); });
  const auto& t = pq.traffic();
  const double queries_run = static_cast<double>(t.queries);
  // The model over other queries' probe sets: a query scans its lists' codes and keeps the fewer of rerank and
  // the vectors those lists hold (a small list set keeps less than rerank).
  double codes = 0, kept = 0;
  const std::size_t placing = r.placing.size() / r.d;
  for (std::size_t q = 0; q < placing; ++q) {
    std::size_t scanned = 0;
    for (const auto l : r.index.probe(std::span<const float>(r.placing).subspan(q * r.d, r.d), r.nprobe))
      scanned += pq.list_size(l);
    codes += static_cast<double>(scanned * m) / static_cast<double>(placing);
    kept += static_cast<double>(std::min(rerank, scanned)) / static_cast<double>(placing);
  }
  const double vector = r.small.vector_bytes().value();
  const double fast_model = r.small.centroid_bytes().value() + codes + kept * 8.0;
  const auto uniform = plan::search_cost(s, r.small, plan::rag_plan{r.nprobe, plan::list_home::pooled, p.pool, 0},
                                         plan::second_tier_access(s, p));
  const std::vector<verified_row> rows{
      recall,
      {"fast-tier bytes a query (codes), at the probe sets of other queries", fast_model, t.bytes[0] / queries_run},
      {"capacity-tier bytes a query (the re-ranked vectors), at the probe sets of other queries", kept * vector,
       t.bytes[1] / queries_run},
      {"fast-tier bytes a query, as the plan prices them (uniform probes)", uniform.traffic.bytes[0],
       t.bytes[0] / queries_run}};
  print_verified_rag(a, s, w, p, r, 0, rows, out);
}

//! An HNSW plan's walk run here on retrieval::tiered_hnsw, scaled down: SYNTHETIC clustered vectors, as many as
//! the corpus up to 20,000, at its dimension up to 128, in a graph of the curve's degree searched at the plan's ef;
//! the upper layers and the plan's share of the graph's bytes (the nodes most visited by 4,000 other queries) in a
//! fast tier, the rest in a capacity tier. Beside each, the model: recall and the vectors a walk scores from the
//! curve (measured on 200,000 x 64 vectors, so set beside a smaller graph rather than held to it), the vector bytes
//! per tier at the visit frequencies of the other queries (held within 5%), and the bytes as the plan prices them.
inline void verify_rag_hnsw(const verify_request& a, const plan::system& s, const plan::rag_workload& w,
                            const plan::rag_plan& p, std::ostream& out) {
  const std::size_t n = static_cast<std::size_t>(std::min(w.corpus_vectors, 20000.0)),
                    d = std::min<std::size_t>(w.dimension, 128), ef = p.nprobe, k = std::min<std::size_t>(w.top_k, n);
  const auto m = static_cast<std::size_t>(plan::detail::hnsw_m);
  std::cerr << "trinity verify: building an HNSW graph of " << n << " x " << d << " SYNTHETIC vectors, degree " << m
            << "...\n";
  const auto base = retrieval::clustered_vectors(n, d, 1), placing = retrieval::clustered_vectors(4000, d, 3),
             queries = retrieval::clustered_vectors(200, d, 2);
  retrieval::hnsw_index index(d, {.m = m, .ef_construction = 100});
  index.add(base, 0);
  const bytes room{static_cast<double>(n) * (static_cast<double>(d) * 4 + 8.0 * static_cast<double>(m + 2))};
  place::tier_resource fast("fast", room), capacity("capacity", room);
  retrieval::tiered_hnsw tiered(index, {&fast, &capacity});
  std::size_t all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) all += tiered.node_bytes(v);
  const double hot = p.device_share();
  const auto frequency = tiered.visit_frequency(placing, k, ef);
  tiered.place(frequency, static_cast<std::size_t>(hot * static_cast<double>(all)));
  double found = 0;
  for (std::size_t q = 0; q < 200; ++q) {
    const auto query = std::span<const float>(queries).subspan(q * d, d);
    const auto got = tiered.search(query, k, ef);
    for (const auto& t : retrieval::exact_search(base, d, query, k))
      for (const auto& g : got) found += g.id == t.id;
  }
  const auto& r = tiered.reads();
  const double run = static_cast<double>(tiered.traffic().queries), vector = 4.0 * static_cast<double>(d);
  double visits[2] = {0, 0};
  for (std::size_t v = 0; v < tiered.nodes(); ++v) visits[tiered.tier_of(v)] += frequency[v] / 4000.0;
  auto small = w;
  small.corpus_vectors = static_cast<double>(n);
  small.dimension = d;
  const auto priced = plan::search_cost(s, small, p, plan::second_tier_access(s, p));
  const auto walk = plan::hnsw_walk_at(ef);
  const std::vector<verified_row> rows{
      {"recall@" + std::to_string(k) + " (the curve at ef " + std::to_string(ef) + ")", walk.recall,
       found / (200.0 * static_cast<double>(k))},
      {"vectors a walk scores (the curve's, on 200,000 x 64)", walk.vectors, (r.vectors[0] + r.vectors[1]) / run},
      {"fast-tier vector bytes a query, at the visit frequencies of other queries", visits[0] * vector,
       r.vectors[0] * vector / run},
      {"capacity-tier vector bytes a query, at the visit frequencies of other queries", visits[1] * vector,
       r.vectors[1] * vector / run},
      {"bytes a query, both tiers, as the plan prices them (the curve's walk)",
       priced.traffic.bytes[0] + priced.traffic.bytes[1],
       tiered.traffic().bytes[0] / run + tiered.traffic().bytes[1] / run}};
  if (a.json) {
    out << json{{"system", s.name},
                {"choice", plan::describe(p, w, s)},
                {"scaled", {{"vectors", n}, {"dimension", d}, {"degree", m}, {"ef", ef}, {"hot_share", hot}}},
                {"rows", rows_json(rows, 0.05)}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Plan: " << plan::describe(p, w, s) << "\nRun here: " << n << " x " << d
      << " SYNTHETIC vectors in an HNSW graph of degree " << m << ", ef " << ef << ", the upper layers and "
      << plan::detail::share(hot) << " of the graph's bytes in the fast tier\n\n";
  print_rows(out, rows);
}

//! The chosen plan run here, scaled down (scaled()): its placement's share of the lists in a fast tier by their
//! probe frequency on the 4,000 other queries, the rest in a capacity tier (both this machine's memory). Beside
//! each, the model: recall from the workload's curve, and bytes per tier at the probe frequencies measured on the
//! placement's queries (what the tests hold within 5%) and at uniform probes (what the plan prices).
inline void verify_rag(const verify_request& a, const plan::system& s, const plan::rag_workload& w, std::ostream& out) {
  const auto plan = planned([&] { return plan::plan_rag(s, w, options_of(a.planning)); });
  const auto& p = plan.chosen().plan;
  if (w.product_quantized()) return verify_rag_pq(a, s, w, p, out);
  if (w.graph()) return verify_rag_hnsw(a, s, w, p, out);
  auto r = scaled(w, p);
  const std::size_t L = r.lists;
  std::size_t lists_bytes = 0;
  for (std::size_t l = 0; l < L; ++l) lists_bytes += r.index.list_bytes(l);
  const double hot = p.device_share();
  place::tier_resource fast("fast", bytes{static_cast<double>(r.index.centroid_bytes() + lists_bytes)}),
      capacity("capacity", bytes{static_cast<double>(lists_bytes)});
  retrieval::tiered_ivf tiered(r.index, {&fast, &capacity});
  const auto frequency = retrieval::probe_frequency(r.index, r.placing, r.nprobe);
  tiered.place(frequency, r.index.centroid_bytes() + static_cast<std::size_t>(hot * static_cast<double>(lists_bytes)));
  auto recall = curve_row(r);
  recall.measured = measured_recall(r, [&](std::span<const float> q) { return tiered.search(q, r.k, r.nprobe); });
  const auto& m = tiered.traffic();
  // The model reads the frequencies measured on the placement's queries, not on the queries it is set beside.
  std::vector<double> list_bytes(L);
  std::vector<std::size_t> tier_of(L);
  for (std::size_t l = 0; l < L; ++l)
    list_bytes[l] = static_cast<double>(r.index.list_bytes(l)), tier_of[l] = tiered.tier_of(l);
  const auto at_measured =
      model::ivf_search_traffic(static_cast<double>(r.index.centroid_bytes()), list_bytes, frequency, tier_of, 2);
  const auto uniform =
      plan::search_cost(s, r.small, plan::rag_plan{r.nprobe, p.home, p.pool, hot}, plan::second_tier_access(s, p));
  const double queries_run = static_cast<double>(m.queries);
  const std::vector<verified_row> rows{recall,
                                       {"fast-tier bytes a query, at the probe frequencies of other queries",
                                        at_measured.bytes[0], m.bytes[0] / queries_run},
                                       {"capacity-tier bytes a query, at the probe frequencies of other queries",
                                        at_measured.bytes[1], m.bytes[1] / queries_run},
                                       {"capacity-tier bytes a query, as the plan prices them (uniform probes)",
                                        uniform.traffic.bytes[1], m.bytes[1] / queries_run}};
  print_verified_rag(a, s, w, p, r, hot, rows, out);
}

}  // namespace detail

//! Retrieval-augmented generation (plan/rag_serve.hpp): a vector index on the tiers, and the LLM that answers
//! with what it retrieves. `"type": "rag-serve"`.
struct rag_serve {
  static constexpr std::string_view type = "rag-serve";
  static constexpr bool draws_plot = true;  //!< --plot draws its search's plans
  using description = plan::rag_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_rag(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"rag-serve", "rag-serve-hnsw"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_rag(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    refuse_codec_flags(a.planning, "rag-serve", "a rag-serve plan stores its vectors in fp32");
    detail::plan_rag(a, s, w, out);
  }
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "simulate");
    refuse_codec_flags(a.planning, "rag-serve", "a rag-serve plan stores its vectors in fp32");
    const auto r = planned([&] { return plan::plan_rag(s, w, options_of(a.planning)); });
    print_simulation(out, a, s, plan::describe(r.chosen().plan, w, s), s.fabric.empty() ? "rdma-cluster" : s.fabric,
                     detail::simulate_rag(s, w, r, objective_of(a.planning)));
  }
  //! The chosen plan's search run here, scaled down, beside the model.
  static void verify(const verify_request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    refuse_replay_flags(a, "rag-serve");
    detail::verify_rag(a, s, w, out);
  }
};

}  // namespace trinity::workloads
