#pragma once
//! \file
//! What the language-model loss costs beyond the logits' GEMM. Megatron-Core computes it with its
//! vocab-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py, the default of Megatron-Core,
//! NeMo and Megatron-Bridge; the jit-fused variant, cross_entropy_loss_fusion with the native implementation,
//! runs the same steps), which is memory-bound over the logits a GPU holds, T tokens × V/t of the vocabulary,
//! in fp32. Per logit:
//!  - forward: the 16-bit logits cast to fp32 (2 bytes read, 4 written), their maximum (4 read), the maximum
//!    subtracted in place (4 read, 4 written), exp in place (4, 4), its sum (4 read), and the softmax normalized
//!    in place (4, 4) and kept for the backward pass: 38 bytes;
//!  - backward: the softmax, less one at each target, scaled in place by the loss's gradient (4, 4), then cast
//!    back to 16 bits for the output layer's backward (4 read, 2 written): 14 bytes.
//! The maximum and the sum across the t ranks are all-reduces of one value a token, and the target's logit a
//! gather of one: left out. Transformer Engine's fused kernel (cross_entropy_fusion_impl "te") reads the
//! 16-bit logits once forward and rewrites them as their gradient backward, 6 bytes a logit: a recipe that
//! picks it pays less than this prices.

#include <utility>

#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! Bytes Megatron-Core's vocab-parallel cross entropy reads and writes per logit, forward and backward.
inline constexpr double cross_entropy_forward_bytes = 38.0;
inline constexpr double cross_entropy_backward_bytes = 14.0;
//! Bytes it keeps per logit for the backward pass: the fp32 softmax (Korthikanti et al.'s 4·s·b·V/t).
inline constexpr double cross_entropy_kept_bytes = 4.0;

//! The loss over `logits` values on one GPU (T·V/t for a micro-batch), forward and backward, at the device's
//! memory bandwidth.
inline std::pair<seconds, seconds> cross_entropy_time(double logits, bytes_per_second memory_bandwidth) {
  return {seconds{cross_entropy_forward_bytes * logits / memory_bandwidth.value()},
          seconds{cross_entropy_backward_bytes * logits / memory_bandwidth.value()}};
}

}  // namespace trinity::model
