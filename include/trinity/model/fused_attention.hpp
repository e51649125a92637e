#pragma once
//! \file
//! The attention core as one fused kernel (FlashAttention, cuDNN's fused
//! attention as Transformer Engine calls it): what a training step's causal
//! attention costs when it never writes its s² scores to memory.
//!
//! FLOPs, as the kernels' own benchmarks count them: the forward pass is
//! QKᵀ and P·V, 4·s_q·s_kv·d per head, halved under a causal mask; the
//! backward pass recomputes QKᵀ and runs four more products, 2.5 times the
//! forward's FLOPs.
//!
//! Rate: a share of the device's dense 16-bit peak that grows with the
//! sequence the kernel walks and with the head dimension,
//!   share(s, d) = e · s/(s + s₀) · g(d),  g(d) = d/(d + d₀) · (128 + d₀)/128,
//! one curve for the forward pass and one for the backward, each at head
//! dimension 128 (g(128) = 1). Five numbers per device, fitted
//! (fit_fused_attention below) to a kernel's published measurements
//! (bench/published/attention-kernels.json) and kept in the device's preset.
//! A device without them prices the core as the batched GEMMs of the
//! device's GEMM curve on the causal half of the work: a bound from the
//! matrix units, with no kernel measurement behind it.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::model {

struct fused_attention_efficiency {
  double forward = 0;        //!< e of the forward pass: the share of peak at a long sequence, head dimension 128
  double forward_knee = 0;   //!< s₀ of the forward pass: the sequence at which it runs at half of e
  double backward = 0;       //!< e of the backward pass
  double backward_knee = 0;  //!< s₀ of the backward pass
  double head_dim_knee = 0;  //!< d₀: the head dimension at which g(d) halves, relative to 128

  //! Whether a kernel was measured: otherwise the step model prices the core as GEMMs.
  [[nodiscard]] bool measured() const noexcept { return forward > 0 && backward > 0; }

  [[nodiscard]] double head_dim_factor(double d) const noexcept {
    return d / (d + head_dim_knee) * (128.0 + head_dim_knee) / 128.0;
  }
  //! The share of peak the forward pass runs at over `sequence` queries of head dimension `head_dim`.
  [[nodiscard]] double forward_share(double sequence, double head_dim) const noexcept {
    return share(forward, forward_knee, sequence, head_dim);
  }
  [[nodiscard]] double backward_share(double sequence, double head_dim) const noexcept {
    return share(backward, backward_knee, sequence, head_dim);
  }
  friend bool operator==(const fused_attention_efficiency&, const fused_attention_efficiency&) = default;

 private:
  [[nodiscard]] double share(double e, double knee, double sequence, double head_dim) const noexcept {
    return std::min(1.0, e * sequence / (sequence + knee) * head_dim_factor(head_dim));
  }
};

inline void validate(const fused_attention_efficiency& a, const std::string& at = "attention") {
  const auto share = [&](double v, const char* key) {
    trinity::detail::require(v >= 0 && v <= 1, at + "." + key,
                             "must lie in [0, 1]: the share of the device's dense peak the kernel reaches (0: "
                             "not measured)");
  };
  const auto knee = [&](double v, const char* key) {
    trinity::detail::require(v >= 0 && std::isfinite(v), at + "." + key, "must be finite and not negative");
  };
  share(a.forward, "forward");
  share(a.backward, "backward");
  knee(a.forward_knee, "forward_knee");
  knee(a.backward_knee, "backward_knee");
  knee(a.head_dim_knee, "head_dim_knee");
  trinity::detail::require((a.forward > 0) == (a.backward > 0), at + ".backward",
                           "give both passes' shares, or neither (then the core is priced as GEMMs)");
}

//! Forward FLOPs of the attention core for `batch`·`heads` heads of `queries` queries against `keys` keys of
//! width `head_dim`; a causal mask leaves half of them (the kernels' own count, s² /2 at queries = keys).
inline double attention_core_flops(double batch, double heads, double queries, double keys, double head_dim,
                                   bool causal) {
  return 4.0 * batch * heads * queries * keys * head_dim * (causal ? 0.5 : 1.0);
}

//! The backward pass's FLOPs over the forward's: QKᵀ again, then dV, dP, dQ and dK.
inline constexpr double attention_backward_ratio = 2.5;

//! One measured kernel run: its pass, mask, shape and rate.
struct attention_point {
  bool backward = false;
  bool causal = false;
  double head_dim = 0;
  double sequence = 0;
  double flops_per_second = 0;
};

struct fused_attention_fit {
  fused_attention_efficiency model;
  std::size_t points = 0;            //!< measurements the fit used
  double rms_log_error = 0;          //!< over those of the two curves (forward causal, backward causal as derived)
  std::size_t derived_backward = 0;  //!< causal backward points derived from non-causal measurements
};

