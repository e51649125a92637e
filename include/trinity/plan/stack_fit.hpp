#pragma once
//! \file
//! A training stack fitted to a user's own measured runs, the hardware fixed: `trinity fit`. The device's curves
//! say what its kernels can do; the runs say what the user's stack gets of them. From two runs:
//!  - step time: the share of the curves the stack's kernels reach (matmul_share) and its per-layer overhead,
//!    minimising the squared log error of the predicted steps. Runs whose steps respond to the two alike (the
//!    same balance of layers to work) cannot tell them apart: the overhead is then left at 0 and named not pinned;
//!  - memory: the allocator's factor (below 1 where the stack keeps less than the model counts) and fixed overhead, a
//!  least-squares line through measured against counted
//!    bytes; one run pins the overhead alone.
//! The fitted stack's interval keeps the spread the built-in stack's judging runs showed around its predictions
//! (what a fit of two constants cannot remove), centred on the fit and widened by √(1 + 1/n) for n runs; memory
//! gets a band from three runs on (two are fitted exactly, and say nothing of their spread).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::plan {

//! One run a user measured: where it ran, what it trained, its layout, and what it measured.
struct measured_training_run {
  std::string name;
  system on;
  training_workload workload;
  model::parallel_layout layout;
  std::optional<double> step_time_s, device_bytes;
  bool held_out = false;  //!< judges the fit instead of shaping it
};

//! A run priced with stack constants `k`.
inline model::parallel_step_cost price_with(const measured_training_run& r, const model::stack_constants& k) {
  auto c = cluster_of(r.on, r.workload);
  c.stack = k;
  return model::price(job_of(r.workload, r.layout.dp), c, r.layout);
}

namespace detail {

//! Σ log(predicted / measured)² over the runs that measured a step.
inline double step_log_error(std::span<const measured_training_run> runs, const model::stack_constants& k) {
  double e = 0;
  for (const auto& r : runs)
    if (r.step_time_s) e += std::pow(std::log(price_with(r, k).step.value() / *r.step_time_s), 2);
  return e;
}

//! The matmul share that best fits the runs at overhead `k.layer_overhead`: the error is unimodal in the share
//! (every step falls as it rises), so a golden-section search over [0.05, 1.5] finds it.
inline double best_share(std::span<const measured_training_run> runs, model::stack_constants k) {
  const auto error_at = [&](double share) {
    k.matmul_share = share;
    return step_log_error(runs, k);
  };
  const double g = (std::sqrt(5.0) - 1) / 2;
  double lo = 0.05, hi = 1.5;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo), ea = error_at(a), eb = error_at(b);
  for (int i = 0; i < 40; ++i) {
    if (ea <= eb) {
      hi = b, b = a, eb = ea;
      a = hi - g * (hi - lo), ea = error_at(a);
    } else {
      lo = a, a = b, ea = eb;
      b = lo + g * (hi - lo), eb = error_at(b);
    }
  }
  return (lo + hi) / 2;
}

//! Whether two columns of responses are told apart: the sine of their angle is 0.05 or more.
inline bool apart(std::span<const double> x, std::span<const double> z) {
  double xx = 0, zz = 0, xz = 0;
  for (std::size_t i = 0; i < x.size(); ++i) xx += x[i] * x[i], zz += z[i] * z[i], xz += x[i] * z[i];
  return x.size() >= 2 && xx > 0 && zz > 0 && 1 - xz * xz / (xx * zz) >= 0.05 * 0.05;
}

//! Whether the runs tell the share from the overhead: the log-step responses to each (a Jacobian's columns, by
//! finite differences at the default stack) are apart.
inline bool overhead_pinned(std::span<const measured_training_run> runs) {
  std::vector<double> share, overhead;
  for (const auto& r : runs) {
    if (!r.step_time_s) continue;
    const double base = std::log(price_with(r, {}).step.value());
    share.push_back(std::log(price_with(r, {.matmul_share = 0.9}).step.value()) - base);
    overhead.push_back(std::log(price_with(r, {.layer_overhead = seconds{1e-4}}).step.value()) - base);
  }
  return apart(share, overhead);
}

