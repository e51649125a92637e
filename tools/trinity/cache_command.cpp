// trinity cache: memory -> compute, measured. `replay` runs a request trace
// through the approximate cache at several capacities (and latent sizes),
// prints the hit-rate curve, fits both hit-rate families of the paper
// (§5.1.2) and draws the curve; `gen-trace` writes a synthetic trace.
// Semantics: include/trinity/cache/replay.hpp and docs/cache.md.

#include "cli.hpp"

#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/io/block_trace.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/format.hpp>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace trinity::cli {
namespace {

using json = nlohmann::json;

std::string fixed(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<bytes> size_list(const std::vector<std::string>& given, std::string_view flag) {
  std::vector<bytes> out;
  for (const auto& g : given)
    for (const auto& item : split(g)) {
      const bytes b = quantity_flag<bytes>(item, flag);
      if (b <= bytes{}) throw bad_flag(flag, item, "must be a positive size, e.g. 10GB");
      out.push_back(b);
    }
  if (out.empty()) throw usage_error(std::string(flag) + " needs at least one size, e.g. 1GB,10GB,100GB");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct replay_args {
  std::string trace, embeddings, warmup = "0.2", index = "flat", eviction = "lru", steps = "50", step_flops = "1e9",
                                 plot, ef = "64", points_out, format = "csv", horizon = "1000", block_tokens = "512";
  // Llama-3-70B's KV per token in bf16 (model::shapes::llama3_70b, from Meta's config.json).
  std::string kv_per_token =
      std::to_string(static_cast<long long>(model::kv_bytes_per_token(model::shapes::llama3_70b, 2).value())) + "B";
  std::string system;  // mooncake: the system whose tiers below the device a tiered replay spills to
  std::vector<std::string> capacities, latent_sizes, capacity_blocks, tier_blocks;
  bool json = false;
  CLI::App* command = nullptr;  // to ask which flags were given
};

struct curve {
  bytes latent_size{};
  std::vector<cache::replay_result> points;
  std::optional<model::fit_result<model::exponential_saturation>> exponential;
  std::optional<model::fit_result<model::power_law>> power;
};

template <class Eviction>
std::vector<cache::replay_result> run_curve(const replay_args& a, const cache::embedding_matrix& e,
                                            const std::vector<cache::request>& trace, const std::vector<bytes>& caps,
                                            cache::replay_options o, std::size_t ef) {
  std::vector<cache::replay_result> out;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    std::cerr << "trinity cache replay: " << trace.size() << " requests, latent " << to_string(o.latent_size)
              << ", capacity " << to_string(caps[i]) << " (" << i + 1 << "/" << caps.size() << ")\n";
    o.capacity = caps[i];
    const auto replay_with = [&](auto index) {
      cache::approximate_cache<decltype(index), Eviction> c(std::move(index), {caps[i], o.step_cost});
      return cache::replay(c, e, trace, o);
    };
    out.push_back(a.index == "hnsw" ? replay_with(cache::hnsw_index(e.dimension, {.ef_search = ef}))
                                    : replay_with(cache::flat_index(e.dimension)));
  }
  return out;
}

// A gnuplot script beside the picture, begun with the axes every hit-rate plot shares; empty when gnuplot is
// not installed (said on stderr).
std::optional<std::ofstream> begin_plot(const std::string& path, const std::string& xlabel, const std::string& ylabel,
                                        const std::string& title) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << "trinity cache replay: gnuplot is not installed (Debian: gnuplot-nox); no picture drawn\n";
    return std::nullopt;
  }
  std::optional<std::ofstream> gp(std::in_place, path + ".gp");
  *gp << "set terminal pngcairo size 1000,650 noenhanced\nset output '" << path << "'\n"
      << "set logscale x\nset key bottom right\nset grid\nset yrange [0:1]\n"
      << "set xlabel '" << xlabel << "'\nset ylabel '" << ylabel << "'\nset title '" << title << "'\nplot ";
  return gp;
}

// Runs the script begun by begin_plot; keeps it when gnuplot fails, to be looked at.
void finish_plot(const std::string& path, std::ofstream& gp) {
  gp.close();
  const std::string script = path + ".gp";
  if (std::system(("gnuplot '" + script + "' 2>/dev/null").c_str()) != 0)
    std::cerr << "trinity cache replay: gnuplot failed; its script is " << script << '\n';
  else
    std::filesystem::remove(script);
}

