#pragma once
//! \file
//! How sure a serving plan is: its time to first token, time per output token and throughput, each times the band
//! of measured / predicted that held 80% of the held-out published serving runs measuring it
//! (plan/detail/held_out_residuals.hpp, generated from bench/published/serving-runs.json), widened a tenth each
//! way where the device's serving constants were not fitted on it (its `unmeasured` list names "serving"). A stack
//! fitted to a user's runs (plan/serving_stack.hpp) brings its own bands for the figures its runs measured.

#include <optional>
#include <string>

#include <trinity/plan/detail/held_out_residuals.hpp>
#include <trinity/plan/serving_stack.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::plan {

struct serving_intervals {
  std::optional<interval> ttft, tpot, throughput;
  std::size_t unmeasured = 0;  //!< 1 where the device's serving constants are borrowed, else 0
};

//! What judged the serving bands, for a reader of the interval.
inline std::string serving_band_source() {
  return "the held-out runs of bench/published/serving-runs.json (" + std::to_string(detail::serving_ttft_runs) +
         " measured time to first token, " + std::to_string(detail::serving_tpot_runs) + " time per output token, " +
         std::to_string(detail::serving_throughput_runs) + " throughput)";
}

//! What judged a serving prediction's bands under `stack`: its own runs, or the published ones.
inline std::string serving_band_source(const serving_stack& stack) {
  return stack.ttft.known() || stack.tpot.known() || stack.throughput.known()
             ? "stack " + stack.name + " (" + stack.source + ")"
             : serving_band_source();
}

//! The intervals of a serving prediction on system `s` under `stack`.
inline serving_intervals serving_intervals_of(const system& s, const serving_stack& stack, double ttft, double tpot,
                                              double throughput) {
  const auto band = [](double low, double high, std::size_t runs) {
    return residual_band{low, high, detail::held_out_coverage, runs};
  };
  const auto own = [](const residual_band& mine, residual_band published) { return mine.known() ? mine : published; };
  serving_intervals out;
  out.unmeasured = s.device.measured("serving") ? 0 : 1;
  out.ttft = interval_of(
      ttft, own(stack.ttft, band(detail::serving_ttft_low, detail::serving_ttft_high, detail::serving_ttft_runs)),
      out.unmeasured);
  out.tpot = interval_of(
      tpot, own(stack.tpot, band(detail::serving_tpot_low, detail::serving_tpot_high, detail::serving_tpot_runs)),
      out.unmeasured);
  out.throughput = interval_of(
      throughput,
      own(stack.throughput,
          band(detail::serving_throughput_low, detail::serving_throughput_high, detail::serving_throughput_runs)),
      out.unmeasured);
  return out;
}

}  // namespace trinity::plan
