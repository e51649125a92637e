#pragma once
//! \file
//! Diffusion serving as a workload (workloads/workload.hpp): its JSON reader (`"type": "diffusion"`, a hit-rate
//! curve or a request trace to fit one from), its preset, and its plan printed as text or as the plan JSON of
//! docs/plan.schema.json, with the cache's tier, hit rate and request time.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/diffusion_trace.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
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
  w.name = o.text("name");
  w.steps = o.count("steps", 1'000'000);
  w.step_cost = o.quantity<flops>("step_flops");
  o.get("reuse_depth", w.reuse_depth);
  w.latent_size = o.quantity<bytes>("latent_size");
  o.get("stored_depths", w.stored_depths, w.assumed);
  o.get("model_bytes", w.model_bytes, w.assumed);
  if (o.has("precision"))
    w.precision = precision_name(o, "precision");
  else
    plan::assume(w.assumed, "precision", w.precision);
  o.get("latent_element_bytes", w.latent_element_bytes, w.assumed);
  o.get("error_budget", w.error_budget, w.assumed);
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
};

}  // namespace trinity::workloads