void draw(const std::string& path, const std::vector<curve>& curves) {
  auto plot = begin_plot(path, "cache capacity (GB)", "hit rate (after warm-up)",
                         "Approximate cache: hit rate against capacity per latent size (cf. paper Figure 9)");
  if (!plot) return;
  auto& gp = *plot;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    gp << (i ? ", " : "") << "'-' using 1:2 with linespoints lw 2 lc " << i + 1 << " title 'latent "
       << to_string(curves[i].latent_size) << " (measured)'";
    if (curves[i].power)
      gp << ", (x > 0 ? 1 - (1 + " << curves[i].power->model.kappa.value() * 1e9 << " * x) ** (-"
         << curves[i].power->model.gamma << ") : 0) with lines dt 2 lc " << i + 1 << " title 'power-law fit'";
  }
  gp << '\n';
  for (const auto& c : curves) {
    for (const auto& p : c.points) gp << p.capacity.value() / 1e9 << ' ' << p.hit_rate << '\n';
    gp << "e\n";
  }
  finish_plot(path, gp);
}

// Flags of the other format are refused, not ignored.
void refuse_flags(const replay_args& a, std::initializer_list<const char*> flags, const char* format) {
  for (const char* f : flags)
    if (a.command->count(f)) throw usage_error(std::string(f) + " does not apply to --format " + format + "; drop it");
}

// Both hit-rate families as the JSON writes them.
template <class Fits>
void add_fits_json(json& out, const Fits& c) {
  if (c.exponential)
    out["exponential_saturation"] = {{"beta", c.exponential->model.beta},
                                     {"rmse", c.exponential->rmse},
                                     {"max_abs_error", c.exponential->max_abs_error}};
  if (c.power)
    out["power_law"] = {{"kappa_per_gb", c.power->model.kappa.value() * 1e9},
                        {"gamma", c.power->model.gamma},
                        {"rmse", c.power->rmse},
                        {"max_abs_error", c.power->max_abs_error}};
}
// A replay's curves and what they were measured over, for printing.
struct replay_report {
  std::size_t requests, dimension;
  double warmup;
  int steps;
  double step_flops;
  std::vector<curve> curves;
};

void print_replay_json(const replay_args& a, const replay_report& r) {
  const auto& [requests, dimension, warmup, steps, step_flops, curves] = r;
  const auto depths = cache::runtime_reuse{}.depths();
  json out{{"trace", a.trace},         {"embeddings", a.embeddings}, {"requests", requests},   {"dimension", dimension},
           {"warmup", warmup},         {"index", a.index},           {"eviction", a.eviction}, {"steps", steps},
           {"step_flops", step_flops}, {"curves", json::array()}};
  for (const auto& c : curves) {
    json jc{{"latent_size_bytes", c.latent_size.value()},
            {"entry_size_bytes", c.points.front().entry_size.value()},
            {"points", json::array()}};
    for (const auto& p : c.points) {
      json per_depth = json::object();
      for (const int d : depths)
        per_depth[std::to_string(d)] = p.hits_per_depth.contains(d) ? p.hits_per_depth.at(d) : 0;
      jc["points"].push_back({{"capacity_bytes", p.capacity.value()},
                              {"requests", p.requests},
                              {"hits", p.hits},
                              {"hit_rate", p.hit_rate},
                              {"hits_per_depth", per_depth},
                              {"saved_flops", p.saved.value()},
                              {"saved_share", p.saved_share},
                              {"insertions", p.insertions},
                              {"evictions", p.evictions},
                              {"entries_at_end", p.entries_at_end}});
    }
    add_fits_json(jc, c);
    out["curves"].push_back(jc);
  }
  if (!a.plot.empty()) out["plot"] = a.plot;
  std::cout << out.dump(2) << '\n';
}

