#pragma once
//! \file
//! Data curation as a workload (workloads/workload.hpp): its JSON reader (`"type": "data-curation"`: the CPU
//! workers and the operators in pipeline order), its preset, and its plan: which models each device holds and
//! the samples per second that buys.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <trinity/detail/host.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/data_curation.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/curation_run.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/verify.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key data_curation_keys[] = {{"name", required},        {"type", required},   {"devices"},
                                             {"cpu_workers", required}, {"model_efficiency"}, {"sharing_efficiency"},
                                             {"operators", required}};
inline constexpr key curation_stage_keys[] = {{"name", required}, {"on", required}, {"seconds"}, {"flops"},
                                              {"efficiency"},     {"memory"},       {"share"},   {"source"}};

// The operators, in pipeline order: CPU operators with their seconds, models with their FLOPs and memory.
inline void read_operators(const object& o, plan::data_curation_workload& w) {
  for_each(
      o.at("operators"), "operators",
      [&](const json& e, const std::string& at) {
        const object x(e, at, curation_stage_keys, "an operator");
        static constexpr std::string_view where[] = {"cpu", "device"};
        plan::curation_stage st;
        st.name = x.text("name");
        st.device = choice(x.at("on"), x.path("on"), where) == "device";
        // Each kind of operator has its own figures; one given to the other kind would be silently unused.
        for (const auto k : st.device ? std::vector<std::string_view>{"seconds"}
                                      : std::vector<std::string_view>{"flops", "efficiency", "memory"})
          if (x.has(k))
            fail(x.path(k), st.device ? "is for a CPU operator; a model (\"on\": \"device\") gives flops and memory"
                                      : "is for a model (\"on\": \"device\"); a CPU operator gives seconds");
        if (st.device) {
          st.work = x.quantity<flops>("flops");
          st.memory = x.quantity<bytes>("memory");
          x.get("efficiency", st.efficiency);
          if (!x.has("efficiency"))
            plan::assume(w.assumed, x.path("efficiency"), w.model_efficiency);  // the workload's
        } else {
          st.cpu_seconds = x.quantity<seconds>("seconds").value();
        }
        x.get("share", st.share, w.assumed);
        x.get("source", st.source);
        w.operators.push_back(std::move(st));
      },
      64);
}

