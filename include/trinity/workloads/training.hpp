#pragma once
//! \file
//! Training as a workload (workloads/workload.hpp): its JSON reader (workloads/training_reader.hpp), its presets,
//! and its plans: the data-parallel planner's, one parallel layout priced, the layout search, and a layout per
//! sequence-length bucket.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/workloads/training_reader.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/plan/dynamic_parallel.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/simulate_parallel.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/workloads/parallel_breakdown.hpp>
#include <trinity/workloads/training_interval.hpp>
#include <trinity/workloads/pareto_plot.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::workloads {
namespace detail {

inline json cost_json(const plan::evaluated& e, const plan::plan_result& r, const plan::system& s) {
  const auto& c = e.cost;
  const json tiers = tier_bytes_json(s, c.tier_bytes);
  return {{"codec", r.codecs[e.plan.codec].name},
          {"zero_stage", e.plan.stage},
          {"offload_tier", e.plan.offload_tier ? json(s.tiers[e.plan.offload_tier].name) : json(nullptr)},
          {"recompute", e.plan.recompute},
          {"step_time_s", c.total.time.value()},
          {"energy_j", c.total.energy.value()},
          {"dollars", c.dollars},
          {"compute_flops", c.total.compute.value()},
          {"bytes_per_tier", tiers},
          {"interconnect_bytes", c.link_bytes.value()},
          {"offload_bytes", c.offload_bytes.value()},
          {"time_parts_s",
           {{"compute", c.compute_time.value()},
            {"interconnect", c.comm_time.value()},
            {"codec", c.codec_time.value()},
            {"offload", c.offload_time.value()}}},
          {"relative_error", c.error},
          {"fits", e.fits()}};
}

// What the step model predicts for a layout, with how sure it is (workloads/training_interval.hpp).
inline json predicted_json(const model::parallel_step_cost& r, const step_tokens& t, const plan::system& s,
                           const plan::training_workload& w) {
  auto p = parallel_predicted_json(r, t);
  p["interval"] = interval_json(r, s, w);
  return p;
}

// What a layout's price read of the defaults: not `batch` (the layout's mbs splits the global batch), nor
// `data_parallel` where the GPUs come from elsewhere (a stated layout, --gpus).
inline plan::assumptions layout_read(const plan::training_workload& w, bool gpus_given) {
  return gpus_given ? plan::without(w.assumed, {"batch", "data_parallel"}) : plan::without(w.assumed, {"batch"});
}

// What the data-parallel planner read of the defaults: Ψ, L and h, the batch, the ranks and precisions; nothing of
// the transformer's kernels or stack, which it does not price.
inline plan::assumptions data_path_read(const plan::training_workload& w) {
  return plan::only(w.assumed, {"batch", "data_parallel", "global_batch", "precision", "error_budget"});
}

// The layout --parallelism names, or the search's choice.
inline model::parallel_layout layout_of(const request& a, const plan::system& s) {
  return named_layout(s, a.parallelism, a.gpus);
}
inline plan::parallel_plan_result search_layouts(const request& a, const plan::system& s,
                                                 const plan::training_workload& w) {
  return workloads::search_layouts(s, w, a.gpus, a.memory_headroom, a.planning);
}

// trinity simulate --parallelism: a layout's transfers on the system's own link hierarchy, every group at once.
inline void simulate_layout(const request& a, const plan::system& s, const plan::training_workload& w,
                            std::ostream& out) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload,
                   "has no transformer shape; give heads, ffn_hidden and vocabulary "
                   "(docs/parallelism.md) to lay a parallel layout on the fabric");
  if (a.parallelism == "dynamic")
    throw bad_flag("--parallelism", a.parallelism,
                   "picks a layout per length bucket; simulate one of them (a layout, or search)");
  const auto l = a.parallelism == "search" ? search_layouts(a, s, w).chosen().plan.layout : layout_of(a, s);
  std::vector<plan::simulated_pair> sim;
  auto budgeted = w;
  const auto codecs = gradient_codecs(s, budgeted, a.planning);
  try {
    sim = plan::simulate(s, w, l, plan::hierarchy_fabric(s, l.gpus()), codecs);
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  const std::string fabric = s.name + " link hierarchy";
  if (a.json) {
    out << json{{"system", s.name},
                {"parallelism", model::to_string(l)},
                {"gpus", l.gpus()},
                {"fabric", fabric},
                {"simulated", simulated_json(sim)}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Layout: " << model::to_string(l) << " on " << l.gpus() << " x " << s.device.name << "\n\n";
  print_simulated(out, sim, fabric);
}

inline std::size_t scale_up_domains(const plan::system& s, const model::training_cluster& c, std::size_t gpus) {
  return s.scale_out ? (gpus + c.domain - 1) / c.domain : 1;
}

inline std::string gpus_on(const plan::system& s, const model::training_cluster& c, std::size_t gpus) {
  const auto domains = scale_up_domains(s, c, gpus);
  return std::to_string(gpus) + " x " + s.device.name + " (" + s.name +
         (domains > 1 ? ", " + std::to_string(domains) + " scale-up domains" : "") + ")";
}

// One parallel layout priced, no search: the step time, the peak bytes per GPU and where they go.
inline void plan_layout(const request& a, const plan::system& s, const plan::training_workload& w, std::ostream& out) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload,
                   "has no transformer shape; give heads, ffn_hidden and vocabulary "
                   "(docs/parallelism.md) to price a parallel layout");
  if (!a.plot.empty())
    throw bad_flag("--plot", a.plot, "draws a search's plans; --parallelism prices one layout. Fix: drop --plot");
  const auto l = layout_of(a, s);
  const auto job = plan::job_of(w, l.dp);
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  auto budgeted = w;
  const auto codecs = gradient_codecs(s, budgeted, a.planning);
  model::parallel_step_cost r;
  model::compressor_cost codec;
  try {
    codec = plan::gradient_codec(codecs, l.codec);
    r = model::price(job, c, l, codec);
  } catch (const invalid_input& e) {
    throw bad_flag("--parallelism", a.parallelism, e.what());
  }
  const bool fits = r.device_bytes <= c.memory;
  const bool within_budget = codec.relative_error <= budgeted.error_budget;
  const auto assumed = layout_assumed(a, io::parallel_layout_defaults(a.parallelism, l, job.shape.moe()));
  if (a.json) {
    // The plan JSON every plan has (docs/plan.schema.json): a stated layout is the one candidate, its own choice,
    // baseline and front; what is the layout's own sits under "layout".
    const json one{{"parallelism", model::to_string(l)},
                   {"step_time_s", r.step.value()},
                   {"device_bytes", r.device_bytes.value()},
                   {"fits", fits}};
    const std::string binding =
        fits ? "as stated: nothing traded"
             : "does not fit: needs " + to_string(r.device_bytes) + " per GPU of " + to_string(c.memory);
    out << stated_plan_json(s.name, w.name, a.planning.objective, assumed_json(s, layout_read(w, true), assumed), one,
                            predicted_json(r, tokens_of(job, l.gpus()), s, w), binding, "layout",
                            json{{"parallelism", model::to_string(l)},
                                 {"gpus", l.gpus()},
                                 {"scale_up_domains", scale_up_domains(s, c, l.gpus())},
                                 {"global_batch", job.global_batch},
                                 {"micro_batches", r.micro_batches},
                                 {"fits", fits},
                                 {"device_capacity_bytes", c.memory.value()},
                                 {"gradient_codec",
                                  {{"name", l.codec.empty() ? json(nullptr) : json(l.codec)},
                                   {"relative_error", codec.relative_error},
                                   {"error_budget", budgeted.error_budget},
                                   {"within_error_budget", within_budget}}}})
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << w.name << " on " << gpus_on(s, c, l.gpus()) << ", " << model::to_string(l) << ", " << job.global_batch
      << " sequences of " << job.sequence << " tokens a step:\n\n";
  print_parallel_breakdown(out, r, c.memory, tokens_of(job, l.gpus()));
  print_interval(out, r, s, w);
  if (!l.codec.empty())
    out << "gradient codec " << l.codec << ": relative error " << units::detail::format_number(codec.relative_error)
        << (within_budget ? ", within" : ", MORE than") << " the error budget of "
        << units::detail::format_number(budgeted.error_budget) << '\n';
  print_assumed(out, s, layout_read(w, true), assumed);
}

// Every layout searched: the best for the objective, why, and the front.
inline void plan_layout_search(const request& a, const plan::system& s, const plan::training_workload& w,
                               std::ostream& out) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload,
                   "has no transformer shape; give heads, ffn_hidden and vocabulary "
                   "(docs/parallelism.md) to search parallel layouts");
  const auto r = search_layouts(a, s, w);
  const auto base = options_of(a.planning);
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  const auto& ch = r.chosen();
  const std::size_t gpus = ch.plan.layout.gpus();
  const auto job = plan::job_of(w, ch.plan.layout.dp);
  std::size_t feasible = 0;
  for (const auto& e : r.candidates) feasible += e.fits();
  const auto& x = r.explanation;
  if (!a.plot.empty()) {
    // Step time against device memory per GPU: what a layout trades for what.
    std::vector<plot_point> fitting, on_front;
    for (const auto& e : r.candidates)
      if (e.fits()) fitting.push_back({e.cost.total.time.value(), e.cost.total.memory.value() / 1e9});
    for (const auto i : r.pareto)
      on_front.push_back({r.candidates[i].cost.total.time.value(), r.candidates[i].cost.total.memory.value() / 1e9});
    draw_front(a.plot,
               w.name + " on " + std::to_string(gpus) + " x " + s.device.name + ": " + std::to_string(fitting.size()) +
                   " of " + std::to_string(r.candidates.size()) + " layouts fit",
               "step time (s)", s.tiers[0].name + " per GPU (GB)", fitting, on_front,
               {ch.cost.total.time.value(), ch.cost.total.memory.value() / 1e9}, "layouts",
               "time, energy, memory, bytes sent, dollars");
  }
  // The front, fastest first: what a reader weighs step time against memory with.
  auto front = r.pareto;
  std::sort(front.begin(), front.end(), [&](std::size_t i, std::size_t j) {
    return r.candidates[i].cost.total.time < r.candidates[j].cost.total.time;
  });
  if (a.json) {
    // A layout as the front, the choice and the baseline list it.
    const auto layout_json = [&](const plan::parallel_evaluated& e) {
      return json{{"parallelism", model::to_string(e.plan.layout)},
                  {"step_time_s", e.cost.total.time.value()},
                  {"energy_j", e.cost.total.energy.value()},
                  {"device_bytes", e.cost.total.memory.value()},
                  {"sent_bytes", e.cost.total.bandwidth.value()},
                  {"dollars", e.cost.dollars},
                  {"fits", e.fits()}};
    };
    json pareto = json::array();
    for (const auto i : front) pareto.push_back(layout_json(r.candidates[i]));
    out << json{{"system", s.name},
                {"workload", w.name},
                {"assumed", assumed_json(s, layout_read(w, a.gpus != 0), layout_assumed(a))},
                {"objective", plan::to_string(base.objective)},
                {"candidates", r.candidates.size()},
                {"choice", layout_json(ch)},
                {"baseline", layout_json(r.candidates[r.baseline])},
                {"predicted", predicted_json(ch.cost.step, tokens_of(job, gpus), s, w)},
                {"pareto", pareto},
                {"explanation",
                 {{"binding_before", x.binding_before},
                  {"binding_after", x.binding_after},
                  {"trades", x.trades},
                  {"rejected", x.rejected}}},
                {"layout_search",
                 {{"gpus", gpus},
                  {"scale_up_domains", scale_up_domains(s, c, gpus)},
                  {"global_batch", job.global_batch},
                  {"feasible", feasible},
                  {"device_capacity_bytes", c.memory.value()}}}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Layouts of " << w.name << " on " << gpus_on(s, c, gpus) << ", " << job.global_batch << " sequences of "
      << job.sequence << " tokens a step: best " << plan::to_string(base.objective) << " of " << r.candidates.size()
      << " layouts (" << feasible << " fit):\n\n  " << model::to_string(ch.plan.layout) << "\n\n";
  print_parallel_breakdown(out, ch.cost.step, c.memory, tokens_of(job, gpus));
  print_interval(out, ch.cost.step, s, w);
  out << "per GPU and step: energy " << to_string(ch.cost.total.energy)
      << (ch.cost.dollars > 0
              ? ", cost " + plan::format_dollars(ch.cost.dollars) + " (one " + s.device.name + " rented for the step)"
              : std::string())
      << '\n';
  print_assumed(out, s, layout_read(w, a.gpus != 0), layout_assumed(a));
  const auto& untraded = r.candidates[r.baseline].plan.layout;
  print_explanation(
      out, x,
      (untraded.pp == 1 ? "pure data parallelism, " : "no trade but the pipeline stages the batch needs to split, ") +
          model::to_string(untraded),
      "Alternatives one choice away");
  out << "\nPareto front (step time, energy, device memory, bytes sent, dollars): " << front.size() << " layouts; the "
      << std::min<std::size_t>(front.size(), 10) << " fastest:\n";
  table p({"layout", "step time", "MFU", s.tiers[0].name, "sent per GPU"});
  for (std::size_t k = 0; k < front.size() && k < 10; ++k) {
    const auto& e = r.candidates[front[k]];
    p.add({model::to_string(e.plan.layout) + (front[k] == r.choice ? "  <- chosen" : ""), to_string(e.cost.total.time),
           plan::detail::pct(e.cost.step.mfu), to_string(e.cost.total.memory), to_string(e.cost.total.bandwidth)});
  }
  p.print(out);
}

// A dynamic plan's frame, the part of a layout every bucket shares: "tp=2,pp=1,vpp=1,zero=1,codec=int8-ef".
inline std::string frame_text(const model::parallel_layout& l) {
  return "tp=" + std::to_string(l.tp) + ",pp=" + std::to_string(l.pp) + ",vpp=" + std::to_string(l.vpp) +
         ",zero=" + std::to_string(l.zero_stage) + (l.offload ? ",offload=on" : "") +
         (l.codec.empty() ? "" : ",codec=" + l.codec);
}

inline json buckets_json(const std::vector<plan::dynamic_bucket>& v) {
  json rows = json::array();
  for (const auto& b : v)
    rows.push_back({{"name", b.bucket.name},
                    {"sequence", b.bucket.sequence},
                    {"sequences", b.sequences},
                    {"parallelism", model::to_string(b.layout)},
                    {"time_s", b.time.value()},
                    {"device_bytes", b.cost.device_bytes.value()}});
  return rows;
}

// The dynamic plan in the plan JSON's shape: it is the choice, the best single layout its baseline (itself where
// no single layout fits); what is its own sits under "dynamic".
inline json dynamic_plan_json(const request& a, const plan::system& s, const plan::training_workload& w,
                              const plan::dynamic_result& r, bytes capacity) {
  const bool has_static = std::isfinite(r.static_step.value());
  const json chosen{
      {"frame", frame_text(r.frame)}, {"step_time_s", r.step.value()}, {"device_bytes", r.device_bytes.value()}};
  json predicted = chosen;  // with each bucket's layout and time
  predicted["buckets"] = buckets_json(r.buckets);
  json own{{"gpus", r.gpus},
           {"frames", r.frames},
           {"layouts_priced", r.layouts_priced},
           {"frame", frame_text(r.frame)},
           {"step_time_s", r.step.value()},
           {"reduction_and_update_s", r.shared.value()},
           {"device_bytes", r.device_bytes.value()},
           {"buckets", predicted["buckets"]},
           {"static", nullptr},
           {"gain", nullptr}};
  lone_plan p{chosen,
              predicted,
              chosen,
              r.layouts_priced,
              "no single layout runs every bucket within " + to_string(capacity) + " per GPU",
              "a layout per bucket in frame " + frame_text(r.frame) + ": a step of " + to_string(r.step)};
  if (has_static) {
    p.baseline = {{"parallelism", model::to_string(r.static_layout)},
                  {"step_time_s", r.static_step.value()},
                  {"device_bytes", r.static_device_bytes.value()}};
    p.binding_before =
        "one layout for every bucket, " + model::to_string(r.static_layout) + ": a step of " + to_string(r.static_step);
    own["static"] = p.baseline;
    own["static"]["buckets"] = buckets_json(r.static_buckets);
    own["gain"] = r.gain();
  }
  return lone_plan_json(s.name, w.name, a.planning.objective,
                        assumed_json(s, layout_read(w, a.gpus != 0), layout_assumed(a)), p, "dynamic", std::move(own));
}

// One layout per sequence-length bucket within a frame, against the best single layout.
inline void plan_dynamic(const request& a, const plan::system& s, const plan::training_workload& w, std::ostream& out) {
  if (!a.planning.link_budget.empty() || !a.plot.empty())
    throw bad_flag("--parallelism", a.parallelism,
                   "plans step time per length bucket; it takes no link budget or plot flag");
  plan::dynamic_result r;
  // The frame's codecs as the layout search's: the profile's or the system's devices', held to the error budget.
  auto budgeted = w;
  auto codecs = gradient_codecs(s, budgeted, a.planning);
  try {
    r = plan::plan_dynamic(s, budgeted,
                           {.gpus = a.gpus,
                            .objective = objective_of(a.planning),
                            .memory_headroom = a.memory_headroom,
                            .codecs = std::move(codecs)});
  } catch (const invalid_input& e) {
    if (e.field() == "gpus") throw bad_flag("--gpus", std::to_string(a.gpus), e.problem());
    throw usage_error(std::string(e.what()));
  }
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  const auto choice = [](const model::parallel_layout& l) {
    return "cp=" + std::to_string(l.cp) + ",dp=" + std::to_string(l.dp) + ",mbs=" + std::to_string(l.micro_batch) +
           ",recompute=" + model::to_string(l.recompute) + ",sp=" + (l.sequence_parallel ? "on" : "off");
  };
  const bool has_static = std::isfinite(r.static_step.value());
  if (a.json) {
    out << dynamic_plan_json(a, s, w, r, c.memory).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Dynamic parallelism for " << w.name << " on " << gpus_on(s, c, r.gpus) << ": " << r.layouts_priced
      << " bucket layouts priced in " << r.frames << " frames.\n\nDynamic: frame " << frame_text(r.frame) << ", step "
      << to_string(r.step) << " (reduction and update " << to_string(r.shared) << "), peak "
      << to_string(r.device_bytes) << " of " << to_string(c.memory) << " per GPU\n";
  print_assumed(out, s, layout_read(w, a.gpus != 0), layout_assumed(a));
  out << '\n';
  table t({"bucket", "tokens", "sequences", "layout in the frame", "time", "per GPU"});
  for (const auto& b : r.buckets)
    t.add({b.bucket.name, std::to_string(b.bucket.sequence), std::to_string(b.sequences), choice(b.layout),
           to_string(b.time), to_string(b.cost.device_bytes)});
  t.print(out);
  if (!has_static) {
    out << "\nStatic: no single layout runs every bucket within " << to_string(c.memory) << " per GPU.\n";
    return;
  }
  out << "\nStatic: " << model::to_string(r.static_layout) << " for every bucket, step " << to_string(r.static_step)
      << ", peak " << to_string(r.static_device_bytes) << " per GPU\n";
  table u({"bucket", "time", "per GPU"});
  for (const auto& b : r.static_buckets) u.add({b.bucket.name, to_string(b.time), to_string(b.cost.device_bytes)});
  u.print(out);
  char g[32];
  std::snprintf(g, sizeof g, "%.3f", r.gain());
  out << "\nGain of the dynamic plan over the best static one: " << g << "x\n";
}

// The data-parallel planner's plan: DDP, ZeRO 1-3, codecs, offload and placement across the system's tiers.
inline void plan_data_parallel(const request& a, const plan::system& s, plan::training_workload& w, std::ostream& out) {
  const auto r = plan_training_with(s, w, a.planning);
  const auto& x = r.explanation;
  if (!a.plot.empty()) {
    // Step time against device memory: the trade the front is made of.
    std::vector<plot_point> feasible, front;
    for (const auto& e : r.candidates)
      if (e.fits()) feasible.push_back({e.cost.total.time.value(), e.cost.tier_bytes[0].value() / 1e9});
    for (const auto i : r.pareto)
      front.push_back({r.candidates[i].cost.total.time.value(), r.candidates[i].cost.tier_bytes[0].value() / 1e9});
    draw_front(a.plot, w.name + " on " + s.name + ": " + plan::describe(r, s), "step time (s)",
               s.tiers[0].name + " per device (GB)", feasible, front,
               {r.chosen().cost.total.time.value(), r.chosen().cost.tier_bytes[0].value() / 1e9});
  }
  auto read = w;  // the plan lists the defaults it read
  read.assumed = data_path_read(w);
  if (a.json) {
    print_result_json(out, a, s, read, "training", {{"ranks", w.ranks(s)}}, r,
                      [&](const plan::evaluated& e) { return cost_json(e, r, s); });
    return;
  }
  const auto& c = r.chosen().cost;
  const std::size_t n = w.ranks(s), passes = w.micro_batches(n);
  const bool even = !w.global_batch || w.global_batch == passes * w.batch * n;
  out << "Plan for " << w.name << " on " << s.name << " (" << n << " ranks of " << s.device.name << "), "
      << (w.global_batch ? w.global_batch : w.batch * n) << " sequences of " << w.sequence << " tokens a step ("
      << passes << " micro-batch" << (passes > 1 ? "es" : "") << " of " << w.batch
      << (even ? " a rank" : " on the busiest rank") << "), best " << a.planning.objective << " of "
      << r.candidates.size() << " candidates:\n\n  " << plan::describe(r, s) << "\n\n";
  table t({"resource", "predicted per rank and step"});
  t.add({"step time", to_string(c.total.time) + " (compute " + to_string(c.compute_time) + ", interconnect " +
                          to_string(c.comm_time) + ", codec " + to_string(c.codec_time) + ", offload " +
                          to_string(c.offload_time) + ")"});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars) + " (" + s.device.name + " rented for the step)"});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity)});
  t.add({"interconnect", to_string(c.link_bytes) + " sent over " + c.link});
  t.print(out);
  print_assumed(out, s, read.assumed);
  print_explanation(out, x, "no trade", "Alternatives one choice away");
  out << "\nPareto front (time, energy, device memory, bytes sent): " << r.pareto.size() << " plans\n";
  table p({"plan", "step time", "energy", s.tiers[0].name, "sent"});
  for (const auto i : r.pareto) {
    const auto& e = r.candidates[i];
    p.add({plan::detail::describe(e.plan, s, r.codecs) + (i == r.choice ? "  <- chosen" : ""),
           to_string(e.cost.total.time), to_string(e.cost.total.energy), to_string(e.cost.tier_bytes[0]),
           to_string(e.cost.link_bytes)});
  }
  p.print(out);
}

}  // namespace detail

