#pragma once
//! \file
//! Diffusion serving as a workload (workloads/workload.hpp): its JSON reader (`"type": "diffusion"`, a hit-rate
//! curve or a request trace to fit one from), its preset, and its plan printed as text or as the plan JSON of
//! docs/plan.schema.json, with the cache's tier, hit rate and request time.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <algorithm>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/diffusion_trace.hpp>
#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/error.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/verify.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key diffusion_keys[] = {
    {"name", required}, {"type", required},        {"steps", required}, {"step_flops", required},
    {"reuse_depth"},    {"latent_size", required}, {"stored_depths"},   {"model_bytes"},
    {"precision"},      {"latent_element_bytes"},  {"error_budget"},    {"hit_rate"},
    {"trace"}};
inline constexpr key trace_keys[] = {{"requests", required}, {"embeddings", required}, {"capacities"}};

inline plan::diffusion_workload read_diffusion(const json& j, const plan::system& s, const std::filesystem::path& base,
                                               std::optional<diffusion_trace>& trace) {
  const object o(j, "", diffusion_keys, "a diffusion workload");
  plan::diffusion_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  each([&] { w.steps = o.count("steps", 1'000'000); });
  each([&] { w.step_cost = o.quantity<flops>("step_flops"); });
  each([&] { o.get("reuse_depth", w.reuse_depth); });
  each([&] { w.latent_size = o.quantity<bytes>("latent_size"); });
  each([&] { o.get("stored_depths", w.stored_depths, w.assumed); });
  each([&] { o.get("model_bytes", w.model_bytes, w.assumed); });
  if (o.has("precision"))
    each([&] { w.precision = precision_name(o, "precision"); });
  else
    plan::assume(w.assumed, "precision", w.precision);
  each([&] { o.get("latent_element_bytes", w.latent_element_bytes, w.assumed); });
  each([&] { o.get("error_budget", w.error_budget, w.assumed); });
  each.raise();
  if (o.has("trace") == o.has("hit_rate"))
    fail("hit_rate", "give a hit-rate curve (hit_rate) or a request trace to fit one from (trace), one of the two");
  if (o.has("hit_rate")) {
    w.hit_rate = read_power_law(o, "a power-law hit-rate curve");
    if (!o.has("reuse_depth"))
      fail("reuse_depth",
           "missing; with a hit_rate curve give the steps a hit skips (trinity cache replay prints "
           "its mean), or bring the trace to measure it from");
    return validated(std::move(w), s);
  }
  if (w.steps < 25 || !(w.latent_size > bytes{}) || !(w.step_cost > flops{}))
    fail("trace", "replaying needs steps of at least 25 (Table 1's deepest reuse), a latent_size and step_flops");
  const object t(o.at("trace"), "trace", trace_keys,
                 "{\"requests\": FILE.csv, \"embeddings\": FILE.fvecs, \"capacities\": [...]}");
  const auto resolve = [&](std::string_view k) {
    const std::filesystem::path p = t.text(k);
    return (p.is_absolute() || base.empty() ? p : base / p).string();
  };
  diffusion_trace d{resolve("requests"),
                    resolve("embeddings"),
                    {bytes{1e9}, bytes{1e10}, bytes{1e11}, bytes{1e12}},
                    !o.has("reuse_depth")};
  if (t.has("capacities")) {
    d.capacities.clear();
    for_each(
        t.at("capacities"), t.path("capacities"),
        [&](const json& c, const std::string& at) { d.capacities.push_back(quantity<bytes>(c, at)); }, 64);
    if (d.capacities.size() < 2)
      fail(t.path("capacities"), "expected at least two capacities, e.g. [\"1GB\", \"10GB\", \"100GB\"]");
  }
  trace = std::move(d);
  return w;
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

inline json cache_json(const plan::cache_evaluated& e, const plan::system& s) {
  const json tiers = tier_bytes_json(s, e.cost.tier_bytes);
  return {{"cache_bytes", e.plan.capacity.value()},
          {"cache_tier", e.plan.capacity > bytes{} ? json(s.tiers[e.plan.tier].name) : json(nullptr)},
          {"hit_rate", e.cost.hit_rate},
          {"request_time_s", e.cost.total.time.value()},
          {"energy_j", e.cost.total.energy.value()},
          {"dollars", e.cost.dollars},
          {"compute_flops", e.cost.compute.value()},
          {"bytes_per_tier", tiers},
          {"time_parts_s",
           {{"compute", e.cost.compute_time.value()},
            {"cache_reads", e.cost.read_time.value()},
            {"cache_writes", e.cost.write_time.value()}}},
          {"fits", e.fits()}};
}

inline void plan_diffusion(const request& a, const plan::system& s, const plan::diffusion_workload& w,
                           std::ostream& out) {
  const auto r = plan::plan_diffusion(s, w, options_of(a.planning));
  const auto& x = r.explanation;
  if (a.json) {
    print_result_json(out, a, s, w, "diffusion", {}, r,
                      [&](const plan::cache_evaluated& e) { return cache_json(e, s); });
    return;
  }
  const auto& c = r.chosen().cost;
  out << "Plan for " << w.name << " on " << s.name << " (per " << s.device.name << "), best " << a.planning.objective
      << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(r.chosen().plan, s, r.codecs)
      << "\n\n";
  table t({"resource", "predicted per request"});
  t.add({"request time", to_string(c.total.time) + " (compute " + to_string(c.compute_time) + ", cache reads " +
                             to_string(c.read_time) + ", writes " + to_string(c.write_time) + ")"});
  t.add({"hit rate", units::detail::format_number(c.hit_rate) + " (reusing " + std::to_string(w.reuse_depth) + " of " +
                         std::to_string(w.steps) + " steps)"});
  t.add({"compute", to_string(c.compute)});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars)});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity)});
  t.print(out);
  print_assumed(out, s, w.assumed);
  print_explanation(out, x, "no cache", "Alternatives one choice away");
  out << "\nPareto front (time, energy, cache bytes): " << r.pareto.size() << " plans\n";
}

