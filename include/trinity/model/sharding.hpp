#pragma once
//! \file
//! Memory per rank and traffic per step of data-parallel training under ZeRO
//! (Rajbhandari et al., SC'20, §5 and Table 1). Ψ parameters, N ranks, and
//! per parameter: p bytes of parameters, g of gradients, K of optimizer
//! states. Mixed-precision Adam is p = 2, g = 2, K = 12, which gives the
//! paper's DDP 16Ψ, stage 1 4Ψ + 12Ψ/N, stage 2 2Ψ + 14Ψ/N, stage 3 16Ψ/N;
//! trinity-train's fp32 Adam is p = 4, g = 4, K = 8.
//! Traffic per rank and step, ring collectives: DDP, stages 1 and 2 send
//! 2(N − 1)/N · Ψ elements (an all-reduce, or a reduce-scatter plus an
//! all-gather); stage 3 sends 3(N − 1)/N · Ψ (two all-gathers of the
//! parameters, forward and backward, and a reduce-scatter). The paper rounds
//! (N − 1)/N to 1: "2Ψ" and "3Ψ".

#include <cstddef>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! Bytes per parameter of each kind of training state.
struct state_bytes {
  double parameter = 2;   //!< p
  double gradient = 2;    //!< g
  double optimizer = 12;  //!< K: Adam's fp32 master copy, momentum and variance
};
inline constexpr state_bytes mixed_precision_adam{2, 2, 12};
inline constexpr state_bytes fp32_adam{4, 4, 8};

struct memory_per_rank {
  bytes parameters{}, gradients{}, optimizer_states{};
  bytes offloaded{};  //!< optimizer states kept in the slower tier instead
  [[nodiscard]] constexpr bytes total() const noexcept { return parameters + gradients + optimizer_states; }
};

namespace detail {
constexpr void check_sharding(double psi, std::size_t ranks, int stage, const state_bytes& b) {
  trinity::detail::require(psi >= 0 && trinity::detail::is_finite(psi), "parameters",
                           "must be finite and not negative");
  trinity::detail::require(ranks >= 1, "ranks", "must be at least 1");
  trinity::detail::require(stage >= 0 && stage <= 3, "stage", "must be 0 (DDP), 1, 2 or 3");
  trinity::detail::require(b.parameter > 0 && b.gradient > 0 && b.optimizer >= 0, "state_bytes",
                           "parameter and gradient bytes must be positive, optimizer bytes not negative");
}
}  // namespace detail

//! Resident bytes per rank of parameters, gradients and optimizer states; with offload the optimizer
//! states move to `offloaded` and leave the device total.
constexpr memory_per_rank zero_memory_per_rank(double psi, std::size_t ranks, int stage,
                                               state_bytes b = mixed_precision_adam, bool offload = false) {
  detail::check_sharding(psi, ranks, stage, b);
  const double n = static_cast<double>(ranks);
  memory_per_rank m;
  m.parameters = bytes{psi * b.parameter / (stage >= 3 ? n : 1.0)};
  m.gradients = bytes{psi * b.gradient / (stage >= 2 ? n : 1.0)};
  const bytes opt{psi * b.optimizer / (stage >= 1 ? n : 1.0)};
  (offload ? m.offloaded : m.optimizer_states) = opt;
  return m;
}

//! Gradient bytes a rank holds at its peak when a step sums `micro_batches` passes. One pass (the
//! data-parallel loop) reduce-scatters each layer as its gradient completes, so stages 2 and 3 keep 1/n of
//! it. Several passes (gradient accumulation, a pipeline) keep each layer's whole gradient until the last
//! pass, then reduce-scatter it into the rank's 1/n, which exists beside it (shard::data_parallel's
//! staging buffer and shard): under accumulation stage 2 saves no gradient memory over stage 1.
constexpr bytes peak_gradient_bytes(double psi, std::size_t ranks, int stage, state_bytes b = mixed_precision_adam,
                                    std::size_t micro_batches = 1) {
  detail::check_sharding(psi, ranks, stage, b);
  const double whole = psi * b.gradient, n = static_cast<double>(ranks);
  if (stage < 2) return bytes{whole};
  return bytes{micro_batches > 1 ? whole + whole / n : whole / n};
}

//! The parameter all-gathers a step runs under ZeRO stage `stage` over `micro_batches` passes: stages 1 and 2
//! gather the updated shards once; stage 3 gathers the weights again for each pass's forward and backward. Both
//! planners count them so (the layout model's parameter_gathers, the data-parallel planner's price).
constexpr double parameter_gathers(int stage, double micro_batches) noexcept {
  return stage == 3 ? 2.0 * micro_batches : stage >= 1 ? 1.0 : 0.0;
}

//! Bytes one rank sends per training step.
constexpr bytes zero_traffic_per_step(double psi, std::size_t ranks, int stage, state_bytes b = mixed_precision_adam) {
  detail::check_sharding(psi, ranks, stage, b);
  const double share = static_cast<double>(ranks - 1) / static_cast<double>(ranks);
  if (stage == 0) return bytes{share * psi * 2.0 * b.gradient};            // all-reduce of gradients
  if (stage <= 2) return bytes{share * psi * (b.gradient + b.parameter)};  // reduce-scatter + all-gather
  return bytes{share * psi * (b.gradient + 2.0 * b.parameter)};            // and a second all-gather
}

//! Bytes one rank moves between device and the offload tier per step: its gradient shard down, its
//! updated parameter shard back (ZeRO-Offload); zero without offload.
constexpr bytes offload_traffic_per_step(double psi, std::size_t ranks, int stage, state_bytes b = mixed_precision_adam,
                                         bool offload = true) {
  detail::check_sharding(psi, ranks, stage, b);
  if (!offload) return bytes{};
  const double shard = psi / (stage >= 1 ? static_cast<double>(ranks) : 1.0);
  return bytes{shard * (b.gradient + b.parameter)};
}

}  // namespace trinity::model
