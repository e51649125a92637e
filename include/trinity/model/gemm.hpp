#pragma once
//! \file
//! How much of a device's peak rate a matrix multiply of a given shape gets.
//! A large GEMM runs at a fraction e of the peak (tile and wave quantisation,
//! clocks under power limits); each dimension x that is small against the
//! tile pipeline's depth costs a further x/(x + x₀):
//!   rate(m, n, k) = peak · e · m/(m + x₀) · n/(n + x₀) · k/(k + x₀)
//! Two numbers per device, fitted to measured GEMMs (fit_gemm below, over
//! bench/gpu/transformer_probe.py's cuBLAS sweep for the H100) and kept in the
//! device's preset with their source.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::model {

struct gemm_efficiency {
  double peak_fraction = 1.0;  //!< e: what a large GEMM gets of the peak
  double half_size = 0.0;      //!< x₀: the dimension at which a GEMM loses half its rate to that dimension

  //! The share of peak a GEMM of m×k by k×n runs at.
  [[nodiscard]] double operator()(double m, double n, double k) const noexcept {
    const auto f = [this](double x) { return x / (x + half_size); };
    return peak_fraction * f(m) * f(n) * f(k);
  }
};

inline void validate(const gemm_efficiency& g, const std::string& at = "gemm") {
  // The field's name is built only on a failure: the step model checks its curve on every pricing.
  if (!(g.peak_fraction > 0 && g.peak_fraction <= 1))
    throw invalid_input(at + ".peak_fraction",
                        "must lie in (0, 1]: the share of the device's peak a large GEMM reaches");
  if (!(g.half_size >= 0 && std::isfinite(g.half_size)))
    throw invalid_input(at + ".half_size", "must be finite and not negative");
}

//! One measured GEMM: its shape and the rate it ran at.
struct gemm_point {
  double m = 0, n = 0, k = 0;
  double flops_per_second = 0;
};

struct gemm_fit {
  gemm_efficiency model;
  double median_error = 0;  //!< median of |predicted / measured − 1|
  std::size_t points = 0;
};

//! Fits e and x₀ to measured GEMMs of a device whose peak is `peak`, minimising the squared log error (a GEMM
//! 2× slow weighs as much as one 2× fast). Points with any dimension under `smallest` are left out: there a
//! kernel's launch, not its shape, sets the time. A grid over x₀ with e solved in closed form at each: the
//! mean log residual.
inline gemm_fit fit_gemm(std::span<const gemm_point> points, double peak, double smallest = 1024) {
  trinity::detail::require(peak > 0, "peak", "must be positive");
  gemm_fit best;
  double best_err = -1;
  for (int step = 0; step <= 2048; ++step) {
    const double x0 = step * 0.5;  // 0 .. 1024
    const auto residual = [&](const gemm_point& p) {
      return std::log(p.flops_per_second / peak / gemm_efficiency{1.0, x0}(p.m, p.n, p.k));
    };
    const auto kept = [&](const gemm_point& p) { return p.m >= smallest && p.n >= smallest && p.k >= smallest; };
    double sum = 0;
    std::size_t used = 0;
    for (const auto& p : points)
      if (kept(p)) sum += residual(p), ++used;
    trinity::detail::require(
        used >= 2, "points",
        "need at least two GEMMs with every dimension at least " + std::to_string(static_cast<long>(smallest)));
    const double mean = sum / static_cast<double>(used);
    double err = 0;  // two passes: one pass's sum of squares less the squared mean cancels to noise near a fit
    for (const auto& p : points)
      if (kept(p)) err += (residual(p) - mean) * (residual(p) - mean);
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best.model = {std::min(1.0, std::exp(mean)), x0};
      best.points = used;
    }
  }
  std::vector<double> errors;
  for (const auto& p : points)
    if (p.m >= smallest && p.n >= smallest && p.k >= smallest)
      errors.push_back(std::abs(peak * best.model(p.m, p.n, p.k) / p.flops_per_second - 1.0));
  std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
  best.median_error = errors[errors.size() / 2];
  return best;
}

}  // namespace trinity::model
