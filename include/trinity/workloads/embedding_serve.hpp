#pragma once
//! \file
//! Recommendation inference over embedding tables as a workload (workloads/workload.hpp): its reader (`"type":
//! "embedding-serve"`: the tables, the batch, the dense part, the sample rate), its preset, its plan (where the
//! tables live, the hot-row cache; beside it, the same placement with the pool over RDMA, and the tables'
//! initialization) and its simulation (a batch's pool reads on the system's fabric, and on an RDMA memory server).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/splitmix.hpp>
#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/embedding/tiered_table.hpp>
#include <trinity/embedding/trace_replay.hpp>
#include <trinity/io/dlrm_trace.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/embedding_serve.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/verify.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key embedding_keys[] = {{"name", required},        {"type", required},
                                         {"tables", required},      {"batch", required},
                                         {"dense_flops", required}, {"samples_per_second", required},
                                         {"latency_slo", required}};
inline constexpr key embedding_table_keys[] = {
    {"name", required}, {"rows", required}, {"dimension", required}, {"skew"}, {"pooling"}};

// The embedding tables: each its rows, width, skew and pooling.
inline void read_tables(const object& o, plan::embedding_workload& w) {
  for_each(
      o.at("tables"), "tables",
      [&](const json& e, const std::string& at) {
        const object t(e, at, embedding_table_keys, "an embedding table");
        plan::embedding_table_spec x;
        x.name = t.text("name");
        x.rows = t.whole_number("rows", 1, 1e13);
        x.dimension = t.count("dimension", 65536);
        t.get("skew", x.skew, w.assumed);
        t.get("pooling", x.pooling, w.assumed);
        w.tables.push_back(std::move(x));
      },
      4096);
}

