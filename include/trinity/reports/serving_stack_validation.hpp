#pragma once
//! \file
//! What `trinity fit` on two runs buys an engine the presets were not fitted on: for each engine family but the
//! presets' (tensorrt-llm) on each device it ran on, a serving stack fitted to two of its runs marked fit, exactly as
//! `trinity fit` fits a user's (plan/serving_stack_fit.hpp), and its runs marked held-out priced with the presets'
//! constants (no fit) and with the stack. The two runs are chosen by rule, not by hand: the group's first run marked
//! fit, and its run marked fit at the largest batch (the next one where that is the first): a step the overheads
//! rule beside one the bytes rule, as a user would measure. `trinity validate --serving` prints it.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <trinity/io/serving_runs.hpp>
#include <trinity/plan/serving_stack_fit.hpp>
#include <trinity/presets.hpp>
#include <trinity/reports/text.hpp>

namespace trinity::reports {

struct two_run_fit {
  std::string family, system;
  plan::serving_stack stack;
  std::size_t held_out = 0;
  double without = 0, with = 0;  //!< mean |error| over the held-out runs: the presets' constants, the stack's
};

namespace detail {

//! A published run as a user's measured one, on its preset with its engine's KV reads.
inline plan::measured_serving_run as_measured(const io::serving_run& r) {
  plan::measured_serving_run m;
  m.name = r.name;
  m.on = *plan::presets::find(r.system);
  m.on.device.serving.kv_read_per_query_head = r.kv_read_per_query_head;
  m.workload = io::serving_run_workload(r);
  m.configuration = r.configuration();
  m.held_out = r.role == "held-out";
  if (r.metric == "ttft_s") m.ttft_s = r.value;
  if (r.metric == "tpot_s") m.tpot_s = r.value;
  if (r.metric == "output_tokens_per_device_second") m.throughput = r.value;
  if (r.metric == "output_tokens_per_second") m.throughput = r.value / static_cast<double>(r.tp);
  return m;
}

//! The error of a prediction of the figure `m` measured.
inline double error_of(const plan::measured_serving_run& m, const plan::serving_prediction& p) {
  if (m.ttft_s) return p.ttft_s / *m.ttft_s - 1;
  if (m.tpot_s) return p.tpot_s / *m.tpot_s - 1;
  return p.throughput / *m.throughput - 1;
}

//! One group's judgement, or nothing where it has fewer than two runs marked fit or none held out.
inline std::optional<two_run_fit> judge_group(const std::vector<const io::serving_run*>& group) {
  std::vector<const io::serving_run*> fit;
  for (const auto* r : group)
    if (r->role == "fit") fit.push_back(r);
  const auto held = std::count_if(group.begin(), group.end(), [](const auto* r) { return r->role == "held-out"; });
  if (fit.size() < 2 || held == 0) return std::nullopt;
  auto largest =
      std::max_element(fit.begin() + 1, fit.end(), [](const auto* a, const auto* b) { return a->batch < b->batch; });
  if ((*largest)->batch <= fit.front()->batch) largest = fit.begin() + 1;
  const std::vector<plan::measured_serving_run> two{as_measured(*fit.front()), as_measured(**largest)};
  two_run_fit out{
      group.front()->engine_family, group.front()->system, plan::fit_serving_stack(two, "two runs").stack, 0, 0, 0};
  for (const auto* r : group) {
    if (r->role != "held-out") continue;
    const auto m = as_measured(*r);
    out.without += std::abs(error_of(m, plan::price_with(m, plan::serving_stacks::tensorrt_llm())));
    out.with += std::abs(error_of(m, plan::price_with(m, out.stack)));
    ++out.held_out;
  }
  out.without /= static_cast<double>(out.held_out);
  out.with /= static_cast<double>(out.held_out);
  return out;
}

}  // namespace detail

//! Every group's judgement, by family and then system, in the order the file first names them.
[[nodiscard]] inline std::vector<two_run_fit> judge_two_run_fits(const io::serving_runs& file) {
  std::vector<std::vector<const io::serving_run*>> groups;
  for (const auto& r : file.runs) {
    if (r.engine_family == "tensorrt-llm") continue;  // the presets' own: nothing to fit
    const auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
      return x.front()->engine_family == r.engine_family && x.front()->system == r.system;
    });
    if (g == groups.end())
      groups.push_back({&r});
    else
      g->push_back(&r);
  }
  std::vector<two_run_fit> out;
  for (const auto& g : groups)
    if (auto j = detail::judge_group(g)) out.push_back(std::move(*j));
  return out;
}

[[nodiscard]] inline nlohmann::json to_json(const two_run_fit& f) {
  nlohmann::json constants = nlohmann::json::object();
  for (const auto& [name, value] : f.stack.constants) constants[name] = value;
  return {{"engine_family", f.family},
          {"system", f.system},
          {"fitted_on", f.stack.fitted_on},
          {"constants", constants},
          {"not_pinned", f.stack.not_pinned},
          {"held_out_runs", f.held_out},
          {"mean_abs_error_without_fit", f.without},
          {"mean_abs_error_with_fit", f.with}};
}

inline void print(std::ostream& out, const std::vector<two_run_fit>& fits) {
  if (fits.empty()) return;
  out << "\ntrinity fit on two runs of an engine the presets were not fitted on (its held-out runs, mean |error|):\n";
  table t({"engine", "system", "fitted on", "held out", "presets' constants", "fitted stack"});
  for (const auto& f : fits)
    t.add({f.family, f.system, f.stack.fitted_on.at(0) + ", " + f.stack.fitted_on.at(1), std::to_string(f.held_out),
           fixed(f.without * 100, 1) + "%", fixed(f.with * 100, 1) + "%"});
  t.print(out);
}

}  // namespace trinity::reports