void print_replay_text(const replay_args& a, const replay_report& r) {
  const auto& [requests, dimension, warmup, steps, step_flops, curves] = r;
  const auto depths = cache::runtime_reuse{}.depths();
  std::cout << "Replayed " << requests << " requests (" << dimension << "-d embeddings) through the " << a.index
            << " index with " << a.eviction << " eviction; Table 1 reuse; counted after the first "
            << fixed(warmup * 100, 0) << "%.\nA full request runs " << steps << " steps of "
            << to_string(flops{step_flops}) << "; an entry stores latents at steps";
  for (const int d : depths) std::cout << ' ' << d;
  std::cout << ".\n";
  for (const auto& c : curves) {
    std::cout << "\nLatent " << to_string(c.latent_size) << " (entry " << to_string(c.points.front().entry_size)
              << "):\n";
    std::vector<std::string> header{"capacity", "entries", "hit rate"};
    for (const int d : depths) header.push_back("@" + std::to_string(d));
    header.insert(header.end(), {"saved compute", "saved share"});
    table t(header);
    for (const auto& p : c.points) {
      std::vector<std::string> row{to_string(p.capacity), std::to_string(p.entries_at_end), fixed(p.hit_rate)};
      for (const int d : depths)
        row.push_back(std::to_string(p.hits_per_depth.contains(d) ? p.hits_per_depth.at(d) : 0));
      row.push_back(to_string(p.saved));
      row.push_back(fixed(p.saved_share * 100, 1) + "%");
      t.add(row);
    }
    t.print(std::cout);
    std::uint64_t hits = 0;
    double depth_sum = 0;
    for (const auto& p : c.points)
      for (const auto& [d, n] : p.hits_per_depth)
        hits += n, depth_sum += static_cast<double>(d) * static_cast<double>(n);
    if (hits)
      std::cout << "mean reuse depth of a hit: " << fixed(depth_sum / static_cast<double>(hits), 1) << " steps\n";
    if (c.exponential || c.power) {
      table f({"fit", "parameters", "rmse", "max |error|"});
      if (c.exponential)
        f.add({"exponential saturation", "beta = " + fixed(c.exponential->model.beta, 4), fixed(c.exponential->rmse, 4),
               fixed(c.exponential->max_abs_error, 4)});
      if (c.power)
        f.add({"power law",
               "kappa = " + fixed(c.power->model.kappa.value() * 1e9, 4) +
                   "/GB, gamma = " + fixed(c.power->model.gamma, 4),
               fixed(c.power->rmse, 4), fixed(c.power->max_abs_error, 4)});
      std::cout << '\n';
      f.print(std::cout);
      if (c.exponential && c.power)
        std::cout << "better fit: " << (c.power->rmse < c.exponential->rmse ? "power law" : "exponential saturation")
                  << '\n';
    }
  }
  if (!a.plot.empty() && std::filesystem::exists(a.plot)) std::cout << "\nwrote " << a.plot << '\n';
}

void run_replay(const replay_args& a) {
  if (a.format != "csv") throw bad_flag("--format", a.format, "expected csv or mooncake");
  refuse_flags(a, {"--capacity-blocks", "--kv-bytes-per-token", "--block-tokens", "--shared-horizon"}, "csv");
  for (const char* f : {"--embeddings", "--capacity", "--latent-size"})
    if (!a.command->count(f)) throw usage_error(std::string(f) + " is required with --format csv");
  const double warmup = number_flag(a.warmup, "--warmup", 0, 0.99, "a share of the requests from 0 to 0.99");
  const auto steps = static_cast<int>(count_flag(a.steps, "--steps", 1, 100000));
  const double step_flops = number_flag(a.step_flops, "--step-flops", 0, 1e30, "a number of FLOPs, e.g. 1e9");
  const auto ef = count_flag(a.ef, "--ef", 1, 100000);
  if (a.index != "flat" && a.index != "hnsw") throw bad_flag("--index", a.index, "expected flat or hnsw");
  if (a.eviction != "lru" && a.eviction != "lfu" && a.eviction != "benefit-aware")
    throw bad_flag("--eviction", a.eviction, "expected lru, lfu or benefit-aware");
  const auto caps = size_list(a.capacities, "--capacity");
  const auto latents = size_list(a.latent_sizes, "--latent-size");
  if (!a.points_out.empty() && latents.size() != 1)
    throw bad_flag("--points-out", a.points_out, "writes one curve: give a single --latent-size with it");
  cache::embedding_matrix e;
  std::vector<cache::request> trace;
  try {
    e = cache::read_fvecs(a.embeddings);
  } catch (const invalid_input& x) {
    throw bad_flag("--embeddings", a.embeddings, x.problem());
  }
  try {
    trace = cache::read_trace(a.trace, e.rows());
  } catch (const invalid_input& x) {
    throw usage_error(std::string("--trace ") + x.what());
  }
  const cache::runtime_reuse reuse;
  if (steps < reuse.deepest())
    throw bad_flag(
        "--steps", a.steps,
        "a request must run at least the table's deepest reuse (" + std::to_string(reuse.deepest()) + " steps)");

  std::vector<curve> curves;
  for (const bytes latent : latents) {
    const cache::replay_options o{
        .latent_size = latent, .step_cost = flops{step_flops}, .steps = steps, .warmup = warmup};
    curve c{latent, {}, {}, {}};
    if (a.eviction == "lfu")
      c.points = run_curve<cache::lfu>(a, e, trace, caps, o, ef);
    else if (a.eviction == "benefit-aware")
      c.points = run_curve<cache::benefit_aware>(a, e, trace, caps, o, ef);
    else
      c.points = run_curve<cache::lru>(a, e, trace, caps, o, ef);
    std::vector<model::capacity_point> pts;
    for (const auto& p : c.points)
      if (p.hit_rate < 1.0) pts.push_back({p.capacity, p.hit_rate});
    if (!pts.empty()) c.exponential = model::fit_exponential_saturation(pts, c.points.front().entry_size);
    if (pts.size() >= 2) c.power = model::fit_power_law(pts);
    curves.push_back(std::move(c));
  }
  if (!a.plot.empty()) draw(a.plot, curves);
  if (!a.points_out.empty()) {
    // The measured curve in the format `trinity model cache --points` reads, to size a cache from it.
    std::ofstream pts(a.points_out);
    if (!pts) throw bad_flag("--points-out", a.points_out, "cannot be opened for writing");
    for (const auto& p : curves.front().points) pts << p.capacity.value() << "B," << p.hit_rate << '\n';
  }

  const replay_report r{trace.size(), e.dimension, warmup, steps, step_flops, std::move(curves)};
  if (a.json)
    print_replay_json(a, r);
  else
    print_replay_text(a, r);
}