inline plan::embedding_workload read_embedding(const json& j, const plan::system& s) {
  const object o(j, "", embedding_keys, "an embedding-serve workload");
  plan::embedding_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  each([&] { read_tables(o, w); });
  each([&] { w.batch = o.whole_number("batch", 1, 1e9); });
  each([&] { w.dense_flops = o.quantity<flops>("dense_flops"); });
  each([&] { w.samples_per_second = o.number("samples_per_second"); });
  each([&] { w.latency_slo = o.quantity<seconds>("latency_slo"); });
  each.raise();
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

inline json embedding_json(const plan::embedding_evaluated& e, const plan::system& s) {
  const auto& c = e.cost;
  const auto& p = e.plan;
  const std::string second = p.home == plan::list_home::pooled ? s.tiers[p.pool].name : s.interconnect.name;
  return {{"tables_home", plan::home_name(p.home)},
          {"pool_tier", p.home == plan::list_home::pooled ? json(s.tiers[p.pool].name) : json(nullptr)},
          {"cache_share", p.home == plan::list_home::pooled ? json(p.cache_share) : json(nullptr)},
          {"hit_rate", c.hit_rate},
          {"latency_s", c.total.time.value()},
          {"time_parts_s", {{"lookup", c.lookup.value()}, {"dense", c.dense.value()}}},
          {"initialization_s", c.initialization.value()},
          {"lookup_bytes_per_batch", {{s.tiers.front().name, c.traffic.bytes[0]}, {second, c.traffic.bytes[1]}}},
          {"lookup_reads_per_batch", {{s.tiers.front().name, c.traffic.reads[0]}, {second, c.traffic.reads[1]}}},
          {"devices_busy", c.devices_busy},
          {"pool_bytes_per_second", c.pool_rate.value()},
          {"energy_j_per_batch", c.total.energy.value()},
          {"dollars_per_batch", c.dollars},
          {"bytes_per_tier", tier_bytes_json(s, c.tier_bytes)},
          {"fits", e.fits()}};
}

//! The chosen placement with its pool reached over RDMA: a batch's lookups and the tables' initialization, and
//! how much slower each is. None where the choice reads no pool.
struct embedding_rdma {
  seconds lookup{}, latency{}, initialization{};
  double lookup_slower = 1, initialization_slower = 1;
};
inline std::optional<embedding_rdma> over_rdma(const plan::system& s, const plan::embedding_workload& w,
                                               const plan::embedding_evaluated& e) {
  if (e.plan.home != plan::list_home::pooled || s.tiers[e.plan.pool].level != tier_level::capacity_pool)
    return std::nullopt;
  const auto c = plan::price(s, w, e.plan, plan::rdma_pool_access(s.tiers[e.plan.pool]));
  return embedding_rdma{c.lookup, c.total.time, c.initialization, c.lookup / e.cost.lookup,
                        c.initialization / e.cost.initialization};
}

inline void plan_embedding(const request& a, const plan::system& s, const plan::embedding_workload& w,
                           std::ostream& out) {
  const auto r = planned([&] { return plan::plan_embedding(s, w, options_of(a.planning)); });
  const auto rdma = over_rdma(s, w, r.chosen());
  if (a.json) {
    json own{{"tables", w.tables.size()},
             {"table_bytes", w.table_bytes().value()},
             {"pool_over_rdma", rdma ? json{{"lookup_s", rdma->lookup.value()},
                                            {"latency_s", rdma->latency.value()},
                                            {"initialization_s", rdma->initialization.value()},
                                            {"lookup_slower", rdma->lookup_slower},
                                            {"initialization_slower", rdma->initialization_slower}}
                                     : json(nullptr)}};
    print_result_json(out, a, s, w, "embedding", std::move(own), r,
                      [&](const plan::embedding_evaluated& e) { return embedding_json(e, s); });
    return;
  }
  const auto& c = r.chosen().cost;
  const auto& p = r.chosen().plan;
  out << "Plan for " << w.name << " on " << s.name << " (" << s.device.count << " x " << s.device.name << "), best "
      << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(p, s)
      << "\n\n";
  table t({"resource", "predicted per batch of " + units::detail::format_number(w.batch)});
  t.add({"latency",
         to_string(c.total.time) + " (lookups " + to_string(c.lookup) + ", dense " + to_string(c.dense) + ")"});
  t.add({"hit rate", units::detail::format_number(c.hit_rate) + " of the lookups from " + s.tiers.front().name});
  t.add({"lookup reads", to_string(bytes{c.traffic.bytes[0]}) + " from " + s.tiers.front().name + ", " +
                             to_string(bytes{c.traffic.bytes[1]}) + " beyond it"});
  t.add({"devices busy", units::detail::format_number(c.devices_busy) + " of " + std::to_string(s.device.count) +
                             " at " + units::detail::format_number(w.samples_per_second) + " samples/s"});
  t.add({"initialization", to_string(c.initialization) + " to write " + to_string(w.table_bytes()) + " of tables"});
  t.add({"energy", to_string(c.total.energy)});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity) + " per device"});
  t.print(out);
  if (rdma)
    out << "\nThe same placement with " << s.tiers[p.pool].name << " reached over RDMA (plan::rdma_pool_access): "
        << "lookups " << to_string(rdma->lookup) << ", " << units::detail::format_number(rdma->lookup_slower)
        << "x slower; initialization " << to_string(rdma->initialization) << ", "
        << units::detail::format_number(rdma->initialization_slower) << "x slower.\n";
  print_assumed(out, s, w.assumed);
  print_explanation(out, r.explanation, plan::describe(r.candidates[r.baseline].plan, s), "Alternatives");
  out << "\nPareto front (latency, energy, device memory, bytes beyond it, dollars): " << r.pareto.size() << " plans\n";
}

//! A batch's misses from a capacity pool, on the fabric: one table's wave of rows from the system's pool node
//! (where its fabric has one standing for that tier), and from an RDMA memory server, times the tables. The plan laid
//! out is the choice where it reads the pool, else the best that does (the rows say which).
inline std::vector<plan::simulated_pair> simulate_embedding(const plan::system& s, const plan::embedding_workload& w,
                                                            const plan::embedding_plan_result& r, plan::objective o) {
  const auto i = plan::pooled_candidate(s, r, o);
  if (!i) return {};
  const auto& e = r.candidates[*i];
  const auto& pool = s.tiers[e.plan.pool];
  const double tables = static_cast<double>(w.tables.size());
  const bytes wave{e.cost.traffic.bytes[1] / tables};
  const std::string which = *i == r.choice ? "" : " (" + plan::describe(e.plan, s) + ", not the choice)";
  return plan::simulate_pool_reads(s, pool, wave, tables,
                                   units::detail::format_number(tables) + " waves of " + to_string(wave), which);
}

