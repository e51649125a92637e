#pragma once
//! \file
//! Planning recommendation inference over large embedding tables (the CXL report's §5.2 DLRM case): each batch
//! looks up `pooling` rows of every table for each sample, pools them, and runs the dense part. What the planner
//! chooses, and what each choice trades:
//!  - where the tables live: in every device's memory, sharded over the scale-up domain's memory (rows read over
//!    the interconnect, as model-parallel DLRM shards its tables), or in one of the system's capacity tiers;
//!  - for tables in a capacity tier, the share of each table's rows (its most popular) cached in device memory, as
//!    TorchRec's UVM-caching tables keep them: memory for bandwidth.
//! Per batch (model/embedding_lookup.hpp): each table's rows gathered at once, a hit from the cache, a miss from
//! where the table lives; the cache's hit rate the Zipf head share of the cached rows (model/zipf.hpp: an ideal
//! LFU cache, which an online LRU or LFU approaches from below: embedding::tiered_table replays measure theirs).
//! The dense part at the device's bf16 rate. A batch's latency is its gathers and its dense part; the plan keeps
//! up when the batches a second, times their device time, fit the devices, and the pool's bytes fit its links.
//! Initialization, the tables written once into where they live, is priced beside it (the report's second phase).

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/embedding_lookup.hpp>
#include <trinity/model/zipf.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/rag_serve.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct embedding_table_spec {
  std::string name;
  double rows = 0;
  std::size_t dimension = 0;  //!< fp32 values a row
  double skew = 0;            //!< Zipf exponent of the rows' popularity (0: every row as likely)
  double pooling = 1;         //!< rows a sample looks up in this table

  [[nodiscard]] bytes row_bytes() const { return bytes{4.0 * static_cast<double>(dimension)}; }
  [[nodiscard]] bytes table_bytes() const { return rows * row_bytes(); }
};

struct embedding_workload {
  std::string name;
  std::vector<embedding_table_spec> tables;
  double batch = 0;               //!< samples a batch
  flops dense_flops{};            //!< the dense part's FLOPs a sample (bottom and top MLPs, interaction)
  double samples_per_second = 0;  //!< over the whole system
  seconds latency_slo{};          //!< a batch's latency, at most
  assumptions assumed = {};

  [[nodiscard]] bytes table_bytes() const {
    bytes b{};
    for (const auto& t : tables) b += t.table_bytes();
    return b;
  }
};

inline void validate(const embedding_workload& w, const system&) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  trinity::detail::require(!w.tables.empty() && w.tables.size() <= 4096, "workload.tables",
                           "needs from 1 to 4096 tables");
  for (std::size_t i = 0; i < w.tables.size(); ++i) {
    const auto& t = w.tables[i];
    const std::string at = "workload.tables[" + std::to_string(i) + "]";
    trinity::detail::require(!t.name.empty(), at + ".name", "every table needs a name");
    trinity::detail::require(t.rows >= 1 && t.rows <= 1e13, at + ".rows", "must be from 1 to 1e13 rows");
    trinity::detail::require(t.dimension >= 1 && t.dimension <= 65536, at + ".dimension",
                             "must be from 1 to 65536 values a row");
    detail::require_non_negative(t.skew, at + ".skew");
    trinity::detail::require(t.skew <= 4, at + ".skew", "a Zipf exponent of at most 4");
    detail::require_positive(t.pooling, at + ".pooling");
  }
  detail::require_positive(w.batch, "workload.batch");
  detail::require_non_negative(w.dense_flops, "workload.dense_flops");
  detail::require_positive(w.samples_per_second, "workload.samples_per_second");
  detail::require_positive(w.latency_slo, "workload.latency_slo");
}

struct embedding_plan {
  list_home home = list_home::replicated;
  std::size_t pool = 0;    //!< pooled: the tier the tables live in
  double cache_share = 0;  //!< pooled: the share of each table's rows (its most popular) cached in device memory
  friend bool operator==(const embedding_plan&, const embedding_plan&) = default;
};

