#pragma once
//! \file
//! `trinity verify`: a workload's chosen plan run here, scaled down, beside what the planner predicted. A
//! workload that can be run with the library alone (a cache replayed on a trace) has a `verify` hook of its own;
//! one that needs the programs beside `trinity` (trinity-train) is run by the command
//! (tools/trinity/verify_command.cpp). Both print the same rows: mechanism, predicted, measured, their ratio.

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>
#include <trinity/workloads/request.hpp>

namespace trinity::workloads {

//! What verify is asked, beyond a plan's flags: a trace to replay (and a diffusion trace's embeddings, or the
//! synthetic trace's size), a curation run's samples, and which training-run flags were given (refused by a
//! plan that runs no training).
struct verify_request : request {
  std::string embeddings, requests = "10000", samples;
  std::vector<std::string> training_flags_given;
};

//! A training run's flag given to a plan that runs no training is refused, not ignored.
inline void refuse_training_flags(const verify_request& a, const std::string& kind) {
  if (!a.training_flags_given.empty())
    throw usage_error(a.training_flags_given.front() + ": is for a training plan's run, not " + kind);
}

//! One mechanism predicted and measured.
struct verified_row {
  std::string mechanism;
  double predicted, measured;
  bool timing = false;  //!< a time on a shared machine: reported, not held to the tolerance
  [[nodiscard]] double ratio() const {
    return predicted == 0 ? (measured == 0 ? 1.0 : INFINITY) : measured / predicted;
  }
  [[nodiscard]] bool within(double tolerance) const { return std::fabs(ratio() - 1.0) <= tolerance; }
};

inline std::string ratio_text(const verified_row& x) { return units::detail::format_number(x.ratio()); }

//! The rows as every verify's JSON gives them: mechanism, predicted, measured, their ratio, and whether it is
//! within `tolerance` (the key names it: within_20_percent); with `timed`, which rows are timings.
inline nlohmann::json rows_json(const std::vector<verified_row>& rows, double tolerance, bool timed = false) {
  const std::string within = "within_" + std::to_string(std::lround(tolerance * 100)) + "_percent";
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : rows) {
    out.push_back({{"mechanism", x.mechanism},
                   {"predicted", x.predicted},
                   {"measured", x.measured},
                   {"measured_over_predicted", x.ratio()},
                   {within, x.within(tolerance)}});
    if (timed) out.back()["timed"] = x.timing;
  }
  return out;
}

//! The rows as a table: mechanism, predicted, measured, their ratio.
inline void print_rows(std::ostream& out, const std::vector<verified_row>& rows) {
  reports::table t({"mechanism", "predicted", "measured", "measured / predicted"});
  for (const auto& x : rows)
    t.add({x.mechanism, units::detail::format_number(x.predicted), units::detail::format_number(x.measured),
           ratio_text(x)});
  t.print(out);
}

//! A plan run on synthetic data here takes no trace (unless it `takes_trace`), embeddings or sample count: each
//! is refused, not ignored.
inline void refuse_replay_flags(const verify_request& a, const std::string& kind, bool takes_trace = false) {
  refuse_training_flags(a, kind);
  if (!takes_trace && !a.trace.empty())
    throw bad_flag("--trace", a.trace, "is for a diffusion, llm-serve or embedding-serve plan's replay");
  if (!a.embeddings.empty()) throw bad_flag("--embeddings", a.embeddings, "is for a diffusion plan's trace");
  if (!a.samples.empty()) throw bad_flag("--samples", a.samples, "is for a data-curation plan");
}

//! A workload whose plan the library itself can run here.
template <class W>
concept VerifiableWorkload = requires(const verify_request& a, const plan::system& s, typename W::description& d,
                                      std::ostream& out) {
  { W::verify(a, s, d, out) } -> std::same_as<void>;
};

}  // namespace trinity::workloads