// ---- --format mooncake: block-hashed requests through the exact prefix cache ------------------------------

struct block_curve {
  std::string eviction;
  std::vector<cache::block_replay_result> rows;
  std::optional<model::fit_result<model::exponential_saturation>> exponential;
  std::optional<model::fit_result<model::power_law>> power;
};

cache::prefix_eviction eviction_named(const std::string& name, std::uint64_t horizon) {
  if (name == "lru") return {cache::prefix_eviction_policy::lru, horizon};
  if (name == "lfu") return {cache::prefix_eviction_policy::lfu, horizon};
  if (name == "shared-prefix") return {cache::prefix_eviction_policy::shared_prefix, horizon};
  throw bad_flag("--eviction", name, "expected lru, lfu or shared-prefix (comma-separated for several)");
}

void draw_blocks(const std::string& path, const std::vector<block_curve>& curves, bytes block, double bound) {
  auto plot = begin_plot(path, "prefix cache capacity (GB of KV)", "block hit rate",
                         "Prefix cache on the trace: block hit rate against capacity");
  if (!plot) return;
  auto& gp = *plot;
  gp << bound << " with lines dt 3 lc rgb 'gray' title 'infinite capacity'";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    gp << ", '-' using 1:2 with linespoints lw 2 lc " << i + 1 << " title '" << curves[i].eviction << " (measured)'";
    if (curves[i].power)
      gp << ", (x > 0 ? 1 - (1 + " << curves[i].power->model.kappa.value() * 1e9 << " * x) ** (-"
         << curves[i].power->model.gamma << ") : 0) with lines dt 2 lc " << i + 1 << " title '" << curves[i].eviction
         << " power-law fit'";
  }
  gp << '\n';
  for (const auto& c : curves) {
    for (const auto& r : c.rows)
      gp << static_cast<double>(r.capacity_blocks) * block.value() / 1e9 << ' ' << r.block_hit_rate() << '\n';
    gp << "e\n";
  }
  finish_plot(path, gp);
}

// Llama-3-70B's prefill FLOPs of the block at each depth, after the blocks before it: the trace's longest chain's
// worth, computed once for every tiered replay.
std::vector<flops> prefill_by_depth(const std::vector<cache::block_request>& trace, std::size_t block_tokens) {
  std::size_t deepest = 0;
  for (const auto& q : trace) deepest = std::max(deepest, q.hash_ids.size());
  return model::prefill_by_block_depth(model::shapes::llama3_70b, deepest, block_tokens);
}

// One tiered replay: device memory of `capacity_blocks` blocks, then the system's lower tiers.
struct tiered_run {
  std::uint64_t capacity_blocks = 0;
  std::vector<cache::prefix_tier> tiers;
  std::vector<cache::tier_counts> counts;
  flops saved{};
  seconds loading{};
};

