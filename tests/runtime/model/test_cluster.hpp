#pragma once
// An H100-like cluster with round figures for the step model's closed-form tests: a 1 PFLOP/s dense peak and
// twice that in fp8 at a 0.7 share, the GEMM curve e = 0.85 with its knee at 400, 3 TB/s of memory, and two link
// levels (300 GB/s and 1 us inside a domain of 8, 25 GB/s and 5 us across).

#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>

namespace trinity::test {

inline model::training_cluster h100_like() {
  model::training_cluster c;
  c.peak = flops_per_second{1e15};
  c.fp8_peak = flops_per_second{2e15};
  c.fp8_gemm_share = 0.7;
  c.gemm = {0.85, 400};
  c.memory_bandwidth = bytes_per_second{3e12};
  c.memory = bytes{80e9};
  c.fast = {seconds{1e-6}, bytes_per_second{300e9}};
  c.slow = {seconds{5e-6}, bytes_per_second{25e9}};
  return c;
}

//! A job as the performance recipes run one: fused attention, no dropout.
inline model::training_job recipe_job(const model::transformer_shape& shape, std::size_t sequence,
                                      std::size_t global_batch, bool fp8 = false) {
  model::training_job j;
  j.shape = shape;
  j.sequence = sequence;
  j.global_batch = global_batch;
  j.flash_attention = true;
  j.dropout = false;
  j.fp8 = fp8;
  return j;
}

}  // namespace trinity::test