// A diffusion plan: its cache, at the chosen capacity, replayed for real through trinity::cache (exact flat
// index, LRU, Table 1 reuse) on a trace, beside what the planner priced from the workload's hit-rate curve.
inline void verify_diffusion(const verify_request& a, const plan::system& s, const plan::diffusion_workload& w,
                             std::ostream& out) {
  const auto r = plan::plan_diffusion(s, w, options_of(a.planning));
  const auto& c = r.chosen();
  out << "Plan: " << plan::describe(c.plan, s, r.codecs) << '\n';
  if (c.plan.capacity <= bytes{}) {
    out << "No cache was chosen: nothing to run.\n";
    return;
  }
  cache::embedding_matrix e;
  std::vector<cache::request> trace;
  std::string source;
  if (a.trace.empty() != a.embeddings.empty())
    throw bad_flag(a.trace.empty() ? "--embeddings" : "--trace", a.trace.empty() ? a.embeddings : a.trace,
                   "give --trace and --embeddings together (or neither, for the synthetic trace)");
  if (!a.trace.empty()) {
    try {
      e = cache::read_fvecs(a.embeddings);
      trace = cache::read_trace(a.trace, e.rows());
    } catch (const invalid_input& x) {
      throw usage_error(std::string("verify: ") + x.what());
    }
    source = a.trace;
  } else {
    const auto n = count_flag(a.requests, "--requests", 100, 1'000'000);
    auto t = cache::generate_trace({.requests = n});
    e = std::move(t.embeddings);
    trace = std::move(t.requests);
    source = "the SYNTHETIC trace of `trinity cache gen-trace` (" + std::to_string(n) + " requests, seed 1)";
  }
  trinity::detail::require(w.steps <= static_cast<std::size_t>(1) << 30, "workload.steps", "too many steps");
  // A codec stores ratio × more latents in the same bytes: replay the cache that many latents fill.
  const double ratio = plan::storage_ratio(w, r.codecs[c.plan.codec]);
  const cache::replay_options o{.capacity = ratio * c.plan.capacity,
                                .latent_size = w.latent_size,
                                .step_cost = w.step_cost,
                                .steps = static_cast<int>(w.steps),
                                .warmup = 0.2};
  std::cerr << "trinity verify: replaying " << trace.size() << " requests through a " << to_string(c.plan.capacity)
            << " cache...\n";
  const auto m = io::replay_exact(e, trace, o);

  const double counted = static_cast<double>(m.requests);
  const double full = static_cast<double>(w.steps) * w.step_cost.value();
  const std::vector<verified_row> rows{
      {"hit rate at " + to_string(c.plan.capacity) +
           (ratio != 1.0 ? " (" + to_string(o.capacity) + " of latents as " + r.codecs[c.plan.codec].name + ")" : ""),
       c.cost.hit_rate, m.hit_rate},
      {"steps a hit skips", static_cast<double>(w.reuse_depth),
       m.hits ? m.saved.value() / (static_cast<double>(m.hits) * w.step_cost.value()) : 0.0},
      {"compute per request", c.cost.compute.value(), full - m.saved.value() / std::max(counted, 1.0)},
  };
  bool all = true;
  for (const auto& x : rows) all &= x.within(0.2);
  const bytes held = static_cast<double>(m.entries_at_end) * m.entry_size;
  if (a.json) {
    const json jr = rows_json(rows, 0.2);
    out << json{{"plan", plan::describe(c.plan, s, r.codecs)},
                {"trace", source},
                {"requests", trace.size()},
                {"rows", jr},
                {"all_within_20_percent", all},
                {"cache_bytes_held_at_end", held.value()}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    out << "Replayed here through trinity::cache (flat index, LRU, Table 1 reuse), counted after the first 20%:\n  "
        << source << "\n\n";
    table t({"mechanism", "predicted", "measured", "measured / predicted", "within 20%"});
    for (const auto& x : rows) {
      const bool is_flops = x.mechanism.rfind("compute", 0) == 0;
      const auto shown = [&](double v) { return is_flops ? to_string(flops{v}) : units::detail::format_number(v); };
      t.add({x.mechanism, shown(x.predicted), shown(x.measured), ratio_text(x), x.within(0.2) ? "yes" : "NO"});
    }
    t.print(out);
    out << "\nThe cache held " << to_string(held) << " of latents at the end of the trace (" << m.entries_at_end
        << " entries) of the " << to_string(o.capacity) << " planned";
    if (held < 0.5 * o.capacity)
      out << ": the trace's working set is smaller than the plan's cache, so the hit rate is the trace's ceiling";
    out << ".\nNot run here: the reads and writes in " << s.tiers[c.plan.tier].name
        << ", priced at its latency + size / bandwidth (trinity simulate times a read across the fabric when the "
           "cache lives in a CXL pool).\n";
  }
  if (!all) throw usage_error("a measured figure is more than 20% from the prediction (see the table)");
}

}  // namespace detail