tiered_run tiered_replay(const std::vector<cache::block_request>& trace, const plan::system& s, std::uint64_t hbm,
                         const std::vector<std::uint64_t>& lower, bytes block, const std::vector<flops>& prefill) {
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

// A block replay's curves, its infinite-capacity bound and its tiered runs, for printing.
struct block_report {
  std::size_t requests;
  std::uint64_t blocks_total, distinct;
  std::size_t block_tokens, horizon;
  bytes per_token, block;
  cache::block_replay_result bound;
  std::vector<std::uint64_t> caps;
  std::vector<block_curve> curves;
  std::optional<plan::system> sys;
  std::vector<tiered_run> tiered;
  flops prefill_total;
};

void print_block_json(const replay_args& a, const block_report& report) {
  const auto& [requests, blocks_total, distinct, block_tokens, horizon, per_token, block, bound, caps, curves, sys,
               tiered, prefill_total] = report;
  json out{{"trace", a.trace},
           {"format", "mooncake"},
           {"requests", requests},
           {"blocks", blocks_total},
           {"distinct_blocks", distinct},
           {"block_tokens", block_tokens},
           {"kv_bytes_per_token", per_token.value()},
           {"kv_bytes_per_block", block.value()},
           {"infinite",
            {{"capacity_blocks", distinct},
             {"block_hit_rate", bound.block_hit_rate()},
             {"token_hit_rate", bound.token_hit_rate()}}},
           {"rows", json::array()},
           {"fits", json::array()}};
  for (const auto& c : curves) {
    for (const auto& r : c.rows)
      out["rows"].push_back({{"eviction", c.eviction},
                             {"capacity_blocks", r.capacity_blocks},
                             {"capacity_bytes", static_cast<double>(r.capacity_blocks) * block.value()},
                             {"block_hit_rate", r.block_hit_rate()},
                             {"token_hit_rate", r.token_hit_rate()},
                             {"hit_blocks", r.hit_blocks},
                             {"hit_tokens", r.hit_tokens},
                             {"evicted_blocks", r.evicted_blocks}});
    json f{{"eviction", c.eviction}};
    if (c.eviction == "shared-prefix") f["shared_horizon"] = horizon;
    add_fits_json(f, c);
    out["fits"].push_back(f);
  }
  if (sys) {
    out["tiered"] = json::array();
    for (const auto& r : tiered) {
      json jr{{"capacity_blocks", r.capacity_blocks},
              {"prefill_flops", prefill_total.value()},
              {"prefill_flops_saved", r.saved.value()},
              {"load_seconds", r.loading.value()},
              {"tiers", json::array()}};
      for (std::size_t t = 0; t < r.tiers.size(); ++t) {
        const auto& c = r.counts[t];
        jr["tiers"].push_back({{"name", r.tiers[t].name},
                               {"capacity_blocks", r.tiers[t].capacity_blocks},
                               {"hits", c.hits},
                               {"recomputed", c.recomputed},
                               {"loaded_bytes", c.loaded.value()},
                               {"demoted_bytes", c.demoted.value()},
                               {"dropped_blocks", c.dropped}});
      }
      out["tiered"].push_back(jr);
    }
  }
  if (!a.plot.empty()) out["plot"] = a.plot;
  std::cout << out.dump(2) << '\n';
}

void print_block_text(const replay_args& a, const block_report& report) {
  const auto& [requests, blocks_total, distinct, block_tokens, horizon, per_token, block, bound, caps, curves, sys,
               tiered, prefill_total] = report;
  std::cout << "Replayed " << requests << " requests (" << blocks_total << " blocks of " << block_tokens << " tokens, "
            << distinct << " distinct) through the prefix cache in file order.\nKV per block " << to_string(block)
            << " (" << to_string(per_token) << " per token).\nInfinite capacity (" << distinct << " blocks, "
            << to_string(static_cast<double>(distinct) * block) << "): block hit rate " << fixed(bound.block_hit_rate())
            << ", token hit rate " << fixed(bound.token_hit_rate()) << "\n\n";
  std::vector<std::string> header{"capacity (blocks)", "KV bytes"};
  for (const auto& c : curves) {
    header.push_back(c.eviction + " block hit");
    header.push_back(c.eviction + " token hit");
  }
  table t(header);
  for (std::size_t i = 0; i < caps.size(); ++i) {
    std::vector<std::string> row{std::to_string(caps[i]), to_string(static_cast<double>(caps[i]) * block)};
    for (const auto& c : curves) {
      row.push_back(fixed(c.rows[i].block_hit_rate()));
      row.push_back(fixed(c.rows[i].token_hit_rate()));
    }
    t.add(row);
  }
  t.print(std::cout);
  // Each policy against the first named, capacity by capacity, in block hit rate.
  for (std::size_t k = 1; k < curves.size(); ++k) {
    double mean = 0, best = -1, worst = 1;
    for (std::size_t i = 0; i < caps.size(); ++i) {
      const double d = curves[k].rows[i].block_hit_rate() - curves[0].rows[i].block_hit_rate();
      mean += d / static_cast<double>(caps.size());
      best = std::max(best, d);
      worst = std::min(worst, d);
    }
    std::cout << curves[k].eviction << " vs " << curves[0].eviction << ": block hit rate " << (mean >= 0 ? "+" : "")
              << fixed(mean, 4) << " on average over the capacities (from " << fixed(worst, 4) << " to "
              << fixed(best, 4) << ")\n";
  }
  table f({"eviction", "fit", "parameters", "rmse", "max |error|"});
  for (const auto& c : curves) {
    if (c.exponential)
      f.add({c.eviction, "exponential saturation", "beta = " + units::detail::format_number(c.exponential->model.beta),
             fixed(c.exponential->rmse, 4), fixed(c.exponential->max_abs_error, 4)});
    if (c.power)
      f.add(
          {c.eviction, "power law",
           "kappa = " + fixed(c.power->model.kappa.value() * 1e9, 4) + "/GB, gamma = " + fixed(c.power->model.gamma, 4),
           fixed(c.power->rmse, 4), fixed(c.power->max_abs_error, 4)});
  }
  std::cout << "\nHit rate against capacity in bytes, fitted:\n";
  f.print(std::cout);
  for (const auto& r : tiered) {
    std::cout << "\nTiered (lru, Llama-3-70B prefill on " << sys->device.name << "): " << r.capacity_blocks
              << " blocks in " << sys->tiers[0].name << ", demoted below instead of dropped; prefill saved "
              << fixed(100.0 * (r.saved / prefill_total), 1) << "% of " << to_string(prefill_total) << ", loads "
              << to_string(r.loading) << "\n";
    table tt({"tier", "blocks", "hits served", "recomputed instead", "loaded", "demoted into", "dropped"});
    for (std::size_t k = 0; k < r.tiers.size(); ++k) {
      const auto& c = r.counts[k];
      tt.add({r.tiers[k].name, std::to_string(r.tiers[k].capacity_blocks), std::to_string(c.hits),
              std::to_string(c.recomputed), to_string(c.loaded), to_string(c.demoted), std::to_string(c.dropped)});
    }
    tt.print(std::cout);
  }
  if (!a.plot.empty() && std::filesystem::exists(a.plot)) std::cout << "\nwrote " << a.plot << '\n';
}

void run_block_replay(const replay_args& a) {
  refuse_flags(a,
               {"--embeddings", "--capacity", "--latent-size", "--warmup", "--index", "--ef", "--steps", "--step-flops",
                "--points-out"},
               "mooncake");
  if (a.capacity_blocks.empty())
    throw usage_error("--capacity-blocks is required with --format mooncake, e.g. 1000,10000");
  const auto block_tokens = count_flag(a.block_tokens, "--block-tokens", 1, 1u << 20);
  const auto horizon = count_flag(a.horizon, "--shared-horizon", 0, std::size_t{1} << 40);
  const bytes per_token = quantity_flag<bytes>(a.kv_per_token, "--kv-bytes-per-token");
  if (per_token <= bytes{})
    throw bad_flag("--kv-bytes-per-token", a.kv_per_token, "must be a positive size, e.g. 320KB");
  const bytes block = static_cast<double>(block_tokens) * per_token;
  std::vector<std::uint64_t> caps;
  for (const auto& g : a.capacity_blocks)
    for (const auto& item : split(g)) caps.push_back(count_flag(item, "--capacity-blocks", 0, std::uint64_t{1} << 32));
  if (caps.empty())
    throw bad_flag("--capacity-blocks", "",
                   "an empty value; give capacities in blocks, comma-separated, e.g. 1000,10000");
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  std::vector<std::string> policies = split(a.eviction);
  if (policies.empty()) throw bad_flag("--eviction", a.eviction, "name at least one of lru, lfu, shared-prefix");
  for (const auto& p : policies) (void)eviction_named(p, horizon);

  std::vector<cache::block_request> trace;
  try {
    trace = io::read_block_trace(a.trace, block_tokens);
  } catch (const invalid_input& x) {
    throw usage_error(std::string("--trace ") + x.what());
  }
  std::vector<std::uint64_t> lower;
  for (const auto& g : a.tier_blocks)
    for (const auto& item : split(g)) lower.push_back(count_flag(item, "--tier-blocks", 0, std::uint64_t{1} << 40));
  std::optional<plan::system> sys;
  if (!a.system.empty()) sys = system_from(a.system);
  if (!lower.empty() && !sys)
    throw usage_error("--tier-blocks needs --system: its tiers below the device are where blocks spill");
  if (sys && lower.empty()) throw usage_error("--system is for the tiered replay: give --tier-blocks too");
  if (sys && lower.size() + 1 > sys->tiers.size())
    throw bad_flag("--tier-blocks", a.tier_blocks.front(),
                   std::to_string(lower.size()) + " capacities, but " + sys->name + " has " +
                       std::to_string(sys->tiers.size() - 1) + " tiers below the device");
  const std::uint64_t distinct = cache::distinct_blocks(trace);
  const auto bound = cache::replay_blocks(trace, {.capacity_blocks = distinct, .block_tokens = block_tokens});

  std::vector<block_curve> curves;
  for (const auto& p : policies) {
    block_curve c{p, {}, {}, {}};
    for (const auto cap : caps)
      c.rows.push_back(cache::replay_blocks(
          trace, {.capacity_blocks = cap, .block_tokens = block_tokens, .eviction = eviction_named(p, horizon)}));
    std::vector<model::capacity_point> pts;
    for (const auto& r : c.rows)
      if (r.capacity_blocks > 0 && r.block_hit_rate() < 1.0)
        pts.push_back({static_cast<double>(r.capacity_blocks) * block, r.block_hit_rate()});
    if (!pts.empty()) c.exponential = model::fit_exponential_saturation(pts, block);
    if (pts.size() >= 2) c.power = model::fit_power_law(pts);
    curves.push_back(std::move(c));
  }
  if (!a.plot.empty()) draw_blocks(a.plot, curves, block, bound.block_hit_rate());

  const auto blocks_total = bound.blocks;
  std::vector<tiered_run> tiered;
  flops prefill_total{};  // the trace's whole prefill, what a tiered replay's savings are a share of
  if (sys) {
    const auto prefill = prefill_by_depth(trace, block_tokens);
    for (const auto& q : trace)
      for (std::size_t d = 0; d < q.hash_ids.size(); ++d) prefill_total += prefill[d];
    for (const auto cap : caps) tiered.push_back(tiered_replay(trace, *sys, cap, lower, block, prefill));
  }
  const block_report r{trace.size(), blocks_total, distinct, block_tokens,      horizon, per_token,
                       block,        bound,        caps,     std::move(curves), sys,     std::move(tiered),
                       prefill_total};
  if (a.json)
    print_block_json(a, r);
  else
    print_block_text(a, r);
}

struct gen_args {
  std::string trace = "requests.csv", embeddings = "prompts.fvecs", requests = "10000", dimension = "768",
              topics = "200", zipf = "1.0", paraphrase = "0.6", drift = "4", seed = "1";
};

void run_gen(const gen_args& a) {
  cache::synthetic_trace_options o;
  o.requests = count_flag(a.requests, "--requests", 1, 100'000'000);
  o.dimension = count_flag(a.dimension, "--dimension", 8, 65536);
  o.topics = count_flag(a.topics, "--topics", 1, 10'000'000);
  o.zipf = number_flag(a.zipf, "--zipf", 0, 10, "an exponent from 0 (uniform) to 10");
  o.paraphrase = number_flag(a.paraphrase, "--paraphrase", 0, 1, "a share from 0 to 1");
  o.drift_phases = count_flag(a.drift, "--drift", 0, 1'000'000);
  o.seed = count_flag(a.seed, "--seed", 0, std::numeric_limits<std::size_t>::max());
  const auto t = cache::generate_trace(o);
  cache::write_fvecs(a.embeddings, t.embeddings);
  cache::write_trace(a.trace, t.requests);
  std::cout << "wrote " << a.trace << " (" << t.requests.size() << " requests) and " << a.embeddings << " ("
            << t.embeddings.rows() << " x " << t.embeddings.dimension << " fp32): SYNTHETIC, topic clusters with Zipf("
            << o.zipf << ") popularity, " << fixed(o.paraphrase * 100, 0) << "% paraphrases, popularity reshuffled "
            << o.drift_phases << " times; seed " << o.seed << '\n';
}

}  // namespace

