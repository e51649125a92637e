#pragma once
//! \file
//! Fitting the parallel step model's free parameters to measured runs, so that
//! the model is judged on runs it was not fitted on (trinity validate):
//!  - κ, the memory traffic per byte of activations kept, from layer stacks
//!    timed on one GPU (bench/gpu/transformer_probe.py);
//!  - a device's GEMM curve (e, x₀) from whole training steps, where no GEMM
//!    sweep of the device was measured.
//! Both minimise the squared log error of the predicted time, by a grid: the
//! objective has a few smooth dimensions and no good starting guess.

#include <cmath>
#include <cstddef>
#include <span>

#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>

namespace trinity::model {

//! A layer stack timed on one GPU: `layers` layers, forward and backward of one micro-batch.
struct measured_layers {
  training_job job;
  parallel_layout layout;
  std::size_t layers = 1;
  seconds measured{};
};

//! The model's time for such a stack (no logits, no optimizer, no communication).
inline seconds predicted(const measured_layers& r, const training_cluster& c) {
  const auto x = layer(r.job, c, r.layout);
  return static_cast<double>(r.layers) * (x.forward() + x.backward() + x.recompute);
}

//! A whole training step, measured (or published) on a cluster.
struct measured_step {
  training_job job;
  parallel_layout layout;
  training_cluster cluster;
  seconds measured{};
};

namespace detail {
inline double log_error(seconds predicted, seconds measured) {
  const double r = std::log(predicted.value() / measured.value());
  return r * r;
}
}  // namespace detail

//! κ for `c` that best predicts the stacks, searched over [0, 8] in steps of 0.01.
inline double fit_elementwise_traffic(std::span<const measured_layers> runs, training_cluster c) {
  trinity::detail::require(!runs.empty(), "runs", "need at least one measured layer stack");
  double best = 0, best_err = -1;
  for (int i = 0; i <= 800; ++i) {
    c.elementwise_traffic = i * 0.01;
    double err = 0;
    for (const auto& r : runs) err += detail::log_error(predicted(r, c), r.measured);
    if (best_err < 0 || err < best_err) best_err = err, best = c.elementwise_traffic;
  }
  return best;
}

//! The GEMM curve every run's cluster is given that best predicts the steps: e over [0.40, 1.00] in steps of
//! 0.005, x₀ over [0, 1024] in steps of 4.
inline gemm_efficiency fit_gemm_to_steps(std::span<const measured_step> runs) {
  trinity::detail::require(!runs.empty(), "runs", "need at least one measured step to fit to");
  gemm_efficiency best{};
  double best_err = -1;
  for (int x = 0; x <= 256; ++x) {
    for (int e = 80; e <= 200; ++e) {
      const gemm_efficiency g{e * 0.005, x * 4.0};
      double err = 0;
      for (const auto& r : runs) {
        auto c = r.cluster;
        c.gemm = g;
        err += detail::log_error(price(r.job, c, r.layout).step, r.measured);
        // The rest of the runs only add to err (squares; a float sum of non-negatives never falls), so a point
        // already no better than the best cannot win: leaving it changes no result and skips most of the grid.
        if (best_err >= 0 && err >= best_err) break;
      }
      if (best_err < 0 || err < best_err) best_err = err, best = g;
    }
  }
  return best;
}

}  // namespace trinity::model