//! Diffusion serving with an approximate cache of intermediate latents (plan/diffusion.hpp): a hit skips the
//! first reuse_depth steps. `"type": "diffusion"`.
struct diffusion {
  static constexpr std::string_view type = "diffusion";
  using description = plan::diffusion_workload;

  //! The file's contents and, when it brought a request trace in place of its hit-rate curve, that trace (its
  //! paths resolved against `base`), not yet replayed.
  struct file {
    description workload;
    std::optional<io::diffusion_trace> trace;
  };
  static file read_file(const io::json& j, const plan::system& s, const std::filesystem::path& base = {}) {
    file f;
    f.workload = io::detail::read_diffusion(j, s, base, f.trace);
    return f;
  }
  //! A trace is replayed here and the curve fitted (io/diffusion_trace.hpp), `c.progress` told of each replay.
  static description read(const io::json& j, const plan::system& s, const read_context& c) {
    auto f = read_file(j, s, c.base);
    if (!f.trace) return std::move(f.workload);
    return io::fit_trace(std::move(f.workload), *f.trace, s, c.progress);
  }
  static std::vector<std::string_view> preset_names() { return {"diffusion-dit-12b"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_diffusion(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    detail::plan_diffusion(a, s, w, out);
  }
  //! The chosen cache's reads and writes on the system's fabric.
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "simulate");
    const auto r = planned([&] { return plan::plan_diffusion(s, w, options_of(a.planning)); });
    const auto sim = planned([&] { return plan::simulate(s, w, r); });
    const auto f = plan::fabric_for(s, 2);
    print_simulation(out, a, s, plan::describe(r.chosen().plan, s, r.codecs), f ? f->name : "", sim);
  }
  //! The chosen cache replayed here through trinity::cache on a trace (or a synthetic one).
  static void verify(const verify_request& a, const plan::system& s, description& w, std::ostream& out) {
    detail::verify_diffusion(a, s, w, out);
  }
};

}  // namespace trinity::workloads
