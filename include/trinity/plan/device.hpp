#pragma once
//! \file
//! One accelerator as the planner prices it: its dense rates by precision, its power, its rent, and the curves
//! measured on it (a GEMM's share of peak by shape, the fused attention kernel's, a serving engine's constants).
//! A system holds `count` of them (plan/system.hpp); the named ones are in plan/device_presets.hpp, and a JSON
//! device starts from one of them or from a profile file (io/device.hpp).

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::plan {

//! The precisions a device may list a rate for and a workload may run at.
inline constexpr std::string_view precisions[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"};

//! Whether `name` is one of plan::precisions.
inline bool known_precision(std::string_view name) {
  for (const auto p : precisions)
    if (p == name) return true;
  return false;
}

struct device_spec {
  std::string name;
  flops_per_second compute{};  //!< sustained dense rate at bf16, and at any precision not listed below
  watts power{};               //!< board power while computing
  std::size_t count = 1;       //!< devices in the data-parallel group
  double price_per_hour = 0;   //!< dollars per device-hour (rent, or amortised purchase); 0: not priced
  std::string source;
  bool gpu = false;  //!< its gradient codecs run as GPU kernels (plan::gpu_codecs)
  //! Dense rates at other precisions ("fp32", "int8", ...), where they differ from `compute`.
  std::vector<std::pair<std::string, flops_per_second>> compute_by_precision = {};
  //! Board power while it waits (on the network, a tier, the other end of a link): what a step's idle
  //! share costs in energy. At most `power`.
  watts idle_power{};
  //! The share of `compute` a matrix multiply gets by its shape (model/gemm.hpp): what the parallel step
  //! model prices GEMMs at. The default, the full peak at every shape, is an upper bound.
  model::gemm_efficiency gemm{};
  //! What a serving engine on this device costs beyond its bytes and FLOPs (model/serving.hpp). The default, the
  //! data sheet's ideal, is an upper bound on speed.
  model::serving_calibration serving{};
  //! The fused attention kernel's curve (model/fused_attention.hpp): what flash_attention costs in the parallel
  //! step model. The default, not measured, prices the attention core as the GEMM curve's batched GEMMs.
  model::fused_attention_efficiency attention{};
  //! The curves above not measured on this device ("gemm", "attention", "serving"): borrowed from another or left
  //! at their defaults. A plan lists them as assumed and widens its intervals for each (plan/training_stack.hpp).
  std::vector<std::string> unmeasured = {};

  //! Whether the curve `name` was measured on this device.
  [[nodiscard]] bool measured(std::string_view curve) const {
    for (const auto& u : unmeasured)
      if (u == curve) return false;
    return true;
  }

  //! The device's own rate for this precision, or null where it lists none.
  [[nodiscard]] const flops_per_second* listed_rate(std::string_view precision) const {
    for (const auto& [precision_name, r] : compute_by_precision)
      if (precision_name == precision) return &r;
    return nullptr;
  }
  //! Whether the device has a rate of its own for this precision (else rate() gives `compute`).
  [[nodiscard]] bool lists_rate(std::string_view precision) const { return listed_rate(precision) != nullptr; }
  //! The rate at which work of this precision runs.
  [[nodiscard]] flops_per_second rate(std::string_view precision) const {
    const auto* r = listed_rate(precision);
    return r ? *r : compute;
  }
};

namespace detail {
// "-1 GB must be positive": the value as the user would write it, then the rule.
template <class Q>
std::string shown(Q v) {
  if constexpr (std::is_arithmetic_v<Q>)
    return units::detail::format_number(static_cast<double>(v));
  else
    return to_string(v);
}
template <class Q>
double raw(Q v) {
  if constexpr (std::is_arithmetic_v<Q>)
    return static_cast<double>(v);
  else
    return v.value();
}
template <class Q>
void require_positive(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x > 0 && trinity::detail::is_finite(x), field, shown(v) + " must be positive and finite");
}
template <class Q>
void require_non_negative(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x >= 0 && trinity::detail::is_finite(x), field,
                           shown(v) + " must be finite and not negative");
}
//! A precision name, refused with the nearest known one.
inline void require_precision(std::string_view name, const std::string& field) {
  if (known_precision(name)) return;
  // Appended, not "\"" + std::string(name): GCC 12 at -O3 warns falsely on that (-Wrestrict, bug 105651).
  std::string why(1, '"');
  why.append(name).append("\" is not a precision").append(trinity::detail::suggestion(name, precisions));
  throw invalid_input(field, why);
}

inline void validate(const device_spec& d, const std::string& at) {
  require_positive(d.compute, at + ".compute");
  for (const auto& [name, r] : d.compute_by_precision) {
    require_precision(name, at + ".compute." + name);
    require_positive(r, at + ".compute." + name);
  }
  require_non_negative(d.power, at + ".power");
  require_non_negative(d.idle_power, at + ".idle_power");
  trinity::detail::require(d.idle_power <= d.power, at + ".idle_power",
                           to_string(d.idle_power) + " is more than the power while computing (" + to_string(d.power) +
                               "); a device waiting draws less than one working");
  require_non_negative(d.price_per_hour, at + ".price_per_hour");
  model::validate(d.gemm, at + ".gemm");
  model::validate(d.attention, at + ".attention");
  model::validate(d.serving, at + ".serving");
}
}  // namespace detail

}  // namespace trinity::plan
