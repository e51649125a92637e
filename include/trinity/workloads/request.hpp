#pragma once
//! \file
//! What a user asks of a workload's plan (`trinity plan`, `simulate`, `verify`): the system and workload named,
//! the objective and budgets, a layout or a trace, JSON or text. The flags arrive as the user typed them and are
//! checked here, where their meaning is, so that a refusal names the flag, its value and what would be valid:
//! `--objective fast: expected time, energy or cost`. A workload's hooks (workloads/workload.hpp) read it.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/field_problems.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/parse.hpp>

namespace trinity::workloads {

//! A flag or an input whose value cannot work: the command-line program exits 2 with it.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  //! A flag's refusal, its parts kept for `--json`'s error object.
  usage_error(std::string_view flag, std::string_view value, std::string_view rule)
      : std::runtime_error(std::string(flag) + " " + (value.empty() ? std::string("\"\"") : std::string(value)) + ": " +
                           std::string(rule)),
        flag_(flag),
        value_(value),
        rule_(rule) {}
  //! A file's refusal: "file: field: problem", the file and every field its reading refused kept apart.
  usage_error(std::string_view file, const invalid_input& e)
      : std::runtime_error(std::string(file) + ": " + (e.field() == file ? e.problem() : std::string(e.what()))),
        file_(file),
        problems_(e.field() == file ? std::vector<field_problem>{} : problems_of(e)) {}
  [[nodiscard]] const std::string& flag() const noexcept { return flag_; }  //!< empty: not one flag's
  [[nodiscard]] const std::string& value() const noexcept { return value_; }
  [[nodiscard]] const std::string& rule() const noexcept { return rule_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }  //!< empty: not a file's
  //! The fields of the file refused, by JSON path (none: the file as a whole, as JSON that does not parse).
  [[nodiscard]] const std::vector<field_problem>& problems() const noexcept { return problems_; }

 private:
  std::string flag_, value_, rule_, file_;
  std::vector<field_problem> problems_;
};

//! "--reuse-depth 60: must not exceed --steps (50)".
inline usage_error bad_flag(std::string_view flag, std::string_view value, std::string_view rule) {
  return usage_error(flag, value, rule);
}

//! A quantity with a unit, e.g. --entry-size 2GB.
template <class Q>
Q quantity_flag(const std::string& text, std::string_view flag) {
  try {
    return units::parse<Q>(text, flag);
  } catch (const invalid_input& e) {
    throw bad_flag(flag, text, e.problem());
  }
}

//! A plain number in [lo, hi].
inline double number_flag(const std::string& text, std::string_view flag, double lo, double hi,
                          std::string_view range_text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    throw bad_flag(flag, text, "not a number; expected " + std::string(range_text));
  if (v < lo || v > hi) throw bad_flag(flag, text, "out of range; expected " + std::string(range_text));
  return v;
}

//! A whole number in [lo, hi].
inline std::size_t count_flag(const std::string& text, std::string_view flag, std::size_t lo, std::size_t hi) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (ec != std::errc{} || end != text.data() + text.size()) throw bad_flag(flag, text, "not " + range);
  if (v < lo || v > hi) throw bad_flag(flag, text, "out of range; expected " + range);
  return v;
}

//! The flags every planning command shares, as typed.
struct planning_flags {
  std::string objective = "time", profile, error_budget, link_budget;
  //! Reads a `trinity calibrate --out` profile's codecs (the program's reader, which knows the codec catalogue).
  std::function<std::vector<model::compressor_cost>(const std::string&)> read_profile;
};

//! One plan, simulation or verification asked for.
struct request {
  std::string system = "gb200-nvl72-cxl", workload = "llm-70b-train", plot, trace, parallelism;
  std::string stack;     //!< a training stack: a built-in's name or a file `trinity fit` wrote; empty: the workload's
  std::size_t gpus = 0;  //!< the layout search's GPUs; 0: the workload's ranks
  double memory_headroom = 0;  //!< fraction of device memory a parallel layout leaves free
  planning_flags planning;
  bool json = false;
  bool strict = false;  //!< a system figure far from every preset of its kind is refused, not warned of
};

//! The objective flag, checked.
inline plan::objective objective_of(const planning_flags& f) {
  if (f.objective == "time") return plan::objective::time;
  if (f.objective == "energy") return plan::objective::energy;
  if (f.objective == "cost") return plan::objective::cost;
  throw bad_flag("--objective", f.objective, "expected time, energy or cost");
}

//! The objective and the link budget, checked: the planner's options.
inline plan::planner_options options_of(const planning_flags& f) {
  plan::planner_options o{.objective = objective_of(f), .link_budget = std::nullopt};
  if (!f.link_budget.empty()) o.link_budget = quantity_flag<bytes>(f.link_budget, "--link-budget");
  return o;
}

//! Runs a planner, its refusal of the input turned into a usage error that keeps the field's name.
template <class F>
auto planned(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
}

//! The gradient codecs for these flags (the profile's, else the system's devices'), the error budget applied to w.
inline std::vector<model::compressor_cost> gradient_codecs(const plan::system& s, plan::training_workload& w,
                                                           const planning_flags& f) {
  if (!f.error_budget.empty())
    w.error_budget = number_flag(f.error_budget, "--error-budget", 0, 10, "a relative error from 0 to 10");
  if (f.profile.empty()) return plan::default_codecs_for(s);
  if (!f.read_profile) throw bad_flag("--profile", f.profile, "no profile reader was given to the planner");
  return f.read_profile(f.profile);
}

