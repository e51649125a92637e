#pragma once
//! \file
//! Least-squares fits of both hit-rate families to measured (capacity, hit
//! rate) points, with the fit error, so a replayed trace can be summarised by
//! a curve the planner can differentiate and invert.
//!
//! The exponential family has one parameter; its sum of squares is minimised
//! by a log-spaced scan followed by golden-section refinement. The power law
//! has two (κ, γ); the same search runs over log κ with γ profiled out by an
//! inner search. Both are deterministic and need no starting guess.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

struct capacity_point {
  bytes capacity;
  double hit_rate;
};

template <class Model>
struct fit_result {
  Model model;
  double rmse;           //!< root-mean-square error in hit rate
  double max_abs_error;  //!< largest |h_model - h_measured|
  std::size_t points;
};

namespace detail {

inline void validate_points(std::span<const capacity_point> points, std::size_t at_least) {
  trinity::detail::require(points.size() >= at_least, "points",
                           "need at least " + std::to_string(at_least) + " measured (capacity, hit rate) points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = "points[" + std::to_string(i) + "]";
    trinity::detail::require(points[i].capacity > bytes{} && std::isfinite(points[i].capacity.value()),
                             at + ".capacity", "must be positive and finite");
    trinity::detail::require(points[i].hit_rate >= 0.0 && points[i].hit_rate < 1.0, at + ".hit_rate",
                             "must lie in [0, 1)");
  }
}

// Minimises f over [lo, hi] (a log-parameter): scan `steps` points, then
// golden-section search between the best one's neighbours.
inline double minimise_1d(const std::function<double(double)>& f, double lo, double hi, int steps = 96) {
  double best_x = lo, best_f = f(lo);
  const double dx = (hi - lo) / steps;
  for (int i = 1; i <= steps; ++i) {
    const double x = lo + dx * i;
    const double fx = f(x);
    if (fx < best_f) {
      best_f = fx;
      best_x = x;
    }
  }
  double a = best_x - dx, b = best_x + dx;
  const double g = 0.6180339887498949;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int it = 0; it < 80 && b - a > 1e-12 * (1 + std::fabs(a)); ++it) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  const double x = 0.5 * (a + b);
  return f(x) <= best_f ? x : best_x;
}

template <class Model>
fit_result<Model> summarise(const Model& m, std::span<const capacity_point> points) {
  double sse = 0, worst = 0;
  for (const auto& p : points) {
    const double e = m(p.capacity) - p.hit_rate;
    sse += e * e;
    worst = std::fmax(worst, std::fabs(e));
  }
  return {m, std::sqrt(sse / static_cast<double>(points.size())), worst, points.size()};
}

inline double median_capacity(std::span<const capacity_point> points) {
  std::vector<double> c;
  c.reserve(points.size());
  for (const auto& p : points) c.push_back(p.capacity.value());
  std::nth_element(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(c.size() / 2), c.end());
  return c[c.size() / 2];
}

}  // namespace detail

//! Fits h(M) = 1 - exp(-β·M/s_e); s_e is the entry size (not fitted).
inline fit_result<exponential_saturation> fit_exponential_saturation(std::span<const capacity_point> points,
                                                                     bytes entry_size) {
  detail::validate_points(points, 1);
  trinity::detail::require(entry_size > bytes{} && std::isfinite(entry_size.value()), "entry_size",
                           "must be positive and finite");
  auto sse = [&](double log_beta) {
    const exponential_saturation m{std::exp(log_beta), entry_size};
    double s = 0;
    for (const auto& p : points) {
      const double e = m(p.capacity) - p.hit_rate;
      s += e * e;
    }
    return s;
  };
  // β·M/s_e of order one at the median capacity: search six decades either side.
  const double centre = std::log(entry_size.value() / detail::median_capacity(points));
  const double log_beta = detail::minimise_1d(sse, centre - 14, centre + 14, 160);
  return detail::summarise(exponential_saturation{std::exp(log_beta), entry_size}, points);
}

//! Fits h(M) = 1 - (1 + κ·M)^(-γ).
inline fit_result<power_law> fit_power_law(std::span<const capacity_point> points) {
  detail::validate_points(points, 2);
  auto sse_at = [&](double log_kappa, double log_gamma) {
    const power_law m{per_byte{std::exp(log_kappa)}, std::exp(log_gamma)};
    double s = 0;
    for (const auto& p : points) {
      const double e = m(p.capacity) - p.hit_rate;
      s += e * e;
    }
    return s;
  };
  auto best_gamma = [&](double log_kappa) {
    return detail::minimise_1d([&](double lg) { return sse_at(log_kappa, lg); }, std::log(1e-3), std::log(1e2), 48);
  };
  auto profile = [&](double log_kappa) { return sse_at(log_kappa, best_gamma(log_kappa)); };
  const double centre = -std::log(detail::median_capacity(points));
  const double log_kappa = detail::minimise_1d(profile, centre - 14, centre + 14, 64);
  const double log_gamma = best_gamma(log_kappa);
  return detail::summarise(power_law{per_byte{std::exp(log_kappa)}, std::exp(log_gamma)}, points);
}

}  // namespace trinity::model