namespace detail {
//! e and s₀ of e·s/(s + s₀) for (s, share) pairs, minimising the squared log error: s₀ on a log grid from 16 to
//! 65,536 (refined tenfold around the best), e in closed form at each.
inline std::pair<double, double> fit_saturating(const std::vector<std::pair<double, double>>& points, double& sse) {
  const auto error_at = [&](double knee, double& e) {
    double sum = 0;
    for (const auto& [s, y] : points) sum += std::log(y * (s + knee) / s);
    const double mean = sum / static_cast<double>(points.size());
    double err = 0;
    for (const auto& [s, y] : points) {
      const double r = std::log(y * (s + knee) / s) - mean;
      err += r * r;
    }
    e = std::exp(mean);
    return err;
  };
  double best_knee = 0, best_e = 0, best = -1;
  double lo = std::log(16.0), hi = std::log(65536.0);
  for (int round = 0; round < 3; ++round) {
    const double step = (hi - lo) / 400.0;
    for (int i = 0; i <= 400; ++i) {
      double e = 0;
      const double knee = std::exp(lo + step * i);
      const double err = error_at(knee, e);
      if (best < 0 || err < best) best = err, best_knee = knee, best_e = e;
    }
    lo = std::log(best_knee) - 2 * step;
    hi = std::log(best_knee) + 2 * step;
  }
  sse = best;
  return {best_e, best_knee};
}
}  // namespace detail

//! Fits the five numbers to a kernel's measurements on a device of dense 16-bit peak `peak`:
//!  - the forward curve to the causal forward points at head dimension 128;
//!  - the backward curve to the causal backward points at 128, and where only non-causal backward points
//!    were measured, to each times the causal-over-non-causal ratio of the forward pass at the same sequence
//!    (derived_backward counts them): the mask costs both passes alike at its diagonal blocks;
//!  - d₀ to the forward pass's other head dimensions: each rate over the rate at 128 with the same sequence
//!    and mask is g(d); d₀ minimises their squared log error, on a grid of quarter steps up to 1,000.
//! Needs at least two causal forward points at 128 and two backward points (measured or derived).
inline fused_attention_fit fit_fused_attention(std::span<const attention_point> points, double peak) {
  trinity::detail::require(peak > 0, "peak", "must be positive");
  const auto find = [&](bool backward, bool causal, double d, double s) -> const attention_point* {
    for (const auto& p : points)
      if (p.backward == backward && p.causal == causal && p.head_dim == d && p.sequence == s) return &p;
    return nullptr;
  };
  fused_attention_fit out;
  std::vector<std::pair<double, double>> fwd, bwd;
  for (const auto& p : points) {
    trinity::detail::require(p.sequence > 0 && p.head_dim > 0 && p.flops_per_second > 0, "points",
                             "every measurement needs a positive sequence, head_dim and rate");
    if (p.head_dim != 128 || !p.causal) continue;
    (p.backward ? bwd : fwd).emplace_back(p.sequence, p.flops_per_second / peak);
  }
  for (const auto& p : points) {
    if (!p.backward || p.causal || p.head_dim != 128 || find(true, true, 128, p.sequence)) continue;
    const auto* fc = find(false, true, 128, p.sequence);
    const auto* fn = find(false, false, 128, p.sequence);
    if (!fc || !fn) continue;
    bwd.emplace_back(p.sequence, p.flops_per_second / peak * fc->flops_per_second / fn->flops_per_second);
    ++out.derived_backward;
  }
  trinity::detail::require(fwd.size() >= 2, "points", "need at least two causal forward measurements at head_dim 128");
  trinity::detail::require(bwd.size() >= 2, "points",
                           "need at least two backward measurements at head_dim 128: causal ones, or non-causal "
                           "ones beside causal and non-causal forward ones at the same sequence");
  double sse_f = 0, sse_b = 0;
  const auto [ef, kf] = detail::fit_saturating(fwd, sse_f);
  const auto [eb, kb] = detail::fit_saturating(bwd, sse_b);
  out.model = {ef, kf, eb, kb, 0};
  out.points = fwd.size() + bwd.size();
  out.rms_log_error = std::sqrt((sse_f + sse_b) / static_cast<double>(out.points));

  // d₀ from forward ratios at other head dimensions.
  std::vector<std::pair<double, double>> ratios;  // (d, measured rate at d over rate at 128)
  for (const auto& p : points) {
    if (p.backward || p.head_dim == 128) continue;
    if (const auto* at128 = find(false, p.causal, 128, p.sequence))
      ratios.emplace_back(p.head_dim, p.flops_per_second / at128->flops_per_second);
  }
  if (!ratios.empty()) {
    double best = -1;
    for (int i = 0; i <= 4000; ++i) {
      const double d0 = i * 0.25;  // 0 .. 1000
      const fused_attention_efficiency g{1, 0, 1, 0, d0};
      double err = 0;
      for (const auto& [d, r] : ratios) err += std::pow(std::log(r / g.head_dim_factor(d)), 2);
      if (best < 0 || err < best) best = err, out.model.head_dim_knee = d0;
    }
    out.points += ratios.size();
  }
  return out;
}

}  // namespace trinity::model
