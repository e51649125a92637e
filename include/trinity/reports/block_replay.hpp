#pragma once
//! \file
//! What `trinity cache replay --format mooncake` measured: block-hashed requests through the exact prefix cache
//! at each capacity, one curve per eviction policy beside the infinite-capacity bound, both hit-rate families
//! fitted to each, and, on a system's tiers, the tiered replay that demotes blocks instead of dropping them; as
//! JSON, as text, and drawn. Semantics: cache/block_replay.hpp, cache/tiered_prefix_cache.hpp, docs/cache.md.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/reports/gnuplot.hpp>
#include <trinity/reports/hit_rate_fits.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

//! One eviction policy's replays, capacity by capacity, and the families fitted to them.
struct block_curve {
  std::string eviction;
  std::vector<cache::block_replay_result> rows;
  hit_rate_fits fits;
};

//! One tiered replay: device memory of `capacity_blocks` blocks, then the system's lower tiers.
struct tiered_run {
  std::uint64_t capacity_blocks = 0;
  std::vector<cache::prefix_tier> tiers;
  std::vector<cache::tier_counts> counts;
  flops saved{};
  seconds loading{};
};

//! Replays `trace` with `hbm` blocks on s's device and `lower[t]` blocks in its tier t + 1, each block's prefill
//! costing prefill[depth] at the device's bf16 rate.
inline tiered_run tiered_replay(const std::vector<cache::block_request>& trace, const plan::system& s,
                                std::uint64_t hbm, const std::vector<std::uint64_t>& lower, bytes block,
                                const std::vector<flops>& prefill) {
  tiered_run run{hbm, {{s.tiers[0].name, hbm, {}, {}}}, {}, {}, {}};
  for (std::size_t t = 0; t < lower.size(); ++t)
    run.tiers.push_back({s.tiers[t + 1].name, lower[t], s.tiers[t + 1].bandwidth, s.tiers[t + 1].latency});
  cache::tiered_prefix_cache kv({.tiers = run.tiers,
                                 .block_bytes = block,
                                 .prefill = [&](std::size_t d) { return prefill[d]; },
                                 .device_rate = s.device.rate("bf16")});
  for (const auto& q : trace) {
    const auto r = kv.request(0, q.hash_ids);
    run.saved += r.saved;
    run.loading += r.load_time;
  }
  run.counts = kv.counts();
  return run;
}

struct block_replay_report {
  std::string trace, plot;  //!< the trace replayed and the picture's path
  std::size_t requests = 0;
  std::uint64_t blocks_total = 0, distinct = 0;
  std::size_t block_tokens = 0, horizon = 0;
  bytes per_token{}, block{};
  cache::block_replay_result bound;  //!< at infinite capacity
  std::vector<std::uint64_t> caps;
  std::vector<block_curve> curves;
  std::optional<plan::system> sys;  //!< the system of the tiered runs, when there are any
  std::vector<tiered_run> tiered;
  flops prefill_total{};  //!< the trace's whole prefill, what a tiered replay's savings are a share of
};

namespace detail {
inline nlohmann::json tiered_json(const block_replay_report& r) {
  auto out = nlohmann::json::array();
  for (const auto& run : r.tiered) {
    nlohmann::json jr{{"capacity_blocks", run.capacity_blocks},
                      {"prefill_flops", r.prefill_total.value()},
                      {"prefill_flops_saved", run.saved.value()},
                      {"load_seconds", run.loading.value()},
                      {"tiers", nlohmann::json::array()}};
    for (std::size_t t = 0; t < run.tiers.size(); ++t) {
      const auto& c = run.counts[t];
      jr["tiers"].push_back({{"name", run.tiers[t].name},
                             {"capacity_blocks", run.tiers[t].capacity_blocks},
                             {"hits", c.hits},
                             {"recomputed", c.recomputed},
                             {"loaded_bytes", c.loaded.value()},
                             {"demoted_bytes", c.demoted.value()},
                             {"dropped_blocks", c.dropped}});
    }
    out.push_back(jr);
  }
  return out;
}
}  // namespace detail

[[nodiscard]] inline nlohmann::json to_json(const block_replay_report& r) {
  using json = nlohmann::json;
  json out{{"trace", r.trace},
           {"format", "mooncake"},
           {"requests", r.requests},
           {"blocks", r.blocks_total},
           {"distinct_blocks", r.distinct},
           {"block_tokens", r.block_tokens},
           {"kv_bytes_per_token", r.per_token.value()},
           {"kv_bytes_per_block", r.block.value()},
           {"infinite",
            {{"capacity_blocks", r.distinct},
             {"block_hit_rate", r.bound.block_hit_rate()},
             {"token_hit_rate", r.bound.token_hit_rate()}}},
           {"rows", json::array()},
           {"fits", json::array()}};
  for (const auto& c : r.curves) {
    for (const auto& row : c.rows)
      out["rows"].push_back({{"eviction", c.eviction},
                             {"capacity_blocks", row.capacity_blocks},
                             {"capacity_bytes", static_cast<double>(row.capacity_blocks) * r.block.value()},
                             {"block_hit_rate", row.block_hit_rate()},
                             {"token_hit_rate", row.token_hit_rate()},
                             {"hit_blocks", row.hit_blocks},
                             {"hit_tokens", row.hit_tokens},
                             {"evicted_blocks", row.evicted_blocks}});
    json f{{"eviction", c.eviction}};
    if (c.eviction == "shared-prefix") f["shared_horizon"] = r.horizon;
    c.fits.add_to(f);
    out["fits"].push_back(f);
  }
  if (r.sys) out["tiered"] = detail::tiered_json(r);
  if (!r.plot.empty()) out["plot"] = r.plot;
  return out;
}