struct embedding_cost {
  double hit_rate = 0;            //!< lookup-weighted, over the tables
  model::search_traffic traffic;  //!< per batch: [0] device memory, [1] the interconnect or the pool
  seconds lookup{}, dense{}, initialization{};
  double devices_busy = 0;
  bytes_per_second pool_rate{}, pool_limit{};
  std::vector<bytes> tier_bytes;  //!< per device
  resource_vector total;          //!< per batch: FLOPs, pool bytes, device bytes, energy, latency
  double dollars = 0;             //!< per batch
};

//! A plan's cost per batch, its second tier read as `second` (second_tier_access, or rdma_pool_access).
inline embedding_cost price(const system& s, const embedding_workload& w, const embedding_plan& p,
                            const model::tier_access& second) {
  const double devices = static_cast<double>(s.device.count);
  embedding_cost c;
  c.traffic = {{0.0, 0.0}, {0.0, 0.0}};
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  double lookups = 0, hits = 0;
  for (const auto& t : w.tables) {
    const double n = w.batch * t.pooling;
    const double rb = t.row_bytes().value();
    lookups += n;
    if (p.home == list_home::replicated) {
      c.traffic.bytes[0] += n * rb;
      c.traffic.reads[0] += n;
      c.tier_bytes[0] += t.table_bytes();
      hits += n;
      continue;
    }
    if (p.home == list_home::sharded) {
      // A sample's rows are on the device that holds its table's shard: 1/devices of them local.
      const double local = n / devices;
      c.traffic.bytes[0] += local * rb;
      c.traffic.reads[0] += local;
      c.traffic.bytes[1] += (n - local) * rb;
      c.traffic.reads[1] += n - local;
      c.tier_bytes[0] += t.table_bytes() / devices;
      continue;
    }
    const double cached_rows = std::floor(p.cache_share * t.rows);
    const double h = model::zipf_head_share(cached_rows, t.rows, t.skew);
    const auto traffic = model::embedding_lookup_traffic(n, rb, h, cached_rows > 0);
    for (std::size_t i = 0; i < 2; ++i) {
      c.traffic.bytes[i] += traffic.bytes[i];
      c.traffic.reads[i] += traffic.reads[i];
    }
    hits += h * n;
    c.tier_bytes[0] += cached_rows * t.row_bytes();
    c.tier_bytes[p.pool] += t.table_bytes() / devices;  // one copy for every device: its share, as tiers count
  }
  c.hit_rate = p.home == list_home::sharded ? 0.0 : hits / lookups;
  const model::tier_access tiers[] = {{s.tiers.front().latency, s.tiers.front().bandwidth}, second};
  c.lookup = model::gather_time(c.traffic, tiers, static_cast<double>(w.tables.size()));
  c.dense = w.batch * w.dense_flops / s.device.rate("bf16");
  const seconds device_time = c.lookup + c.dense;
  c.devices_busy = w.samples_per_second / w.batch * device_time.value();
  c.pool_rate = bytes_per_second{w.samples_per_second / w.batch * c.traffic.bytes[1]};
  c.pool_limit = devices * (p.home == list_home::sharded ? s.interconnect.bandwidth : second.bandwidth);
  // Written once where they live: each device its copy (replicated), its shard, or the pool's one copy over all
  // the devices' links.
  const bytes written = p.home == list_home::replicated ? w.table_bytes() : w.table_bytes() / devices;
  c.initialization = written / (p.home == list_home::pooled ? second.bandwidth : s.tiers.front().bandwidth);
  c.total.time = device_time;
  c.total.compute = w.batch * w.dense_flops;
  c.total.bandwidth = bytes{c.traffic.bytes[1]};
  c.total.memory = c.tier_bytes[0];
  c.total.energy =
      device_time * s.device.power + bytes{c.traffic.bytes[0]} * s.tiers.front().energy +
      bytes{c.traffic.bytes[1]} * (p.home == list_home::pooled ? s.tiers[p.pool].energy : s.interconnect.energy);
  c.dollars = dollars(s, device_time, c.tier_bytes, bytes{});
  return c;
}

inline model::tier_access second_tier_access(const system& s, const embedding_plan& p) {
  return second_tier_access(s, rag_plan{1, p.home, p.pool, 0});
}