//! A plan run here, scaled down: the choice where it reads a capacity pool, else the best plan that does. Each
//! table at most 20,000 rows of at most 16 values, its cache the plan's share of them (an LFU
//! embedding::tiered_table over two tiers of this machine's memory); 20 batches of at most 256 samples, each
//! looking up the table's pooling (rounded) rows drawn by its Zipf skew (SYNTHETIC). Beside each: the ideal LFU's
//! hit rate the plan prices (the online cache approaches it from below), the model's bytes per tier at the hit
//! rate measured, and the bags against a plain gather, bit for bit.
inline void verify_embedding(const verify_request& a, const plan::system& s, const plan::embedding_workload& w,
                             std::ostream& out) {
  const auto r = planned([&] { return plan::plan_embedding(s, w, options_of(a.planning)); });
  const auto i = plan::pooled_candidate(s, r, objective_of(a.planning));
  if (!i) {
    out << "Plan: " << plan::describe(r.chosen().plan, s) << "\nNo plan that fits reads a capacity pool: nothing "
        << "beyond device memory to run.\n";
    return;
  }
  const auto& p = r.candidates[*i].plan;
  const std::size_t batch = std::min<std::size_t>(static_cast<std::size_t>(w.batch), 256), batches = 20;
  double lookups = 0, hits = 0, predicted_hits = 0, fast = 0, beyond = 0, predicted_fast = 0, predicted_beyond = 0;
  bool same_bits = true;
  std::uint64_t seed = 11;
  std::cerr << "trinity verify: looking up " << w.tables.size() << " tables, " << batches << " batches of " << batch
            << " samples...\n";
  for (const auto& spec : w.tables) {
    const auto rows = static_cast<std::size_t>(std::min(spec.rows, 20000.0));
    const std::size_t dim = std::min<std::size_t>(spec.dimension, 16);
    const auto cached = static_cast<std::size_t>(std::floor(p.cache_share * static_cast<double>(rows)));
    const auto per_sample = static_cast<std::size_t>(std::max(1.0, std::round(spec.pooling)));
    std::vector<float> values(rows * dim);
    for (std::size_t v = 0; v < values.size(); ++v) values[v] = static_cast<float>((v * 2654435761u) % 1000) / 1000;
    std::vector<double> cdf(rows);
    double total = 0;
    for (std::size_t x = 0; x < rows; ++x) cdf[x] = total += std::pow(static_cast<double>(x + 1), -spec.skew);
    place::tier_resource hbm("fast", bytes{static_cast<double>(cached * dim * 4) + 1}),
        pool("capacity", bytes{static_cast<double>(rows * dim * 4) + 1});
    place::tier_resource* tiers[] = {&hbm, &pool};
    embedding::tiered_table table(rows, dim, values, tiers, cached, embedding::cache_policy::lfu);
    std::vector<std::uint64_t> indices(batch * per_sample);
    std::vector<std::size_t> offsets(batch + 1);
    for (std::size_t b = 0; b <= batch; ++b) offsets[b] = b * per_sample;
    std::vector<float> got(batch * dim), want(batch * dim);
    for (std::size_t b = 0; b < batches; ++b) {
      for (auto& x : indices) {
        const double u = static_cast<double>(trinity::detail::splitmix_next(seed) >> 11) * 0x1p-53 * total;
        x = static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        x = std::min<std::uint64_t>(x, rows - 1);
      }
      const embedding::bag_batch bags{indices, offsets};
      table.bag(bags, embedding::pooling::sum, got);
      embedding::embedding_bag(values, dim, bags, embedding::pooling::sum, want);
      same_bits = same_bits && got == want;
    }
    const auto& t = table.traffic();
    const double n = static_cast<double>(t.hits + t.misses);
    lookups += n;
    hits += static_cast<double>(t.hits);
    predicted_hits +=
        n * (cached ? model::zipf_head_share(static_cast<double>(cached), static_cast<double>(rows), spec.skew) : 0.0);
    fast += t.bytes[0];
    beyond += t.bytes[1];
    const auto m = model::embedding_lookup_traffic(n, static_cast<double>(dim * 4), t.hit_rate(), cached > 0);
    predicted_fast += m.bytes[0];
    predicted_beyond += m.bytes[1];
  }
  const double per = static_cast<double>(batches);
  const std::vector<verified_row> rows{
      {"hit rate (an ideal LFU's, as the plan prices it)", predicted_hits / lookups, hits / lookups},
      {"fast-tier bytes a batch, at the hit rate measured", predicted_fast / per, fast / per},
      {"capacity-tier bytes a batch, at the hit rate measured", predicted_beyond / per, beyond / per},
      {"bags equal to a plain gather, bit for bit (1: yes)", 1.0, same_bits ? 1.0 : 0.0}};
  const std::string which = plan::describe(p, s) + (*i == r.choice ? std::string()
                                                                   : " (the best that reads the pool; the choice is " +
                                                                         plan::describe(r.chosen().plan, s) + ")");
  if (a.json) {
    out << json{{"system", s.name},
                {"choice", which},
                {"scaled",
                 {{"rows_at_most", 20000}, {"dimension_at_most", 16}, {"batch", batch}, {"batches", batches}}},
                {"rows", rows_json(rows, 0.05)}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Plan: " << which << "\nRun here: " << w.tables.size() << " tables of at most 20000 rows, " << batches
      << " batches of " << batch << " samples, SYNTHETIC Zipf lookups, an LFU cache of the plan's share\n\n";
  print_rows(out, rows);
}

//! A lookup trace in the DLRM reference's format (io/dlrm_trace.hpp) replayed here through a tiered table's cache:
//! trace table t is the workload's table t (its row bytes, its skew), its rows renumbered, its cache a share of
//! the rows it looks up (a sweep, and the plan's share); batches of the workload's batch in samples. Beside each
//! cache: the bound of a static cache of the trace's most looked-up rows, the Zipf head share the plan prices at
//! the workload's skew, LRU's and LFU's replayed hit rates and LFU's bytes per tier a batch; and, at the plan's
//! share, the same with each batch's rows prefetched.
inline void replay_embedding_trace(const verify_request& a, const plan::system& s, const plan::embedding_workload& w,
                                   std::ostream& out) {
  const auto trace = io::read_dlrm_trace(a.trace);
  if (trace.size() > w.tables.size())
    throw bad_flag("--trace", a.trace,
                   "holds " + std::to_string(trace.size()) + " tables, but " + w.name + " has " +
                       std::to_string(w.tables.size()) + ". Fix: a trace of at most the workload's tables");
  const auto r = planned([&] { return plan::plan_embedding(s, w, options_of(a.planning)); });
  const auto i = plan::pooled_candidate(s, r, objective_of(a.planning));
  const double plan_share = i ? r.candidates[*i].plan.cache_share : 0.0;
  std::vector<double> shares{1.0 / 64, 1.0 / 16, 1.0 / 4, 1.0 / 2};
  if (plan_share > 0) shares.push_back(plan_share);
  std::sort(shares.begin(), shares.end());
  shares.erase(std::unique(shares.begin(), shares.end()), shares.end());
  const auto batch = static_cast<std::size_t>(std::max(1.0, w.batch));
  std::vector<embedding::dense_rows> dense;  // each table's rows renumbered once, for every cache size
  for (const auto& t : trace) dense.push_back(embedding::renumber(t.indices));
  struct point {
    double share, cached = 0, lookups = 0, ideal = 0, zipf = 0, lru = 0, lfu = 0, fast = 0, beyond = 0;
  };
  const auto measure = [&](double share, bool prefetch) {
    point p{share};
    for (std::size_t t = 0; t < trace.size(); ++t) {
      const auto& spec = w.tables[t];
      const auto rows = dense[t].rows;
      const auto cached = static_cast<std::size_t>(std::floor(share * static_cast<double>(rows)));
      const auto n = static_cast<double>(trace[t].indices.size());
      const auto row_bytes = static_cast<std::size_t>(spec.dimension) * 4;
      const auto lfu = embedding::replay(dense[t], trace[t].offsets, row_bytes, cached, embedding::cache_policy::lfu,
                                         batch, prefetch);
      p.cached += static_cast<double>(cached);
      p.lookups += n;
      p.lfu += static_cast<double>(lfu.traffic.hits);
      p.fast += lfu.traffic.bytes[0] / static_cast<double>(lfu.batches);
      p.beyond += lfu.traffic.bytes[1] / static_cast<double>(lfu.batches);
      if (prefetch) continue;
      p.ideal += n * embedding::static_cache_hit_rate(dense[t], cached);
      p.zipf += n * (cached ? model::zipf_head_share(static_cast<double>(cached), static_cast<double>(rows), spec.skew)
                            : 0.0);
      p.lru += static_cast<double>(
          embedding::replay(dense[t], trace[t].offsets, row_bytes, cached, embedding::cache_policy::lru, batch)
              .traffic.hits);
    }
    for (auto* x : {&p.ideal, &p.zipf, &p.lru, &p.lfu}) *x /= p.lookups;
    return p;
  };
  std::cerr << "trinity verify: replaying " << trace.size() << " tables of " << a.trace << "...\n";
  std::vector<point> points;
  for (const double share : shares) points.push_back(measure(share, false));
  const bool prefetched = plan_share > 0;
  const point ahead = prefetched ? measure(plan_share, true) : point{0};
  std::size_t samples = 0;
  for (const auto& t : trace) samples = std::max(samples, t.bags());
  const std::string which = i ? plan::describe(r.candidates[*i].plan, s) : plan::describe(r.chosen().plan, s);
  if (a.json) {
    json rows = json::array();
    for (const auto& p : points)
      rows.push_back({{"cache_share", p.share},
                      {"rows_cached", p.cached},
                      {"static_top_rows", p.ideal},
                      {"zipf_model", p.zipf},
                      {"lru", p.lru},
                      {"lfu", p.lfu},
                      {"fast_bytes_per_batch", p.fast},
                      {"capacity_bytes_per_batch", p.beyond}});
    json j{{"system", s.name},   {"plan", which},  {"trace", a.trace}, {"tables", trace.size()},
           {"samples", samples}, {"batch", batch}, {"rows", rows}};
    if (prefetched)
      j["prefetched"] = {{"cache_share", ahead.share},
                         {"hit_rate", ahead.lfu},
                         {"fast_bytes_per_batch", ahead.fast},
                         {"capacity_bytes_per_batch", ahead.beyond}};
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  out << "Plan: " << which << "\nReplayed here: " << a.trace << ", " << trace.size() << " tables, " << samples
      << " samples in batches of " << batch << "; trace table t is the workload's table t, its cache a share of "
      << "the rows it looks up\n\n";
  reports::table table({"cache share", "rows cached", "static top rows", "Zipf (the plan's model)", "LRU", "LFU",
                        "fast bytes a batch", "capacity bytes a batch"});
  const auto f = [](double v) { return units::detail::format_number(v); };
  for (const auto& p : points)
    table.add({plan::detail::share(p.share), f(p.cached), f(p.ideal), f(p.zipf), f(p.lru), f(p.lfu),
               to_string(bytes{p.fast}), to_string(bytes{p.beyond})});
  table.print(out);
  if (prefetched)
    out << "\nAt the plan's " << plan::detail::share(ahead.share) << ", each batch's rows prefetched ahead of it: hit "
        << "rate " << f(ahead.lfu) << ", " << to_string(bytes{ahead.fast}) << " from the fast tier and "
        << to_string(bytes{ahead.beyond}) << " brought from the capacity tier a batch\n";
}

}  // namespace detail

//! Recommendation inference over embedding tables on the tiers (plan/embedding_serve.hpp). `"type":
//! "embedding-serve"`.
struct embedding_serve {
  static constexpr std::string_view type = "embedding-serve";
  using description = plan::embedding_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_embedding(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"dlrm-serve"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_embedding(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    refuse_codec_flags(a.planning, "embedding-serve", "an embedding-serve plan stores its rows in fp32");
    detail::plan_embedding(a, s, w, out);  // --plot is refused by the registry: this kind draws no picture
  }
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "simulate");
    refuse_codec_flags(a.planning, "embedding-serve", "an embedding-serve plan stores its rows in fp32");
    const auto r = planned([&] { return plan::plan_embedding(s, w, options_of(a.planning)); });
    print_simulation(out, a, s, plan::describe(r.chosen().plan, s), s.fabric.empty() ? "rdma-cluster" : s.fabric,
                     detail::simulate_embedding(s, w, r, objective_of(a.planning)));
  }
  //! A plan's lookups run here, scaled down, beside the model.
  static void verify(const verify_request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    refuse_replay_flags(a, "embedding-serve", /*takes_trace=*/true);
    if (a.trace.empty())
      detail::verify_embedding(a, s, w, out);
    else
      detail::replay_embedding_trace(a, s, w, out);
  }
};

}  // namespace trinity::workloads
