#pragma once
//! \file
//! How much of a device's peak rate a matrix multiply of a given shape gets.
//! A GEMM runs at a fraction e of the peak (tile and wave quantisation); each
//! dimension x that is small against the tile pipeline's depth costs a further
//! x/(x + x₀); and no GEMM, however large, runs past the share c of the peak
//! the device sustains (its clocks under the power limit):
//!   rate(m, n, k) = peak · min(c, e · m/(m + x₀) · n/(n + x₀) · k/(k + x₀))
//! Without c the product climbs toward e with size; the H100 probe's large
//! GEMMs do not: its 8192-row GEMMs, 0.4 to 63 ms each, hold within 612-741
//! TFLOP/s whatever their shape, and a fit without c prices them fast by 6%
//! on average (bench/results/transformer-probe-h100.json). Fitted to measured
//! GEMMs (fit_gemm below, over bench/gpu/transformer_probe.py's cuBLAS sweep
//! for the H100) and kept in the device's preset with their source.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <ranges>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::model {

struct gemm_efficiency {
  double peak_fraction = 1.0;  //!< e: the share of the peak the shape terms scale, before the ceiling caps it
  double half_size = 0.0;      //!< x₀: the dimension at which a GEMM loses half its rate to that dimension
  double ceiling = 1.0;        //!< c: the most of the peak any GEMM sustains, however large

  //! The share of peak a GEMM of m×k by k×n runs at.
  [[nodiscard]] double operator()(double m, double n, double k) const noexcept {
    const auto f = [this](double x) { return x / (x + half_size); };
    return std::min(ceiling, peak_fraction * f(m) * f(n) * f(k));
  }
  friend bool operator==(const gemm_efficiency&, const gemm_efficiency&) = default;
};

inline void validate(const gemm_efficiency& g, const std::string& at = "gemm") {
  // The field's name is built only on a failure: the step model checks its curve on every pricing.
  if (!(g.peak_fraction > 0 && g.peak_fraction <= 1))
    throw invalid_input(at + ".peak_fraction", "must lie in (0, 1]: the share of the device's peak the curve scales");
  if (!(g.half_size >= 0 && std::isfinite(g.half_size)))
    throw invalid_input(at + ".half_size", "must be finite and not negative");
  if (!(g.ceiling > 0 && g.ceiling <= 1))
    throw invalid_input(at + ".ceiling", "must lie in (0, 1]: the most of the device's peak any GEMM sustains");
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

namespace detail {

// The best e and c for one x₀. In log terms each point's prediction is min(log c, log e + gᵢ), so the capped
// points are those of the largest gᵢ: sorted by gᵢ, the first j are capped and the rest are not, for some j. For
// each j, log c is the mean of the capped points' log rates and log e the mean of the others' yᵢ − gᵢ (both at
// most 0: no GEMM beats the peak); a split counts when the means it gives cap exactly its first j points. Prefix
// sums give every split's means in O(1): the fit stays a grid over x₀ alone.
struct ceiling_split {
  double log_e = 0, log_c = 0, error = -1;
};
inline ceiling_split best_split(std::span<const double> y, std::span<const double> g) {
  const std::size_t n = y.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::ranges::sort(order, [&](std::size_t a, std::size_t b) { return g[a] > g[b]; });
  // Suffix sums of r = y − g over the uncapped tail; prefix sums of y over the capped head.
  std::vector<double> tail_r(n + 1, 0.0);
  for (std::size_t i = n; i-- > 0;) tail_r[i] = tail_r[i + 1] + (y[order[i]] - g[order[i]]);
  ceiling_split best;
  double head_y = 0;
  for (std::size_t j = 0; j < n; ++j) {  // j capped; at least one point on the curve, which sets e
    if (j > 0) head_y += y[order[j - 1]];
    if (j == 1) continue;  // a ceiling over one GEMM is that GEMM's own rate, and fits it exactly whatever it is
    const auto rest = static_cast<double>(n - j);
    const double le = std::min(0.0, tail_r[j] / rest);
    const double lc = j > 0 ? std::min(0.0, head_y / static_cast<double>(j)) : 0.0;
    const bool consistent = (j == 0 || le + g[order[j - 1]] >= lc) && le + g[order[j]] < lc + 1e-15;
    if (!consistent) continue;
    // The split's error summed point by point: its prefix sums' squares less their squared means cancel to noise
    // near an exact fit. Few splits are consistent, so this stays cheap.
    double err = 0;
    for (std::size_t i = 0; i < n; ++i) err += std::pow(y[i] - std::min(lc, le + g[i]), 2);
    // A ceiling must earn its place: a split that fits no better than one with fewer capped points loses.
    if (best.error < 0 || err < best.error * (1 - 1e-9)) best = {le, lc, err};
  }
  return best;
}

}  // namespace detail

//! Fits e, x₀ and c to measured GEMMs of a device whose peak is `peak`, minimising the squared log error (a GEMM
//! 2× slow weighs as much as one 2× fast). Points with any dimension under `smallest` are left out: there a
//! kernel's launch, not its shape, sets the time. A grid over x₀ with e and c solved at each (detail::best_split).
inline gemm_fit fit_gemm(std::span<const gemm_point> points, double peak, double smallest = 1024) {
  trinity::detail::require(peak > 0, "peak", "must be positive");
  std::vector<gemm_point> kept;
  for (const auto& p : points)
    if (p.m >= smallest && p.n >= smallest && p.k >= smallest) kept.push_back(p);
  trinity::detail::require(
      kept.size() >= 2, "points",
      "need at least two GEMMs with every dimension at least " + std::to_string(static_cast<long>(smallest)));
  std::vector<double> y(kept.size()), g(kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) y[i] = std::log(kept[i].flops_per_second / peak);
  gemm_fit best;
  double best_err = -1;
  for (int step = 0; step <= 2048; ++step) {
    const double x0 = step * 0.5;  // 0 .. 1024
    for (std::size_t i = 0; i < kept.size(); ++i)
      g[i] = std::log(gemm_efficiency{1.0, x0}(kept[i].m, kept[i].n, kept[i].k));
    const auto split = detail::best_split(y, g);
    if (split.error >= 0 && (best_err < 0 || split.error < best_err)) {
      best_err = split.error;
      best.model = {std::exp(split.log_e), x0, std::exp(split.log_c)};
    }
  }
  best.points = kept.size();
  std::vector<double> errors;
  for (const auto& p : kept) errors.push_back(std::abs(peak * best.model(p.m, p.n, p.k) / p.flops_per_second - 1.0));
  std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
  best.median_error = errors[errors.size() / 2];
  return best;
}

}  // namespace trinity::model
