#pragma once
//! \file
//! The machine as the training step model sees it: the device's dense rate and GEMM curve, its memory, its
//! fused attention kernel and fp8 rate, the two levels of the network (inside the scale-up domain and across
//! it) and the host tier; and the time of one matrix multiply on it.

#include <cstddef>

#include <trinity/model/collectives.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/training_stack.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! One level of the network, per GPU and direction.
struct link_level {
  seconds latency{};
  bytes_per_second bandwidth{};
};

//! The machine as the step model sees it.
struct training_cluster {
  flops_per_second peak{};  //!< dense rate at the training precision
  gemm_efficiency gemm{};
  bytes_per_second memory_bandwidth{};  //!< device memory (HBM)
  bytes memory{};                       //!< device memory capacity
  std::size_t domain = 8;               //!< GPUs that share the fast link
  link_level fast{}, slow{};
  double elementwise_traffic = 3.0;  //!< κ: memory traffic per byte of activations kept
  //! The fused attention kernel's measured curve (model/fused_attention.hpp); unmeasured: GEMMs price it.
  fused_attention_efficiency attention{};
  //! The dense fp8 rate, for a job whose layers' GEMMs run in fp8 (0: the device has none), and the share of it
  //! an fp8 GEMM gets against the share a 16-bit GEMM of its shape gets of `peak` (model/serving.hpp's
  //! fp8_gemm_share, fitted to fp8 serving runs).
  flops_per_second fp8_peak{};
  double fp8_gemm_share = 1;
  //! The tier optimizer states offload to (host memory, per GPU), reached over `host.bandwidth`; capacity 0: none.
  link_level host{};
  bytes host_memory{};
  //! What the training stack adds (model/training_stack.hpp); the default: the stack the model was fitted on.
  stack_constants stack{};
};

namespace detail {
inline seconds gemm_time(const training_cluster& c, double m, double n, double k, bool fp8 = false) {
  const double rate = (fp8 ? c.fp8_peak.value() * c.fp8_gemm_share : c.peak.value()) * c.stack.matmul_share;
  return seconds{2.0 * m * n * k / (rate * c.gemm(m, n, k))};
}
//! Backward's data gradient (m×n by n×k) and weight gradient (n×m by m×k) of the forward GEMM m×k by k×n.
inline seconds gemm_bwd(const training_cluster& c, double m, double n, double k, bool fp8 = false) {
  return gemm_time(c, m, k, n, fp8) + gemm_time(c, n, k, m, fp8);
}
inline const link_level& level(const training_cluster& c, std::size_t span) {
  return span <= c.domain ? c.fast : c.slow;
}
inline collective_link as_collective(const link_level& l) { return {l.latency, l.bandwidth, {}}; }
}  // namespace detail

}  // namespace trinity::model
