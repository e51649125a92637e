#pragma once
//! \file
//! What the language-model loss costs beyond the logits' GEMM: the kernel that computes it, the bytes it moves
//! over the logits a GPU holds (T tokens × V/t of the vocabulary) and the bytes it keeps for the backward pass.
//! Memory-bound, so priced at the device's memory bandwidth. Two kernels, as Megatron-Core's
//! cross_entropy_fusion_impl names them:
//!
//! "native": Megatron-Core's vocab-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py, the
//! default of Megatron-Core, NeMo and Megatron-Bridge; the jit-fused variant, cross_entropy_loss_fusion with
//! this implementation, runs the same steps), in fp32. Per logit:
//!  - forward: the 16-bit logits cast to fp32 (2 bytes read, 4 written), their maximum (4 read), the maximum
//!    subtracted in place (4 read, 4 written), exp in place (4, 4), its sum (4 read), and the softmax normalized
//!    in place (4, 4) and kept for the backward pass: 38 bytes;
//!  - backward: the softmax, less one at each target, scaled in place by the loss's gradient (4, 4), then cast
//!    back to 16 bits for the output layer's backward (4 read, 2 written): 14 bytes;
//!  - kept: the fp32 softmax, 4 bytes (Korthikanti et al.'s 4·s·b·V/t).
//!
//! "te": Transformer Engine's fused Triton kernel (transformer_engine/pytorch/triton/cross_entropy.py), on the
//! 16-bit logits in place. Per logit:
//!  - forward: an online-softmax pass reads them for the maximum and the sum (2), a second pass reads them again
//!    and writes the gradient over them (2, 2): 6 bytes;
//!  - backward: the gradient scaled in place by the loss's (element_mul_kernel: 2, 2): 4 bytes;
//!  - kept: the 16-bit gradient written over the logits, 2 bytes.
//! Later Transformer Engine releases move the gradient's pass into the backward (cross_entropy_backward_kernel):
//! 2 bytes forward and 4 backward, the same 2 kept; priced as the earlier, 4 bytes a logit more.
//!
//! In both, the maximum and the sum across the t ranks are all-reduces of one value a token, and the target's
//! logit a gather of one: left out.

#include <string_view>
#include <utility>

#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! The kernel that computes the loss (Megatron-Core's cross_entropy_fusion_impl).
enum class loss_kernel {
  native,             //!< Megatron-Core's vocab-parallel cross entropy, in fp32
  transformer_engine  //!< Transformer Engine's fused kernel, on the 16-bit logits ("te")
};

//! Bytes a loss kernel reads and writes per logit, forward and backward, and keeps for the backward pass.
struct loss_kernel_bytes {
  double forward = 0, backward = 0, kept = 0;
};

inline constexpr loss_kernel_bytes native_cross_entropy{38.0, 14.0, 4.0};
inline constexpr loss_kernel_bytes te_cross_entropy{6.0, 4.0, 2.0};

[[nodiscard]] constexpr loss_kernel_bytes bytes_of(loss_kernel k) noexcept {
  return k == loss_kernel::transformer_engine ? te_cross_entropy : native_cross_entropy;
}

//! The names inputs give the kernels, Megatron-Core's own.
inline constexpr std::string_view loss_kernel_names[] = {"native", "te"};
[[nodiscard]] constexpr std::string_view to_string(loss_kernel k) noexcept {
  return loss_kernel_names[k == loss_kernel::transformer_engine ? 1 : 0];
}
//! The kernel `name` names, one of loss_kernel_names (a reader checks it first, io::detail::loss_kernel_name).
[[nodiscard]] constexpr loss_kernel loss_kernel_named(std::string_view name) noexcept {
  return name == loss_kernel_names[1] ? loss_kernel::transformer_engine : loss_kernel::native;
}

//! The loss over `logits` values on one GPU (T·V/t for a micro-batch), forward and backward, at the device's
//! memory bandwidth.
inline std::pair<seconds, seconds> cross_entropy_time(double logits, bytes_per_second memory_bandwidth,
                                                      loss_kernel k = loss_kernel::native) {
  const auto b = bytes_of(k);
  return {seconds{b.forward * logits / memory_bandwidth.value()},
          seconds{b.backward * logits / memory_bandwidth.value()}};
}

}  // namespace trinity::model
