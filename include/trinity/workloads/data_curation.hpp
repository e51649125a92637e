#pragma once
//! \file
//! Data curation as a workload (workloads/workload.hpp): its JSON reader (`"type": "data-curation"`: the CPU
//! workers and the operators in pipeline order), its preset, and its plan: which models each device holds and
//! the samples per second that buys.

#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/data_curation.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key data_curation_keys[] = {{"name", required},        {"type", required},   {"devices"},
                                             {"cpu_workers", required}, {"model_efficiency"}, {"sharing_efficiency"},
                                             {"operators", required}};
inline constexpr key curation_stage_keys[] = {{"name", required}, {"on", required}, {"seconds"}, {"flops"},
                                              {"efficiency"},     {"memory"},       {"share"},   {"source"}};

// CPU operators and models on the devices, in pipeline order (plan/data_curation.hpp).
inline plan::data_curation_workload read_data_curation(const json& j, const plan::system& s) {
  const object o(j, "", data_curation_keys, "a data-curation workload");
  plan::data_curation_workload w;
  w.name = o.text("name");
  if (o.has("devices"))
    w.devices = o.count("devices");
  else
    plan::assume(w.assumed, "devices", s.device.count);  // 0 in the workload: every device
  w.cpu_workers = o.count("cpu_workers");
  o.get("model_efficiency", w.model_efficiency, w.assumed);
  o.get("sharing_efficiency", w.sharing_efficiency, w.assumed);
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
};

}  // namespace trinity::workloads