//! The allocator's factor f and overhead c minimising Σ ((f·T + c) / M − 1)² over the runs that measured bytes
//! (T counted under the default stack, `counted[i]`; M measured) over the runs not held out, f in [0.25, 4] and
//! c at least 0; one run, or runs whose T are alike, pin c alone.
inline void fit_memory(std::span<const measured_training_run> runs,
                       const std::vector<model::parallel_step_cost>& counted, training_stack& s) {
  std::vector<double> x, z;  // T/M and 1/M: the fit is linear in (f, c) with target 1
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].device_bytes && !runs[i].held_out) {
      const double m = *runs[i].device_bytes;
      x.push_back(counted[i].device_bytes.value() / m), z.push_back(1.0 / m);
    }
  auto& k = s.constants;
  if (x.empty()) {
    s.not_pinned.insert(s.not_pinned.end(), {"memory_factor", "memory_overhead"});
    return;
  }
  double xx = 0, zz = 0, xz = 0, sx = 0, sz = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    xx += x[i] * x[i], zz += z[i] * z[i], xz += x[i] * z[i], sx += x[i], sz += z[i];
  double f = 1;
  if (apart(x, z)) {
    f = std::clamp((sx * zz - sz * xz) / (xx * zz - xz * xz), 0.25, 4.0);
  } else {
    s.not_pinned.emplace_back("memory_factor");
  }
  double c = std::max(0.0, (sz - f * xz) / zz);    // the best overhead at that factor
  if (c == 0) f = std::clamp(sx / xx, 0.25, 4.0);  // none: the factor alone
  k.memory_factor = f, k.memory_overhead = bytes{std::min(c, 0.999e12)};
}

//! The fitted stack's bands from its runs' residuals under it (see the file's comment).
inline void band_of_fit(std::span<const measured_training_run> runs,
                        const std::vector<model::parallel_step_cost>& after, training_stack& s) {
  std::vector<double> step, memory;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].held_out) continue;  // they judge the band, never shape it
    if (runs[i].step_time_s) step.push_back(std::log(*runs[i].step_time_s / after[i].step.value()));
    if (runs[i].device_bytes) memory.push_back(std::log(*runs[i].device_bytes / after[i].device_bytes.value()));
  }
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  const auto widen = [](std::size_t n) { return std::sqrt(1.0 + 1.0 / static_cast<double>(n)); };
  const auto reference = stacks::megatron_core().step_time;
  if (!step.empty()) {
    const double half = (reference.high - reference.low) / 2 * widen(step.size()), centre = mean(step);
    s.step_time = {centre - half, centre + half, reference.coverage, step.size()};
  }
  if (memory.size() >= 3) {
    const double centre = mean(memory);
    double spread = 0;
    for (const double m : memory) spread = std::max(spread, std::abs(m - centre));
    const double half = spread * widen(memory.size());
    s.device_bytes = {centre - half, centre + half, reference.coverage, memory.size()};
  }
}

}  // namespace detail

//! What a fit found: the stack, and each run's predicted step and bytes under it.
struct stack_fit {
  training_stack stack;
  std::vector<model::parallel_step_cost> before, after;
};

//! Fits a stack named `name` to the runs of `all` not held out (two or more, each with a measured step time or
//! device bytes); every run, held out or not, is priced before and after.
inline stack_fit fit_stack(std::span<const measured_training_run> all, const std::string& name) {
  std::vector<measured_training_run> fit_set;
  for (const auto& r : all)
    if (!r.held_out) fit_set.push_back(r);
  const std::span<const measured_training_run> runs = fit_set;
  trinity::detail::require(runs.size() >= 2, "runs",
                           "a fit needs at least 2 measured runs not held out; give another, or fit on a held-out one");
  stack_fit out;
  training_stack& s = out.stack;
  s.name = name;
  for (const auto& r : runs) s.fitted_on.push_back(r.name);
  const auto steps = std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.step_time_s.has_value(); });
  model::stack_constants& k = s.constants;
  if (steps > 0) {
    if (detail::overhead_pinned(runs)) {
      double best = -1;
      for (int i = 0; i <= 100; ++i) {  // the overhead over [0, 5 ms] a layer and pass, the share fitted at each
        model::stack_constants x{.layer_overhead = seconds{i * 5e-5}};
        x.matmul_share = detail::best_share(runs, x);
        const double e = detail::step_log_error(runs, x);
        if (best < 0 || e < best) best = e, k = x;
      }
    } else {
      k.matmul_share = detail::best_share(runs, k);
      s.not_pinned.emplace_back("layer_overhead");
    }
  } else {
    s.not_pinned.insert(s.not_pinned.end(), {"matmul_share", "layer_overhead"});
  }
  for (const auto& r : all) out.before.push_back(price_with(r, {}));
  detail::fit_memory(all, out.before, s);  // the memory constants leave the step as it is: price it once
  for (const auto& r : all) out.after.push_back(price_with(r, k));
  detail::band_of_fit(all, out.after, s);
  s.source = "fitted by trinity fit on " + std::to_string(runs.size()) +
             " measured runs; its band: megatron-core's held-out spread, centred on the fit";
  return out;
}

}  // namespace trinity::plan