// CPU operators and models on the devices, in pipeline order (plan/data_curation.hpp).
inline plan::data_curation_workload read_data_curation(const json& j, const plan::system& s) {
  const object o(j, "", data_curation_keys, "a data-curation workload");
  plan::data_curation_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  if (o.has("devices"))
    each([&] { w.devices = o.count("devices"); });
  else
    plan::assume(w.assumed, "devices", s.device.count);  // 0 in the workload: every device
  each([&] { w.cpu_workers = o.count("cpu_workers"); });
  each([&] { o.get("model_efficiency", w.model_efficiency, w.assumed); });
  each([&] { o.get("sharing_efficiency", w.sharing_efficiency, w.assumed); });
  each([&] { read_operators(o, w); });
  each.raise();
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

inline json data_curation_json(const plan::data_curation_evaluated& e, const plan::data_curation_workload& w) {
  const auto& c = e.cost;
  const auto names = plan::detail::model_names(w);
  json holds = json::array();
  for (const auto h : e.plan.holds) {
    json d = json::array();
    for (std::size_t j = 0; j < names.size(); ++j)
      if ((h >> j) & 1u) d.push_back(names[j]);
    holds.push_back(d);
  }
  return {{"one_model_per_device", e.plan.one_per_device},
          {"budget_bytes", e.plan.budget.value()},
          {"devices_hold", holds},
          {"samples_per_second", c.rates.samples_per_second},
          {"device_utilization", c.rates.device_utilization},
          {"cpu_bound_samples_per_second", std::isinf(c.rates.cpu_bound) ? json(nullptr) : json(c.rates.cpu_bound)},
          {"device_bound_samples_per_second", c.rates.gpu_bound},
          {"device_bytes", c.memory.value()},
          {"time_per_sample_s", c.total.time.value()},
          {"energy_per_sample_j", c.total.energy.value()},
          {"dollars_per_sample", c.dollars}};
}

inline void plan_data_curation(const request& a, const plan::system& s, const plan::data_curation_workload& w,
                               std::ostream& out) {
  refuse_codec_flags(a.planning, "data-curation", "data-curation sends nothing compressed");
  const auto r = planned([&] { return plan::plan_data_curation(s, w, options_of(a.planning)); });
  if (a.json) {
    print_result_json(out, a, s, w, "data_curation", {}, r,
                      [&](const plan::data_curation_evaluated& e) { return data_curation_json(e, w); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& b = r.candidates[r.baseline].cost;
  out << "Plan for " << w.name << " on " << s.name << " (" << w.device_count(s) << " " << s.device.name << " of "
      << to_string(s.tiers.at(0).capacity) << ", " << w.cpu_workers << " CPU workers), best " << a.planning.objective
      << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(r.chosen().plan, w) << "\n\n";
  table t({"", "chosen", plan::baseline_name(r.candidates[r.baseline].plan) + " (baseline)"});
  t.add({"samples/s", units::detail::format_number(c.rates.samples_per_second),
         units::detail::format_number(b.rates.samples_per_second)});
  t.add({"devices busy", plan::detail::pct(c.rates.device_utilization), plan::detail::pct(b.rates.device_utilization)});
  t.add({"memory per device (most)", to_string(c.memory), to_string(b.memory)});
  const auto carry = [](double rate) {
    return std::isinf(rate) ? std::string("- (no CPU operators)") : units::detail::format_number(rate) + " samples/s";
  };
  t.add({"CPU operators could carry", carry(c.rates.cpu_bound), carry(b.rates.cpu_bound)});
  t.add({"energy per sample", to_string(c.total.energy), to_string(b.total.energy)});
  t.print(out);
  print_assumed(out, s, w.assumed);
  print_explanation(out, x, plan::describe(r.candidates[r.baseline].plan, w),
                    "Alternatives (the baseline and the budgets beside the choice's)");
  out << "\nPareto front (time, energy, memory per device): " << r.pareto.size() << " plans\n";
}

// A data-curation run's rows, with the kernels it timed, as JSON or tables.
struct curation_report {
  const scaled_curation& x;
  std::string plan, baseline;
  std::size_t samples;
  unsigned cores;
  std::vector<verified_row> rows;
  std::vector<double> from_run;
  bool exact;
  std::vector<std::string> names;
};

inline void print_curation_report(const verify_request& a, const curation_report& r, std::ostream& out) {
  const auto& [x, plan_text, baseline_text, samples, cores, rows, from_run, exact, names] = r;
  if (a.json) {
    json jr = workloads::rows_json(rows, 0.2, true);
    for (std::size_t i = 0; i < from_run.size(); ++i) jr[i]["predicted_from_run_costs"] = from_run[i];
    json models = json::array();
    for (std::size_t j = 0; j < x.models.size(); ++j)
      models.push_back({{"name", names[j]},
                        {"rows", x.rows[j]},
                        {"passes", x.passes[j]},
                        {"search_seconds", x.search_seconds[j]},
                        {"footprint_bytes", x.models[j].footprint.value()},
                        {"device_seconds_per_sample", x.ops[j + 1].seconds_per_sample}});
    out << json{{"plan", r.plan},
                {"baseline", r.baseline},
                {"devices", x.devices},
                {"duty", x.duty},
                {"cores", cores},
                {"machine", trinity::detail::cpu_model()},
                {"memory_scale", x.memory_scale},
                {"cpu_seconds_per_sample", x.cpu_seconds},
                {"models", models},
                {"samples", samples},
                {"rows", jr},
                {"invariants_hold", exact}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    out << "Plan: " << r.plan << "\nBaseline: " << r.baseline << "\n\nRun here on pipeline::executor: " << x.devices
        << " devices as threads at " << plan::detail::pct(x.duty) << " of a core each (" << cores
        << " cores), memory at " << units::detail::format_number(x.memory_scale * 1e6)
        << "e-6 of the plan's (a device holds " << to_string(x.device_memory) << "), " << samples
        << " samples per placement. Kernels, sized and timed here:\n";
    table k({"operator", "kernel", "per sample (timed as the run runs it)"});
    k.add({"decode + split (1 CPU worker)", std::to_string(x.clip_floats) + " int8 values decoded and pooled",
           to_string(seconds{x.cpu_seconds})});
    for (std::size_t j = 0; j < x.models.size(); ++j)
      k.add({names[j],
             std::to_string(x.passes[j]) + " searches of " + std::to_string(x.rows[j]) + " x " +
                 std::to_string(x.dimension) + " (" + to_string(x.models[j].footprint) + ")",
             to_string(seconds{x.ops[j + 1].seconds_per_sample}) + " of a device"});
    k.print(out);
    out << '\n';
    table t({"", "predicted", "from the run's costs", "measured", "measured / predicted"});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& y = rows[i];
      t.add({y.mechanism, units::detail::format_number(y.predicted),
             i < from_run.size() ? units::detail::format_number(from_run[i]) : std::string("-"),
             units::detail::format_number(y.measured), ratio_text(y)});
    }
    t.print(out);
    out << "\nPredicted: model::rates over the kernel costs above, timed on every device at once at its duty "
           "(sharing efficiency 1: a device here interleaves its models' steps at no cost). From the run's "
           "costs: the same, over what each model's kernels took in that run. Rates and utilisation are "
           "timings on a shared machine: reported, not held; the bytes, the samples and the queues are held "
           "exactly.\n";
  }
}

// A data-curation plan: the pipeline run here on pipeline::executor (workloads/curation_run.hpp) with the plan's
// placement and with one model per device, beside model::rates over the kernels' costs measured here.
inline void verify_curation(const verify_request& a, const plan::system& s, const plan::data_curation_workload& w,
                            std::ostream& out) {
  refuse_training_flags(a, "a data-curation plan (its run's size is --samples)");
  if (!a.planning.profile.empty())
    throw bad_flag("--profile", a.planning.profile,
                   "is for a training plan; a data-curation run times its own kernels");
  if (a.requests != "10000") throw bad_flag("--requests", a.requests, "is for a diffusion plan's synthetic trace");
  if (!a.trace.empty()) throw bad_flag("--trace", a.trace, "is for diffusion and llm-serve plans");
  if (!a.embeddings.empty()) throw bad_flag("--embeddings", a.embeddings, "is for a diffusion plan's trace");
  plan::data_curation_result r;
  try {
    r = plan::plan_data_curation(s, w, options_of(a.planning));
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  trinity::detail::require(w.device_count(s) <= 64, "workload.devices",
                           "verify runs each device as a thread here: at most 64");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::cerr << "trinity verify: timing each kernel as the devices will run it...\n";
  const auto x = scale_curation(s, w, cores);
  const auto& chosen = r.chosen();
  const auto& base = r.candidates[r.baseline];
  const auto predicted_chosen = model::rates(x.ops, x.cluster, chosen.plan.holds);
  const auto predicted_base = model::rates(x.ops, x.cluster, base.plan.holds);
  const std::size_t samples =
      a.samples.empty()
          ? std::clamp<std::size_t>(static_cast<std::size_t>(8 * predicted_chosen.samples_per_second), 100, 20000)
          : count_flag(a.samples, "--samples", 10, 1000000);
  std::cerr << "trinity verify: running " << samples << " samples with each placement...\n";
  const auto m_base = run_scaled(x, base.plan.holds, samples);
  const auto m_chosen = run_scaled(x, chosen.plan.holds, samples);
  bytes most_charged{}, most_planned{};
  for (const auto& m : {m_base, m_chosen})
    for (const auto b : m.resident) most_charged = std::max(most_charged, b);
  for (const auto h : chosen.plan.holds) {
    bytes b{};
    for (std::size_t j = 0; j < x.models.size(); ++j)
      if ((h >> j) & 1u) b += x.models[j].footprint;
    most_planned = std::max(most_planned, b);
  }
  std::size_t over_capacity = 0;
  for (const auto& m : {m_base, m_chosen})
    for (const auto q : m.most_queued) over_capacity += q > std::max<std::size_t>(8, 2 * x.devices);
  // The model again, over the kernels' costs as the runs measured them: what is left between this and the
  // run is the model's own error; between the first prediction and this, the timing's.
  const auto as_run = [&](const pipeline::run_stats& m, const model::device_models& holds) {
    auto ops = x.ops;
    for (std::size_t j = 0; j < x.models.size(); ++j)
      if (m.entered[j]) ops[j + 1].seconds_per_sample = m.model_busy_seconds[j] / static_cast<double>(m.entered[j]);
    return model::rates(ops, x.cluster, holds);
  };
  const auto run_base = as_run(m_base, base.plan.holds), run_chosen = as_run(m_chosen, chosen.plan.holds);
  std::vector<verified_row> rows{
      {"samples/s, " + plan::baseline_name(base.plan), predicted_base.samples_per_second, m_base.samples_per_second(),
       true},
      {"samples/s, the plan's co-residency", predicted_chosen.samples_per_second, m_chosen.samples_per_second(), true},
      {"speed-up from co-residency", predicted_chosen.samples_per_second / predicted_base.samples_per_second,
       m_chosen.samples_per_second() / m_base.samples_per_second(), true},
      {"devices busy, " + plan::baseline_name(base.plan), predicted_base.device_utilization,
       m_base.mean_device_utilization(), true},
      {"devices busy, the plan's co-residency", predicted_chosen.device_utilization, m_chosen.mean_device_utilization(),
       true},
      {"most bytes charged to a device (budget " + to_string(x.device_memory) + ")", most_planned.value(),
       most_charged.value()},
      {"samples through, of " + std::to_string(samples), 2.0 * static_cast<double>(samples),
       static_cast<double>(m_base.samples + m_chosen.samples)},
      {"queues past their capacity", 0, static_cast<double>(over_capacity)},
  };
  const std::vector<double> from_run{run_base.samples_per_second, run_chosen.samples_per_second,
                                     run_chosen.samples_per_second / run_base.samples_per_second,
                                     run_base.device_utilization, run_chosen.device_utilization};
  const bool exact = most_charged == most_planned && rows[6].ratio() == 1.0 && over_capacity == 0;
  print_curation_report(a,
                        {x, plan::describe(chosen.plan, w), plan::describe(base.plan, w), samples, cores,
                         std::move(rows), from_run, exact, plan::detail::model_names(w)},
                        out);
  if (!exact) throw usage_error("an invariant of the run does not hold (see the table)");
}

}  // namespace detail

//! Data curation (plan/data_curation.hpp): CPU operators and models on the devices, in pipeline order; which
//! models each device holds, one per device or co-resident. `"type": "data-curation"`.
struct data_curation {
  static constexpr std::string_view type = "data-curation";
  using description = plan::data_curation_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_data_curation(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"t2v-curation"}; }
  //! A preset's devices follow the system it is paired with: every device, as a JSON workload without them.
  static std::optional<description> preset(std::string_view name, const plan::system& s) {
    auto w = plan::presets::find_data_curation(name);
    if (w && !w->devices) plan::assume(w->assumed, "devices", s.device.count);
    return w;
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    detail::plan_data_curation(a, s, w, out);
  }
  static void simulate(const request& a, const plan::system&, description&, std::ostream&) {
    throw bad_flag("--workload", a.workload,
                   "is a data-curation workload; it sends nothing over a fabric. Run it "
                   "here with `trinity verify`");
  }
  static void verify(const verify_request& a, const plan::system& s, description& w, std::ostream& out) {
    detail::verify_curation(a, s, w, out);
  }
};

}  // namespace trinity::workloads
