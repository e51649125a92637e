#pragma once
//! \file
//! How sure a training plan is: the interval of its step time and device memory under the workload's stack
//! (plan/training_stack.hpp), widened for each curve the step model reads that the device did not measure. Printed
//! beside the figures and in the JSON as predicted.interval: {"step_time_s": [lo, hi], "device_bytes": [lo, hi]
//! or null, "coverage", "stack", "judged_on", "unmeasured"}.

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <trinity/model/training/step_cost.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training_stack.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>

namespace trinity::workloads {

//! The curves of the device a training step reads that were not measured on it: the GEMM curve always, the fused
//! attention kernel's where the workload runs one and names none of the measured kernels.
inline std::vector<std::string> unmeasured_curves(const plan::system& s, const plan::training_workload& w) {
  std::vector<std::string> out;
  if (!s.device.measured("gemm")) out.emplace_back("gemm");
  if (w.flash_attention && w.attention_kernel.empty() && !s.device.measured("attention")) out.emplace_back("attention");
  return out;
}

//! An interval as JSON: [low, high], or null where nothing bounds it.
inline nlohmann::json bounds_json(const std::optional<plan::interval>& i) {
  return i ? nlohmann::json::array({i->low, i->high}) : nlohmann::json(nullptr);
}

//! predicted.interval for a priced layout.
inline nlohmann::json interval_json(const model::parallel_step_cost& r, const plan::system& s,
                                    const plan::training_workload& w) {
  const auto unmeasured = unmeasured_curves(s, w);
  const auto pair = bounds_json;
  return {{"step_time_s", pair(plan::interval_of(r.step.value(), w.stack.step_time, unmeasured.size()))},
          {"device_bytes", pair(plan::interval_of(r.device_bytes.value(), w.stack.device_bytes, unmeasured.size()))},
          {"coverage", w.stack.step_time.coverage},
          {"stack", w.stack.name},
          {"judged_on", w.stack.source},
          {"unmeasured", unmeasured}};
}

//! The interval as the text plan prints it, one line each for the step and the memory.
inline void print_interval(std::ostream& out, const model::parallel_step_cost& r, const plan::system& s,
                           const plan::training_workload& w) {
  const auto unmeasured = unmeasured_curves(s, w);
  std::string widened;
  for (const auto& u : unmeasured) widened += (widened.empty() ? "" : ", ") + u;
  const auto step = plan::interval_of(r.step.value(), w.stack.step_time, unmeasured.size());
  const auto memory = plan::interval_of(r.device_bytes.value(), w.stack.device_bytes, unmeasured.size());
  const auto percent = [](double c) { return units::detail::format_number(c * 100) + "%"; };
  out << "interval: ";
  if (step)
    out << "step time " << to_string(seconds{step->low}) << " to " << to_string(seconds{step->high}) << " (an "
        << percent(step->coverage) << " interval, the " << w.stack.name << " stack's band: " << w.stack.source << ")";
  else
    out << "step time unknown (the " << w.stack.name << " stack was judged on no measured step)";
  if (memory)
    out << "; device memory " << to_string(bytes{memory->low}) << " to " << to_string(bytes{memory->high});
  else
    out << "; device memory not bounded (no measured memory judged the " << w.stack.name << " stack)";
  if (!widened.empty()) out << "; widened for the device's unmeasured " << widened;
  out << '\n';
}

}  // namespace trinity::workloads
