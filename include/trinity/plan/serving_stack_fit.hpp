#pragma once
//! \file
//! A serving stack fitted to a user's own measured serving runs, the hardware fixed: `trinity fit` given runs of
//! llm-serve workloads. Each run is a configuration (as `plan --parallelism` prices one) and what it measured:
//! time to first token, time per output token, output tokens per device-second, any of them. Each figure measured
//! is one observation; n observations can pin at most n constants, so the fit picks them:
//!  - the response of every observation's log to each constant (a Jacobian's column, by finite differences at the
//!    device's calibration, the constant moved a tenth of its range);
//!  - in the preferred order (plan/serving_stack.hpp), each constant whose column, once the chosen ones' are
//!    projected out, still moves some observation by at least 1%, while the observations outnumber the chosen;
//!  - those constants minimising the squared log error (coordinate descent in halving steps over their ranges);
//!    every other constant stays the device's and is named not pinned.
//! The stack's bands keep the published serving runs' spread (what a fit of a few constants cannot remove), centred
//! on its runs' residuals and widened by √(1 + 1/n) for n observations of the figure.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/plan/detail/held_out_residuals.hpp>
#include <trinity/plan/serving_configuration.hpp>
#include <trinity/plan/serving_stack.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

//! One serving run a user measured: where, what it served, its configuration, and what it measured.
struct measured_serving_run {
  std::string name;
  system on;
  serving_workload workload;
  std::string configuration;  //!< as `plan --parallelism` reads it: tp=..,batch=..,weights=..,kv=..
  std::optional<double> ttft_s, tpot_s, throughput;  //!< throughput: output tokens per device-second
  bool held_out = false;
};

//! What the serving model predicts for a run's three figures.
struct serving_prediction {
  double ttft_s = 0, tpot_s = 0, throughput = 0;
};

//! A run priced under `stack` in place of its workload's.
inline serving_prediction price_with(const measured_serving_run& r, const serving_stack& stack) {
  auto w = r.workload;
  w.stack = stack;
  const auto c = price_configuration(r.on, w, r.configuration, "parallelism").cost;
  return {c.ttft.value(), c.tpot.value(), c.tokens_per_second};
}

namespace detail {

//! One figure a run measured: the run, which figure (0 TTFT, 1 TPOT, 2 throughput) and its value.
struct serving_observation {
  std::size_t run, figure;
  double value;
};

inline double figure_of(const serving_prediction& p, std::size_t figure) {
  return figure == 0 ? p.ttft_s : figure == 1 ? p.tpot_s : p.throughput;
}

inline std::vector<serving_observation> observations_of(std::span<const measured_serving_run> runs) {
  std::vector<serving_observation> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::optional<double>* figures[] = {&runs[i].ttft_s, &runs[i].tpot_s, &runs[i].throughput};
    for (std::size_t f = 0; f < 3; ++f)
      if (*figures[f]) out.push_back({i, f, **figures[f]});
  }
  return out;
}

//! Each observation's log prediction under `stack`.
inline std::vector<double> log_predictions(std::span<const measured_serving_run> runs,
                                           std::span<const serving_observation> seen, const serving_stack& stack) {
  std::vector<serving_prediction> priced;
  for (const auto& r : runs) priced.push_back(price_with(r, stack));
  std::vector<double> out;
  for (const auto& o : seen) out.push_back(std::log(figure_of(priced[o.run], o.figure)));
  return out;
}

//! Each constant's column: how the observations' logs move when it moves a tenth of its range inward from the
//! value the first run's device has.
inline std::vector<std::vector<double>> serving_jacobian(std::span<const measured_serving_run> runs,
                                                         std::span<const serving_observation> seen) {
  const auto base = log_predictions(runs, seen, serving_stacks::tensorrt_llm());
  const auto device = runs.front().on.device.serving;
  std::vector<std::vector<double>> columns;
  for (const auto& k : serving_constants) {
    const double x = k.get(device), step = (k.high - k.low) / 10;
    const double moved = x + step <= k.high ? x + step : x - step;
    serving_stack trial;
    trial.constants = {{std::string(k.name), moved}};
    auto column = log_predictions(runs, seen, trial);
    for (std::size_t i = 0; i < column.size(); ++i) column[i] -= base[i];
    columns.push_back(std::move(column));
  }
  return columns;
}

//! The constants the observations pin, in the preferred order, each adding to what those chosen move (see the file).
inline std::vector<std::size_t> pinned_constants(std::vector<std::vector<double>> columns, std::size_t observations) {
  const auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  std::vector<std::size_t> chosen;
  while (chosen.size() < observations) {
    // The first in the preferred order (serving_constants') that moves some figure by 1% beyond what the chosen
    // ones can: one the runs do not see, or see only as the chosen ones move them, is not pinned by them.
    std::size_t best = 0;
    while (best < columns.size() && (std::find(chosen.begin(), chosen.end(), best) != chosen.end() ||
                                     std::sqrt(dot(columns[best], columns[best])) < 0.01))
      ++best;
    if (best == columns.size()) break;
    chosen.push_back(best);
    const auto unit = columns[best];  // project it out of the others (Gram-Schmidt)
    const double uu = dot(unit, unit);
    for (auto& c : columns) {
      const double a = dot(c, unit) / uu;
      for (std::size_t i = 0; i < c.size(); ++i) c[i] -= a * unit[i];
    }
  }
  return chosen;
}