inline embedding_cost price(const system& s, const embedding_workload& w, const embedding_plan& p) {
  return price(s, w, p, second_tier_access(s, p));
}

inline std::string describe(const embedding_plan& p, const system& s) {
  switch (p.home) {
    case list_home::replicated:
      return "tables in every " + s.tiers.front().name;
    case list_home::sharded:
      return "tables sharded over " + std::to_string(s.device.count) + " x " + s.tiers.front().name + " (" +
             s.interconnect.name + ")";
    default:
      return "tables in " + s.tiers[p.pool].name +
             (p.cache_share > 0
                  ? ", the hottest " + detail::share(p.cache_share) + " of rows cached in " + s.tiers.front().name
                  : std::string(", no cache"));
  }
}

using embedding_evaluated = candidate<embedding_plan, embedding_cost>;
//! Pareto keys: batch latency, energy, device bytes, pool bytes a batch, dollars.
using embedding_plan_result = result<embedding_plan, embedding_cost>;

namespace detail {

struct embedding_problem {
  struct home {
    using spends = resources::bandwidth;
    using saves = resources::memory;
    static constexpr std::string_view name = "where the tables live";
    static list_home& of(embedding_plan& p) { return p.home; }
  };
  struct cache {
    using spends = resources::memory;
    using saves = resources::bandwidth;
    static constexpr std::string_view name = "hot rows cached in device memory";
    static double& of(embedding_plan& p) { return p.cache_share; }
  };
  using slots = slot_list<home, cache>;
  using plan_type = embedding_plan;
  using cost_type = embedding_cost;
  static constexpr const char* time_word = "batch latency";

  const system& s;
  const embedding_workload& w;
  const planner_options& o;
  std::vector<model::compressor_cost> none = {};

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return none; }
  template <class F>
  void for_each_plan(F&& f) const {
    f(embedding_plan{list_home::replicated, 0, 0});
    if (s.device.count > 1) f(embedding_plan{list_home::sharded, 0, 0});
    static constexpr double shares[] = {0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5};
    for (std::size_t t = 1; t < s.tiers.size(); ++t)
      for (const double c : shares) f(embedding_plan{list_home::pooled, t, c});
  }
  [[nodiscard]] embedding_cost price(const embedding_plan& p) const { return plan::price(s, w, p); }
  [[nodiscard]] std::string check(const embedding_plan&, const embedding_cost& c) const {
    if (auto broken = tiers_fit(s, c.tier_bytes, c.devices_busy,
                                "sample rate: " + units::detail::format_number(w.samples_per_second) + " samples/s",
                                c.pool_rate, c.pool_limit);
        !broken.empty())
      return broken;
    if (c.total.time > w.latency_slo)
      return "latency objective: a batch takes " + to_string(c.total.time) + ", more than " + to_string(w.latency_slo);
    return {};
  }
  [[nodiscard]] bool is_baseline(const embedding_plan& p) const { return p.home == list_home::replicated; }
  [[nodiscard]] bool better(const embedding_evaluated& a, const embedding_evaluated& b) const {
    const auto key = [&](const embedding_cost& c) {
      return std::array{score(c, o.objective), score(c, runner_up(o.objective)), c.total.memory.value(),
                        c.total.bandwidth.value()};
    };
    return key(a.cost) < key(b.cost);
  }
  [[nodiscard]] std::array<double, 5> pareto_keys(const embedding_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.total.bandwidth.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const embedding_plan& p) const { return plan::describe(p, s); }
  [[nodiscard]] std::string binding(const embedding_evaluated& e) const {
    if (!e.fits()) return e.violation;
    const auto& c = e.cost;
    return (c.lookup > c.dense ? "the lookups (" + pct(c.lookup / c.total.time)
                               : "the dense part (" + pct(c.dense / c.total.time)) +
           " of a " + to_string(c.total.time) + " batch); hit rate " + units::detail::format_number(c.hit_rate) + "; " +
           units::detail::format_number(c.devices_busy) + " of " + std::to_string(s.device.count) + " devices busy";
  }
  [[nodiscard]] std::vector<std::string> trades(const embedding_plan_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    if (r.choice == r.baseline) return {"none: the tables in every device's memory is already the best that fits"};
    return {describe(c.plan) + ": device memory " + to_string(b.cost.total.memory) + " -> " +
            to_string(c.cost.total.memory) + " a device, bytes beyond it " + to_string(b.cost.total.bandwidth) +
            " -> " + to_string(c.cost.total.bandwidth) + " a batch, lookups " + to_string(b.cost.lookup) + " -> " +
            to_string(c.cost.lookup)};
  }
  //! Every home without a cache, and the chosen home at every cache size.
  [[nodiscard]] bool neighbour(const embedding_plan_result& r, std::size_t i) const {
    const auto& a = r.candidates[i].plan;
    const auto& c = r.chosen().plan;
    return a.cache_share == 0 || (a.home == c.home && a.pool == c.pool);
  }
  [[noreturn]] void none_fits(const embedding_plan_result& r) const {
    std::string why;
    for (const auto& e : r.candidates)
      if (e.plan.cache_share == 0) why += "\n  " + describe(e.plan) + ": " + e.violation;
    throw invalid_input("workload", "no placement of " + w.name + "'s tables serves it on " + s.name + ":" + why +
                                        "\nFix: fewer samples_per_second or rows, a larger batch or latency_slo, or "
                                        "a system with a capacity tier that holds the tables");
  }
};

}  // namespace detail

