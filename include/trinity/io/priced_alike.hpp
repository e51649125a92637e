#pragma once
//! \file
//! Published runs the step model prices alike, yet measured apart. Two runs whose inputs the model reads the
//! same way (the same system, and the same predicted step and device bytes to the bit) get one prediction; no
//! constant of this model can bring both closer to their measurements than their spread allows. That spread is
//! a floor under the validation's errors, which only an input the runs differ in and the model does not read
//! (a routing mode, a container's software) can lift: what to read before tuning a constant to a miss.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include <trinity/io/parallel_calibration.hpp>

namespace trinity::io {

//! The least worst |p/m − 1| one prediction p gives steps measured between `fastest` and `slowest`: at their
//! harmonic mean, which overshoots the fastest as far as it undershoots the slowest.
constexpr double least_worst_error(double fastest, double slowest) { return (slowest - fastest) / (slowest + fastest); }

//! The least mean |p/m − 1| one prediction p gives the measured steps `m`. The mean is convex and piecewise
//! linear in p, its corners at the measurements, so its least value is at one of them.
inline double least_mean_error(std::span<const double> m) {
  double best = -1;
  for (const double p : m) {
    double sum = 0;
    for (const double x : m) sum += std::abs(p / x - 1.0);
    const double mean = sum / static_cast<double>(m.size());
    if (best < 0 || mean < best) best = mean;
  }
  return std::max(best, 0.0);
}

//! Runs priced alike and measured apart, in the file's order of their first run.
struct alike_runs {
  std::vector<const priced_run*> runs;  //!< two or more, in the file's order
  double least_worst_error = 0;         //!< no prediction shared by them does better on the worst of them
  double least_mean_error = 0;          //!< nor on their mean
};

//! Every group of two or more runs of `rows` priced alike whose published steps differ.
inline std::vector<alike_runs> priced_alike(const std::vector<priced_run>& rows) {
  std::vector<alike_runs> groups;  // a file holds tens of runs: a linear search for each one's group is enough
  for (const auto& x : rows) {
    const auto alike = [&](const alike_runs& g) {
      const auto& y = *g.runs.front();
      return y.run->system == x.run->system && y.cost.step == x.cost.step && y.cost.device_bytes == x.cost.device_bytes;
    };
    if (const auto g = std::find_if(groups.begin(), groups.end(), alike); g != groups.end())
      g->runs.push_back(&x);
    else
      groups.push_back({{&x}});
  }
  std::vector<alike_runs> out;
  for (auto& g : groups) {
    std::vector<double> measured;
    for (const auto* x : g.runs) measured.push_back(x->run->iteration_s);
    const auto [fastest, slowest] = std::minmax_element(measured.begin(), measured.end());
    if (*fastest == *slowest) continue;  // one run, or runs measured alike
    g.least_worst_error = least_worst_error(*fastest, *slowest);
    g.least_mean_error = least_mean_error(measured);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace trinity::io
