#pragma once
//! \file
//! A training stack as the planner prices it: its constants (model/training_stack.hpp), what they were fitted on,
//! and how far its predictions land from runs that judge it, from which every prediction gets an interval. A
//! workload names a built-in stack ("stack": "megatron-core"); `trinity fit` writes a user's own from their runs
//! (plan/stack_fit.hpp) and `trinity plan --stack FILE` prices with it.
//!
//! An interval is the prediction times the band of measured/predicted ratios that held `coverage` of the judging
//! runs, widened for every figure of the device that was not measured on it (the device's `unmeasured` list).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/model/training_stack.hpp>
#include <trinity/plan/detail/held_out_residuals.hpp>
#include <trinity/plan/device.hpp>

namespace trinity::plan {

//! The natural logarithms of measured/predicted that bound the central `coverage` of a stack's judging runs:
//! a prediction p was measured between p·e^low and p·e^high that often. No runs: nothing is known (`known()`).
struct residual_band {
  double low = 0, high = 0;
  double coverage = 0;
  std::size_t runs = 0;
  [[nodiscard]] bool known() const noexcept { return runs > 0; }
  friend bool operator==(const residual_band&, const residual_band&) = default;
};

//! The band holding the central `coverage` of `log_ratios` (quantiles by linear interpolation); none from none.
inline residual_band band_of(std::vector<double> log_ratios, double coverage) {
  if (log_ratios.empty()) return {};
  std::sort(log_ratios.begin(), log_ratios.end());
  const auto quantile = [&](double q) {
    const double at = q * static_cast<double>(log_ratios.size() - 1);
    const auto i = static_cast<std::size_t>(at);
    return i + 1 < log_ratios.size()
               ? log_ratios[i] + (at - static_cast<double>(i)) * (log_ratios[i + 1] - log_ratios[i])
               : log_ratios[i];
  };
  return {quantile((1 - coverage) / 2), quantile((1 + coverage) / 2), coverage, log_ratios.size()};
}

struct training_stack {
  std::string name;
  std::string source;  //!< what fitted it: the built-in's sources, or the runs `trinity fit` was given
  model::stack_constants constants{};
  residual_band step_time{}, device_bytes{};
  std::vector<std::string> fitted_on{};   //!< the runs' names
  std::vector<std::string> not_pinned{};  //!< constants the runs could not tell apart, kept at their defaults
};

//! How much wider (in log ratio, each side) an interval gets for each figure of the device not measured on it: a
//! curve borrowed from another device misses by more than one measured, by an amount no run here measures. A
//! stated policy, not a fit: one unmeasured figure widens an interval by a tenth each way.
inline const double unmeasured_widening = std::log(1.1);

//! A prediction's interval: [low, high] and the share of runs such an interval held.
struct interval {
  double low = 0, high = 0;
  double coverage = 0;
};

//! The interval of `predicted` under band `b`, widened for `unmeasured` figures of the device; nullopt where the
//! band is unknown (a stack judged on no measured memory says nothing of memory).
inline std::optional<interval> interval_of(double predicted, const residual_band& b, std::size_t unmeasured) {
  if (!b.known()) return std::nullopt;
  const double widen = static_cast<double>(unmeasured) * unmeasured_widening;
  return interval{predicted * std::exp(b.low - widen), predicted * std::exp(b.high + widen), b.coverage};
}

namespace stacks {

//! Megatron-Core (and NeMo, which runs it): the stack the step model's curves were measured and fitted under,
//! its constants the defaults; its step-time band is that of the held-out published runs `trinity validate`
//! judges (plan/detail/held_out_residuals.hpp, generated). No published run of it measured memory: no band.
inline training_stack megatron_core() {
  training_stack s;
  s.name = "megatron-core";
  s.source = detail::held_out_source;
  s.step_time = {detail::held_out_step_low, detail::held_out_step_high, detail::held_out_coverage,
                 detail::held_out_runs};
  return s;
}

inline std::vector<std::string_view> names() { return {"megatron-core"}; }

//! The built-in stack named `name`, or nullopt.
inline std::optional<training_stack> find(std::string_view name) {
  if (name == "megatron-core") return megatron_core();
  return std::nullopt;
}

//! The built-in stack named `name`; an unknown name is refused at `field` with the nearest.
inline training_stack named(std::string_view name, const std::string& field) {
  if (auto s = find(name)) return *s;
  throw invalid_input(field, "\"" + std::string(name) + "\" is no built-in stack" +
                                 trinity::detail::suggestion(name, names()) +
                                 "; a stack of your own is a file `trinity fit` writes, given with --stack FILE");
}

}  // namespace stacks
}  // namespace trinity::plan