//! Every placement and cache size priced and checked; the best for the objective; the Pareto front; why.
inline embedding_plan_result plan_embedding(const system& s, const embedding_workload& w,
                                            const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  return solve(detail::embedding_problem{s, w, o}, o);
}

namespace presets {

//! DLRM v2 (DCNv2) on Criteo 1TB as MLPerf's reference (torchrec_dlrm) sizes it: 26 tables of 128-dimension fp32
//! rows, capped at 40 million rows (--num_embeddings_per_feature), each looked up its multi-hot size a sample
//! (--multi_hot_sizes); a bottom MLP 13-512-256-128, three DCN cross layers of rank 512 over the 27 × 128
//! interaction, a top MLP 1024-1024-512-256-1 (--dense_arch_layer_sizes, --over_arch_layer_sizes,
//! --dcn_num_layers, --dcn_low_rank_dim): 2 FLOPs a multiply-add. 105 GB of tables: more than an H100's memory,
//! less than a GB200's. Assumptions to replace with yours: the rows' popularity, Zipf 1.05 in every table
//! (Criteo's skew is table by table); batch 2,048; a million samples a second; 10 ms a batch.
inline embedding_workload dlrm_serve() {
  embedding_workload w;
  w.name = "dlrm-serve";
  static constexpr double rows[] = {40e6, 39060, 17295, 7424, 20265, 3,  7122, 1543, 63,   40e6,   3067956, 405282, 10,
                                    2209, 11938, 155,   4,    976,   14, 40e6, 40e6, 40e6, 590152, 12973,   108,    36};
  static constexpr double hot[] = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
  for (std::size_t i = 0; i < std::size(rows); ++i)
    w.tables.push_back({"t" + std::to_string(i), rows[i], 128, 1.05, hot[i]});
  const auto mlp = [](std::initializer_list<double> widths) {
    double macs = 0;
    for (auto a = widths.begin(), b = std::next(a); b != widths.end(); ++a, ++b) macs += *a * *b;
    return macs;
  };
  const double interaction = 27 * 128;
  const double macs =
      mlp({13, 512, 256, 128}) + 3 * 2 * interaction * 512 + mlp({interaction, 1024, 1024, 512, 256, 1});
  w.dense_flops = flops{2 * macs};
  w.batch = 2048;
  w.samples_per_second = 1e6;
  w.latency_slo = seconds{0.01};
  assume(w.assumed, "tables[*].skew", 1.05);
  assume(w.assumed, "batch", w.batch);
  assume(w.assumed, "samples_per_second", w.samples_per_second);
  assume(w.assumed, "latency_slo", w.latency_slo);
  return w;
}

inline std::optional<embedding_workload> find_embedding(std::string_view name) {
  if (name == "dlrm-serve") return dlrm_serve();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
