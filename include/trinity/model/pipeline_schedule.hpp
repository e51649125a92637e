#pragma once
//! \file
//! Pipeline schedules, each one type: its name (a layout's schedule=NAME, trinity-train's --schedule), the order in
//! which one rank of p runs the forward and backward passes of m micro-batches through its v model chunks, and the
//! step model's two counts of it (the micro-batches' activations the first stage keeps at its peak, and the
//! bubble), and the layouts it cannot run. The step model (model/training/), the layout rules (check_layout), the
//! layout's spelling (io/parallel_layout.hpp), the mechanism (parallel::run_pipeline) and trinity-train read every
//! schedule from pipeline_schedules: a new schedule is a type added to that list.
//!  - one_f_one_b (PipeDream-Flush, Narayanan et al. 2021): p − r − 1 forwards to fill the pipe, then one forward
//!    and one backward in turn, then the backwards left. Rank 0 keeps min(p, m) micro-batches' activations. With v
//!    chunks a rank it is Megatron-LM's interleaved 1F1B (Narayanan et al. 2021 §2.2): the rank holds virtual
//!    stages r, r + p, …; micro-batches go through in groups of p, chunk by chunk; warm-up 2(p − r − 1) + (v − 1)p
//!    forwards. Rank 0 keeps p·v + p − 1 chunks' activations, p(1 + (p − 1)/(pv)) stages' worth (Korthikanti et
//!    al. 2022 §4.2.3). Needs m to be a multiple of p.
//!  - gpipe (GPipe, PyTorch's ScheduleGPipe): every forward, then every backward; it keeps all m micro-batches.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/layout_violation.hpp>
#include <trinity/model/parallel_layout.hpp>