//! The chosen constants' values minimising the squared log error, from the first run's device's values.
inline serving_stack fit_constants(std::span<const measured_serving_run> runs,
                                   std::span<const serving_observation> seen, const std::vector<std::size_t>& chosen) {
  const auto device = runs.front().on.device.serving;
  serving_stack s;
  std::vector<double> step;
  for (const std::size_t k : chosen) {
    const auto& c = serving_constants[k];
    s.constants.emplace_back(std::string(c.name), c.get(device));
    step.push_back((c.high - c.low) / 4);
  }
  const auto loss = [&](const serving_stack& x) {
    const auto logs = log_predictions(runs, seen, x);
    double e = 0;
    for (std::size_t i = 0; i < seen.size(); ++i) e += std::pow(logs[i] - std::log(seen[i].value), 2);
    return e;
  };
  double best = loss(s);
  for (int round = 0; round < 40 && !chosen.empty(); ++round) {
    bool moved = false;
    for (std::size_t i = 0; i < chosen.size(); ++i)
      for (const double sign : {1.0, -1.0}) {
        auto y = s;
        const auto& c = serving_constants[chosen[i]];
        y.constants[i].second = std::clamp(y.constants[i].second + sign * step[i], c.low, c.high);
        if (const double l = loss(y); l < best) best = l, s = std::move(y), moved = true;
      }
    if (!moved)
      for (auto& x : step) x /= 2;
  }
  return s;
}

//! The stack's bands from its runs' residuals under it (see the file's comment).
inline void serving_bands_of_fit(std::span<const measured_serving_run> runs, std::span<const serving_observation> seen,
                                 serving_stack& s) {
  const auto logs = log_predictions(runs, seen, s);
  const double published[3][2] = {{serving_ttft_low, serving_ttft_high},
                                  {serving_tpot_low, serving_tpot_high},
                                  {serving_throughput_low, serving_throughput_high}};
  residual_band* bands[] = {&s.ttft, &s.tpot, &s.throughput};
  for (std::size_t f = 0; f < 3; ++f) {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < seen.size(); ++i)
      if (seen[i].figure == f) sum += std::log(seen[i].value) - logs[i], ++n;
    if (n == 0) continue;  // the figure was never measured: the published band stands
    const double centre = sum / static_cast<double>(n),
                 half = (published[f][1] - published[f][0]) / 2 * std::sqrt(1.0 + 1.0 / static_cast<double>(n));
    *bands[f] = {centre - half, centre + half, held_out_coverage, n};
  }
}

}  // namespace detail

//! What a serving fit found: the stack, and each run's predictions before (the device's calibration) and after.
struct serving_stack_fit {
  serving_stack stack;
  std::vector<serving_prediction> before, after;
};

//! Fits a serving stack named `name` to the runs of `all` not held out (two or more, on one device kind: a stack's
//! constants are an engine's on one kind of hardware); every run is priced before and after.
inline serving_stack_fit fit_serving_stack(std::span<const measured_serving_run> all, const std::string& name) {
  std::vector<measured_serving_run> fit_set;
  for (const auto& r : all)
    if (!r.held_out) fit_set.push_back(r);
  trinity::detail::require(fit_set.size() >= 2, "runs",
                           "a fit needs at least 2 measured runs not held out; give another, or fit on a held-out one");
  for (const auto& r : fit_set)
    trinity::detail::require(r.on.device.name == fit_set.front().on.device.name, "runs[" + r.name + "].system",
                             "runs on " + r.on.device.name + " beside runs on " + fit_set.front().on.device.name +
                                 "; a stack is fitted on one kind of device. Fix: fit each device's runs apart");
  const auto seen = detail::observations_of(fit_set);
  const auto chosen = detail::pinned_constants(detail::serving_jacobian(fit_set, seen), seen.size());
  serving_stack_fit out;
  out.stack = detail::fit_constants(fit_set, seen, chosen);
  auto& s = out.stack;
  s.name = name;
  for (const auto& r : fit_set) s.fitted_on.push_back(r.name);
  for (std::size_t k = 0; k < serving_constants.size(); ++k)
    if (std::find(chosen.begin(), chosen.end(), k) == chosen.end())
      s.not_pinned.emplace_back(serving_constants[k].name);
  detail::serving_bands_of_fit(fit_set, seen, s);
  s.source = "fitted by trinity fit on " + std::to_string(fit_set.size()) +
             " measured serving runs; its band: the published serving runs' spread, centred on the fit";
  for (const auto& r : all) {
    out.before.push_back(price_with(r, serving_stacks::tensorrt_llm()));
    out.after.push_back(price_with(r, s));
  }
  return out;
}

}  // namespace trinity::plan