//! Training a model over data-parallel ranks (plan/workload.hpp), or, with a transformer's shape, over any
//! parallel layout (tensor, pipeline, context, data, ZeRO, recomputation). The default `"type"`.
struct training {
  static constexpr std::string_view type = "training";
  static constexpr bool draws_plot = true;  //!< --plot draws its search's plans
  using description = plan::training_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_training(j, s);
  }
  static std::vector<std::string_view> preset_names() { return plan::presets::workload_names(); }
  //! A preset's ranks and attention kernel follow the system it is paired with: every device, and the device's own
  //! kernel, as a JSON workload without them; a shaped one assumes the default stack as such a workload does.
  static std::optional<description> preset(std::string_view name, const plan::system& s) {
    auto w = plan::presets::find_workload(name);
    if (w && !w->data_parallel) plan::assume(w->assumed, "data_parallel", s.device.count);
    if (w && w->flash_attention && w->attention_kernel.empty())
      plan::assume(w->assumed, "attention_kernel", plan::own_attention_kernel(s));
    if (w && w->shape) plan::assume(w->assumed, "stack", w->stack.name);
    return w;
  }
  //! The data-parallel planner prices Ψ as every rank's compute and weights: a dense model's.
  static void refuse_experts(const request& a, const description& w) {
    if (w.shape && w.shape->moe())
      throw bad_flag("--parallelism", a.parallelism.empty() ? "data" : a.parallelism,
                     "prices a dense model over data-parallel ranks; " + w.name +
                         " is a mixture of experts. Fix: --parallelism search, or a layout with ep=");
  }
  //! `--parallelism`: a layout priced, the layout search, a layout per length bucket, or the data-parallel plan.
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    auto laid = a;
    laid.parallelism = training_parallelism(a.parallelism, w);
    if (laid.parallelism == "search") return detail::plan_layout_search(laid, s, w, out);
    if (laid.parallelism == "dynamic") return detail::plan_dynamic(laid, s, w, out);
    if (laid.parallelism != "data") return detail::plan_layout(laid, s, w, out);
    refuse_experts(a, w);
    if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
    refuse_memory_headroom(a);
    detail::plan_data_parallel(a, s, w, out);
  }
  //! A layout's transfers on the system's own link hierarchy, or the data-parallel plan's on its fabric.
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    if (!a.trace.empty()) throw bad_flag("--trace", a.trace, "is for an llm-serve workload's KV loads");
    auto laid = a;
    laid.parallelism = training_parallelism(a.parallelism, w);
    if (laid.parallelism != "data") return detail::simulate_layout(laid, s, w, out);
    refuse_experts(a, w);
    if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
    const auto r = plan_training_with(s, w, a.planning);
    const auto sim = planned([&] { return plan::simulate(s, w, r); });
    const auto f = plan::fabric_for(s, w.ranks(s));
    print_simulation(out, a, s, plan::describe(r, s), f ? f->name : "", sim);
  }
};

}  // namespace trinity::workloads