//! The data-parallel training plan for these flags.
inline plan::plan_result plan_training_with(const plan::system& s, plan::training_workload& w,
                                            const planning_flags& f) {
  const auto o = options_of(f);
  const auto codecs = gradient_codecs(s, w, f);
  return planned([&] { return plan::plan_training(s, w, codecs, o); });
}

//! The planning flags an llm-serve workload takes: the error budget applied to w; the gradient-only flags refused.
inline void apply_serving_flags(plan::serving_workload& w, const planning_flags& f) {
  if (!f.profile.empty())
    throw bad_flag("--profile", f.profile,
                   "is for a training workload's gradient codecs; llm-serve's KV codecs are the system's");
  if (!f.link_budget.empty())
    throw bad_flag("--link-budget", f.link_budget, "is for training and edge workloads, not llm-serve");
  if (!f.error_budget.empty())
    w.error_budget = number_flag(f.error_budget, "--error-budget", 0, 10, "a relative error from 0 to 10");
}

//! The serving plan for these flags.
inline plan::serving_plan_result plan_serving_with(const plan::system& s, plan::serving_workload& w,
                                                   const planning_flags& f) {
  apply_serving_flags(w, f);
  return planned([&] { return plan::plan_serving(s, w, options_of(f)); });
}

//! A workload that sends nothing through a codec: the codec and link flags mean nothing to it.
inline void refuse_codec_flags(const planning_flags& f, const std::string& type, const std::string& why) {
  if (!f.profile.empty())
    throw bad_flag("--profile", f.profile, "is for a training workload's gradient codecs, not " + type);
  if (!f.link_budget.empty())
    throw bad_flag("--link-budget", f.link_budget, "is for training and edge workloads, not " + type);
  if (!f.error_budget.empty()) throw bad_flag("--error-budget", f.error_budget, "is for codecs; " + why);
}

//! Why --gpus is refused where no layout is laid out.
inline constexpr const char* gpus_go_with =
    "goes with a training workload's layouts (--parallelism LAYOUT or search); the data-parallel planner (and "
    "any other workload) takes its ranks from the workload";

//! What --parallelism means for a training workload: as given; unset, the layout search (`search`) where the
//! workload has a transformer shape to lay out, else the data-parallel planner (`data`).
inline std::string training_parallelism(const std::string& given, const plan::training_workload& w) {
  if (!given.empty()) return given;
  return w.shape ? "search" : "data";
}

//! --memory-headroom where no layout is priced.
inline void refuse_memory_headroom(const request& a) {
  if (a.memory_headroom > 0)
    throw bad_flag("--memory-headroom", units::detail::format_number(a.memory_headroom),
                   "goes with a training workload's layouts (--parallelism LAYOUT, search or dynamic); the "
                   "data-parallel planner has none");
}

//! The layout --parallelism names, checked against --gpus (0: any) and the system's reach.
inline model::parallel_layout named_layout(const plan::system& s, const std::string& parallelism, std::size_t gpus) {
  model::parallel_layout l;
  try {
    l = io::parse_parallel_layout(parallelism, "--parallelism");
  } catch (const invalid_input& e) {
    throw bad_flag("--parallelism", parallelism, e.problem());
  }
  if (gpus && gpus != l.gpus())
    throw bad_flag("--gpus", std::to_string(gpus),
                   "differs from the layout's " + std::to_string(l.gpus()) + " (tp*pp*cp*dp); give one or the other");
  if (!s.scale_out && l.gpus() > s.device.count)
    throw bad_flag("--parallelism", parallelism,
                   "uses " + std::to_string(l.gpus()) + " GPUs (tp*pp*cp*dp), and " + s.name + " has " +
                       std::to_string(s.device.count) + " in one domain with no scale-out link");
  return l;
}

//! Every layout of `gpus` GPUs (0: the workload's ranks) searched for these flags' objective and link budget.
inline plan::parallel_plan_result search_layouts(const plan::system& s, const plan::training_workload& w,
                                                 std::size_t gpus, double memory_headroom, const planning_flags& f) {
  const auto base = options_of(f);
  auto budgeted = w;
  auto codecs = gradient_codecs(s, budgeted, f);
  try {
    return plan::plan_parallel(s, budgeted,
                               {.gpus = gpus,
                                .objective = base.objective,
                                .link_budget = base.link_budget,
                                .memory_headroom = memory_headroom,
                                .codecs = std::move(codecs)});
  } catch (const invalid_input& e) {
    if (e.field() == "gpus") throw bad_flag("--gpus", std::to_string(gpus), e.problem());
    throw usage_error(std::string(e.what()));
  }
}

//! A workload that lays out no parallel layout refuses the layout flags (and, in `simulate`, a KV trace), so that
//! a flag is never silently ignored. `command` is "plan" or "simulate".
inline void refuse_layout_flags(const request& a, std::string_view command) {
  const bool simulating = command == "simulate";
  if (simulating && !a.trace.empty()) throw bad_flag("--trace", a.trace, "is for an llm-serve workload's KV loads");
  if (!a.parallelism.empty())
    throw bad_flag("--parallelism", a.parallelism,
                   simulating ? "lays a training workload's layout on the fabric; this workload is not one"
                              : "prices a training workload's layout; this workload is not one");
  if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
  if (!simulating) refuse_memory_headroom(a);
}

}  // namespace trinity::workloads