void register_cache(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "Memory -> compute: replay traces through the approximate cache");
  cmd->require_subcommand(1);
  auto ra = std::make_shared<replay_args>();
  auto* r = cmd->add_subcommand("replay", "Hit rate against capacity for a request trace, with both families fitted");
  r->add_option("--trace", ra->trace,
                "csv: timestamp,row lines (row indexes --embeddings); mooncake: Mooncake's "
                "JSONL of block-hashed requests")
      ->type_name("FILE")
      ->required();
  r->add_option("--format", ra->format, "csv (the approximate cache, default) or mooncake (the exact prefix cache)")
      ->type_name("csv|mooncake");
  r->add_option("--embeddings", ra->embeddings, "csv: prompt embeddings, .fvecs (ANN-benchmark format)")
      ->type_name("FILE");
  r->add_option("--capacity", ra->capacities, "csv: capacities, comma-separated or repeated (e.g. 1GB,10GB,100GB)")
      ->type_name("SIZE,...");
  r->add_option("--latent-size", ra->latent_sizes,
                "csv: bytes of one stored latent, comma-separated (paper: 0.016GB, "
                "0.04GB, 0.07GB)")
      ->type_name("SIZE,...");
  r->add_option("--capacity-blocks", ra->capacity_blocks, "mooncake: capacities in blocks, comma-separated or repeated")
      ->type_name("COUNT,...");
  r->add_option("--kv-bytes-per-token", ra->kv_per_token,
                "mooncake: the model's KV bytes per token, for the curve in "
                "bytes (default 327680B, Llama-3-70B in bf16)")
      ->type_name("SIZE");
  r->add_option("--system", ra->system,
                "mooncake: a system preset or JSON file; with --tier-blocks, the tiered "
                "replay spills to its tiers below the device over their links")
      ->type_name("SYSTEM");
  r->add_option("--tier-blocks", ra->tier_blocks,
                "mooncake: capacities in blocks of the system's tiers after the "
                "device's, in order (e.g. 100000 for host memory)")
      ->type_name("COUNT,...");
  r->add_option("--block-tokens", ra->block_tokens, "mooncake: tokens per block of the trace (default 512)")
      ->type_name("COUNT");
  r->add_option("--shared-horizon", ra->horizon,
                "mooncake, shared-prefix eviction: requests a shared block's stamp "
                "is moved ahead (default 1000)")
      ->type_name("COUNT");
  r->add_option("--warmup", ra->warmup, "Share of requests that only warm the cache (default 0.2)")->type_name("SHARE");
  r->add_option("--index", ra->index, "flat (exact, default) or hnsw (approximate)")->type_name("flat|hnsw");
  r->add_option("--ef", ra->ef, "HNSW search breadth (default 64)")->type_name("COUNT");
  r->add_option("--eviction", ra->eviction,
                "csv: lru (the paper's, default), lfu or benefit-aware; mooncake: any of "
                "lru (default), lfu, shared-prefix, comma-separated")
      ->type_name("POLICY");
  r->add_option("--steps", ra->steps, "Denoising steps of a full request, S (default 50)")->type_name("COUNT");
  r->add_option("--step-flops", ra->step_flops, "FLOPs per step, c_step (default 1e9)")->type_name("FLOPS");
  r->add_option("--plot", ra->plot, "Draw hit rate against capacity to this PNG (gnuplot)")->type_name("FILE");
  r->add_option("--points-out", ra->points_out, "Write capacity,hit_rate lines for `trinity model cache --points`")
      ->type_name("FILE");
  r->add_flag("--json", ra->json, "Print JSON");
  ra->command = r;
  r->callback([ra] { ra->format == "mooncake" ? run_block_replay(*ra) : run_replay(*ra); });

  auto ga = std::make_shared<gen_args>();
  auto* g = cmd->add_subcommand("gen-trace", "Write a SYNTHETIC request trace and its prompt embeddings");
  g->add_option("--trace", ga->trace, "CSV to write (default requests.csv)")->type_name("FILE");
  g->add_option("--embeddings", ga->embeddings, ".fvecs to write (default prompts.fvecs)")->type_name("FILE");
  g->add_option("--requests", ga->requests, "Requests (default 10000)")->type_name("COUNT");
  g->add_option("--dimension", ga->dimension, "Embedding width (default 768, CLIP ViT-L/14)")->type_name("COUNT");
  g->add_option("--topics", ga->topics, "Topic clusters (default 200)")->type_name("COUNT");
  g->add_option("--zipf", ga->zipf, "Topic popularity exponent (default 1.0)")->type_name("NUMBER");
  g->add_option("--paraphrase", ga->paraphrase, "Share of requests rephrasing an earlier prompt (default 0.6)")
      ->type_name("SHARE");
  g->add_option("--drift", ga->drift, "Times topic popularity reshuffles over the trace (default 4)")
      ->type_name("COUNT");
  g->add_option("--seed", ga->seed, "Random seed (default 1)")->type_name("COUNT");
  g->callback([ga] { run_gen(*ga); });
}

}  // namespace trinity::cli