namespace detail {
// Each policy against the first named, capacity by capacity, in block hit rate.
inline void print_policy_differences(std::ostream& os, const block_replay_report& r) {
  const auto& curves = r.curves;
  for (std::size_t k = 1; k < curves.size(); ++k) {
    double mean = 0, best = -1, worst = 1;
    for (std::size_t i = 0; i < r.caps.size(); ++i) {
      const double d = curves[k].rows[i].block_hit_rate() - curves[0].rows[i].block_hit_rate();
      mean += d / static_cast<double>(r.caps.size());
      best = std::max(best, d);
      worst = std::min(worst, d);
    }
    os << curves[k].eviction << " vs " << curves[0].eviction << ": block hit rate " << (mean >= 0 ? "+" : "")
       << fixed(mean, 4) << " on average over the capacities (from " << fixed(worst, 4) << " to " << fixed(best, 4)
       << ")\n";
  }
}

inline void print_tiered(std::ostream& os, const block_replay_report& r) {
  for (const auto& run : r.tiered) {
    os << "\nTiered (lru, Llama-3-70B prefill on " << r.sys->device.name << "): " << run.capacity_blocks
       << " blocks in " << r.sys->tiers[0].name << ", demoted below instead of dropped; prefill saved "
       << fixed(100.0 * (run.saved / r.prefill_total), 1) << "% of " << to_string(r.prefill_total) << ", loads "
       << to_string(run.loading) << "\n";
    table tt({"tier", "blocks", "hits served", "recomputed instead", "loaded", "demoted into", "dropped"});
    for (std::size_t k = 0; k < run.tiers.size(); ++k) {
      const auto& c = run.counts[k];
      tt.add({run.tiers[k].name, std::to_string(run.tiers[k].capacity_blocks), std::to_string(c.hits),
              std::to_string(c.recomputed), to_string(c.loaded), to_string(c.demoted), std::to_string(c.dropped)});
    }
    tt.print(os);
  }
}
}  // namespace detail

inline void print(std::ostream& os, const block_replay_report& r) {
  os << "Replayed " << r.requests << " requests (" << r.blocks_total << " blocks of " << r.block_tokens << " tokens, "
     << r.distinct << " distinct) through the prefix cache in file order.\nKV per block " << to_string(r.block) << " ("
     << to_string(r.per_token) << " per token).\nInfinite capacity (" << r.distinct << " blocks, "
     << to_string(static_cast<double>(r.distinct) * r.block) << "): block hit rate " << fixed(r.bound.block_hit_rate())
     << ", token hit rate " << fixed(r.bound.token_hit_rate()) << "\n\n";
  std::vector<std::string> header{"capacity (blocks)", "KV bytes"};
  for (const auto& c : r.curves) {
    header.push_back(c.eviction + " block hit");
    header.push_back(c.eviction + " token hit");
  }
  table t(header);
  for (std::size_t i = 0; i < r.caps.size(); ++i) {
    std::vector<std::string> row{std::to_string(r.caps[i]), to_string(static_cast<double>(r.caps[i]) * r.block)};
    for (const auto& c : r.curves) {
      row.push_back(fixed(c.rows[i].block_hit_rate()));
      row.push_back(fixed(c.rows[i].token_hit_rate()));
    }
    t.add(row);
  }
  t.print(os);
  detail::print_policy_differences(os, r);
  table f({"eviction", "fit", "parameters", "rmse", "max |error|"});
  for (const auto& c : r.curves) {
    if (c.fits.exponential)
      f.add({c.eviction, "exponential saturation",
             "beta = " + units::detail::format_number(c.fits.exponential->model.beta),
             fixed(c.fits.exponential->rmse, 4), fixed(c.fits.exponential->max_abs_error, 4)});
    if (c.fits.power)
      f.add({c.eviction, "power law", c.fits.power_law_parameters(), fixed(c.fits.power->rmse, 4),
             fixed(c.fits.power->max_abs_error, 4)});
  }
  os << "\nHit rate against capacity in bytes, fitted:\n";
  f.print(os);
  detail::print_tiered(os, r);
  if (!r.plot.empty() && std::filesystem::exists(r.plot)) os << "\nwrote " << r.plot << '\n';
}

//! The curves, their power-law fits and the infinite-capacity bound as a PNG at r.plot.
inline void draw(const block_replay_report& r) {
  const std::string who = "trinity cache replay";
  auto plot = begin_hit_rate_plot(r.plot, "prefix cache capacity (GB of KV)", "block hit rate",
                                  "Prefix cache on the trace: block hit rate against capacity", who);
  if (!plot) return;
  auto& gp = *plot;
  gp << r.bound.block_hit_rate() << " with lines dt 3 lc rgb 'gray' title 'infinite capacity'";
  for (std::size_t i = 0; i < r.curves.size(); ++i)
    gp << ", '-' using 1:2 with linespoints lw 2 lc " << i + 1 << " title "
       << quoted(r.curves[i].eviction + " (measured)")
       << r.curves[i].fits.power_law_plot(i + 1, r.curves[i].eviction + " power-law fit");
  gp << '\n';
  for (const auto& c : r.curves) {
    for (const auto& row : c.rows)
      gp << static_cast<double>(row.capacity_blocks) * r.block.value() / 1e9 << ' ' << row.block_hit_rate() << '\n';
    gp << "e\n";
  }
  finish_plot(r.plot, gp, who);
}

}  // namespace trinity::reports
