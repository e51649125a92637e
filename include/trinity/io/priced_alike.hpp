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
#include <map>
#include <span>
#include <string>
#include <tuple>
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
  std::map<std::tuple<std::string, double, double>, std::vector<const priced_run*>> by_price;
  std::vector<std::tuple<std::string, double, double>> order;
  for (const auto& x : rows) {
    const std::tuple key{x.run->system, x.cost.step.value(), x.cost.device_bytes.value()};
    auto& group = by_price[key];
    if (group.empty()) order.push_back(key);
    group.push_back(&x);
  }
  std::vector<alike_runs> out;
  for (const auto& key : order) {
    const auto& group = by_price.at(key);
    std::vector<double> measured;
    for (const auto* x : group) measured.push_back(x->run->iteration_s);
    const auto [fastest, slowest] = std::minmax_element(measured.begin(), measured.end());
    if (group.size() < 2 || *fastest == *slowest) continue;
    out.push_back({group, least_worst_error(*fastest, *slowest), least_mean_error(measured)});
  }
  return out;
}

}  // namespace trinity::io