namespace trinity::model {

struct pipeline_pass {
  bool forward = true;
  std::size_t chunk = 0;  //!< the rank's model chunk, 0 .. v − 1
  std::size_t micro_batch = 0;
  friend bool operator==(const pipeline_pass&, const pipeline_pass&) = default;
};

inline std::vector<pipeline_pass> one_f_one_b(std::size_t p, std::size_t rank, std::size_t m) {
  trinity::detail::require(p >= 1 && rank < p, "rank", "must be in [0, pipeline stages)");
  trinity::detail::require(m >= 1, "micro_batches", "must be at least 1");
  const std::size_t warmup = std::min(p - rank - 1, m);
  std::vector<pipeline_pass> s;
  for (std::size_t i = 0; i < warmup; ++i) s.push_back({true, 0, i});
  for (std::size_t i = 0; i + warmup < m; ++i) {
    s.push_back({true, 0, warmup + i});
    s.push_back({false, 0, i});
  }
  for (std::size_t i = m - warmup; i < m; ++i) s.push_back({false, 0, i});
  return s;
}

inline std::vector<pipeline_pass> interleaved(std::size_t p, std::size_t rank, std::size_t m, std::size_t v) {
  trinity::detail::require(p >= 1 && rank < p, "rank", "must be in [0, pipeline stages)");
  trinity::detail::require(v >= 1, "virtual_stages", "must be at least 1");
  if (v == 1) return one_f_one_b(p, rank, m);
  trinity::detail::require(
      m >= 1 && m % p == 0, "micro_batches",
      std::to_string(m) + " is not a multiple of the " + std::to_string(p) +
          " stages; the interleaved schedule sends micro-batches in groups of p. Fix: a multiple of p");
  const std::size_t total = m * v, group = p * v;
  // As Megatron-LM: with as many micro-batches as stages every forward is warm-up.
  const std::size_t warmup = m == p ? total : std::min(2 * (p - rank - 1) + (v - 1) * p, total);
  const auto at = [&](std::size_t k, bool forward) {
    const std::size_t in_group = k % group, chunk = in_group / p;
    return pipeline_pass{forward, forward ? chunk : v - 1 - chunk, (k / group) * p + k % p};
  };
  std::vector<pipeline_pass> s;
  for (std::size_t k = 0; k < warmup; ++k) s.push_back(at(k, true));
  for (std::size_t k = 0; k + warmup < total; ++k) {
    s.push_back(at(warmup + k, true));
    s.push_back(at(k, false));
  }
  for (std::size_t k = total - warmup; k < total; ++k) s.push_back(at(k, false));
  return s;
}

//! 1F1B, interleaved where a rank holds v > 1 chunks: Megatron-Core's schedule, and the default.
struct one_f_one_b_schedule {
  static constexpr std::string_view name = "1f1b";
  static std::vector<pipeline_pass> passes(std::size_t p, std::size_t rank, std::size_t m, std::size_t v) {
    return interleaved(p, rank, m, v);
  }
  //! Micro-batches' activations the first stage keeps at its peak (Korthikanti et al. 2022): min(p, m), and
  //! interleaved p + (p − 1)/v, that is p·v + p − 1 chunks of 1/v of the layers, but never more than the m·v
  //! chunks a step has: with m = p the first stage's warm-up runs every forward before a backward (Megatron's
  //! interleaved schedule caps its warm-up at the step's chunks), so it keeps all p·v of them.
  static double in_flight(std::size_t p, std::size_t m, std::size_t v) {
    if (p <= 1) return 1.0;
    const double pp = static_cast<double>(p), vv = static_cast<double>(v), mm = static_cast<double>(m);
    return v > 1 ? std::min(mm, pp + (pp - 1.0) / vv) : std::min(pp, mm);
  }
  //! The pipeline's fill and drain, as a share of the step's ideal time: (p − 1)/(m·v) (Narayanan et al. 2021).
  static double bubble(std::size_t p, std::size_t m, std::size_t v) {
    return static_cast<double>(p - 1) / (static_cast<double>(m) * static_cast<double>(v));
  }
  //! Its rules are check_layout's own (the interleaved schedule's groups of p micro-batches among them).
  static layout_verdict problem(const parallel_layout&) { return std::nullopt; }
};

//! GPipe (Huang et al. 2019; PyTorch's ScheduleGPipe): every micro-batch's forward, then every backward, in
//! order. The same bubble as 1F1B, but each stage keeps all m micro-batches' activations where 1F1B keeps p.
struct gpipe_schedule {
  static constexpr std::string_view name = "gpipe";
  static std::vector<pipeline_pass> passes(std::size_t p, std::size_t rank, std::size_t m, std::size_t v) {
    trinity::detail::require(p >= 1 && rank < p && m >= 1 && v == 1, "schedule",
                             "gpipe runs m >= 1 micro-batches through one chunk a rank");
    std::vector<pipeline_pass> s;
    for (std::size_t i = 0; i < m; ++i) s.push_back({true, 0, i});
    for (std::size_t i = 0; i < m; ++i) s.push_back({false, 0, i});
    return s;
  }
  static double in_flight(std::size_t p, std::size_t m, std::size_t) { return p <= 1 ? 1.0 : static_cast<double>(m); }
  static double bubble(std::size_t p, std::size_t m, std::size_t) {
    return static_cast<double>(p - 1) / static_cast<double>(m);
  }
  static layout_verdict problem(const parallel_layout& l) {
    if (l.vpp == 1) return std::nullopt;
    return layout_violation{
        "schedule", std::string(name),
        "gpipe runs one chunk a stage, and vpp=" + std::to_string(l.vpp) + " gives each " + std::to_string(l.vpp),
        "give vpp=1, or schedule=1f1b for the interleaved schedule"};
  }
};

//! The schedules a layout can name, in the order `trinity` lists them.
using pipeline_schedules = std::tuple<one_f_one_b_schedule, gpipe_schedule>;

//! The names of every schedule, "1f1b, gpipe".
inline std::string schedule_names() {
  std::string out;
  std::apply([&](auto... s) { ((out += (out.empty() ? "" : ", ") + std::string(decltype(s)::name)), ...); },
             pipeline_schedules{});
  return out;
}
//! Whether `name` is a schedule's, or empty: the default, the list's first.
inline bool known_schedule(std::string_view name) {
  return name.empty() ||
         std::apply([&](auto... s) { return ((decltype(s)::name == name) || ...); }, pipeline_schedules{});
}

//! The name of the schedule `name` means: itself, or where it is empty the default's (the list's first).
inline std::string_view schedule_name(std::string_view name) {
  return name.empty() ? std::tuple_element_t<0, pipeline_schedules>::name : name;
}

//! Calls f with the schedule named `name` (empty: the list's first, the default), a value of its type; refuses any
//! other name, naming the field and the schedules there are.
template <class F>
auto with_schedule(std::string_view name, F&& f) {
  using first = std::tuple_element_t<0, pipeline_schedules>;
  if (name.empty()) return f(first{});
  std::optional<decltype(f(first{}))> out;
  std::apply([&](auto... s) { ((decltype(s)::name == name && !out ? void(out.emplace(f(s))) : void()), ...); },
             pipeline_schedules{});
  trinity::detail::require(out.has_value(), "schedule", [&] {
    return "\"" + std::string(name) + "\" is no pipeline schedule; give one of " + schedule_names();
  });
  return *std::move(out);
}

//! One rank's passes under the layout's schedule.
inline std::vector<pipeline_pass> schedule_passes(std::string_view schedule, std::size_t p, std::size_t rank,
                                                  std::size_t m, std::size_t v) {
  return with_schedule(schedule, [&](auto s) { return s.passes(p, rank, m, v); });
}
//! Micro-batches' activations the first stage keeps at its peak under `schedule`, m micro-batches a flush.
inline double pipeline_in_flight(std::string_view schedule, std::size_t p, std::size_t m, std::size_t v) {
  return with_schedule(schedule, [&](auto s) { return s.in_flight(p, m, v); });
}
//! 1F1B's (one_f_one_b_schedule::in_flight): what callers that name no schedule mean.
inline double pipeline_in_flight(std::size_t p, std::size_t m, std::size_t v) {
  return one_f_one_b_schedule::in_flight(p, m, v);
}
//! The bubble under `schedule` as a share of the ideal step, m micro-batches a flush.
inline double pipeline_bubble(std::string_view schedule, std::size_t p, std::size_t m, std::size_t v) {
  trinity::detail::require(p >= 1 && m >= 1 && v >= 1, "pipeline_parallel",
                           "stages, micro-batches and chunks must each be at least 1");
  return with_schedule(schedule, [&](auto s) { return s.bubble(p, m, v); });
}
//! The rule of its schedule a layout breaks: an unknown name, or what the schedule cannot run.
inline layout_verdict check_schedule(const parallel_layout& l) {
  if (!known_schedule(l.schedule))
    return layout_violation{"schedule", l.schedule, "\"" + l.schedule + "\" is no pipeline schedule",
                            "give one of " + schedule_names()};
  return with_schedule(l.schedule, [&](auto s) { return s.problem(l); });
}

}  // namespace trinity::model
