#pragma once
//! \file
//! The model and the batch a training step prices: the transformer's shape, the sequence and global batch,
//! the precision of its states and GEMMs, attention's and the loss's kernels, dropout, overlap and a mixture's
//! routing.

#include <cstddef>

#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/transformer.hpp>

namespace trinity::model {

//! The model and the batch.
struct training_job {
  transformer_shape shape{};
  std::size_t sequence = 0;      //!< tokens per sequence
  std::size_t global_batch = 0;  //!< sequences per step
  state_bytes precision = mixed_precision_adam;
  bool flash_attention = false;  //!< the attention core never stores its s² scores
  bool dropout = true;           //!< GPT's three dropouts (and their 1-byte masks); Llama trains without
  bool overlap_dp = false;       //!< the data-parallel collectives overlap the passes, where the layout does not say
  //! The layers' matrix multiplies in fp8, as Transformer Engine runs them: each GEMM's inputs cast to fp8 (and
  //! kept for the backward pass at 1 byte), the weights cast once a step and kept with their transposes; the
  //! attention core, the logits, norms and the optimizer's states stay as they were.
  bool fp8 = false;
  //! Under fp8, the GEMM weights kept in fp8 alone (Transformer Engine's fp8_model_init: NeMo's fp8_params,
  //! Megatron-Core's --fp8-param-gather): no 16-bit copy beside the cast, the distributed optimizer's fp32
  //! master weights update them, and its all-gather sends them at 1 byte. Megatron-Core runs it only with a
  //! sharded optimizer (ZeRO 1 to 3).
  bool fp8_params = false;
  //! A mixture of experts' routing: the busiest expert-parallel rank's tokens over the mean (1: balanced, as
  //! benchmark runs force it), and the capacity factor that caps an expert's tokens at that multiple of the
  //! mean, dropping the rest (0: dropless).
  double expert_imbalance = 1;
  double capacity_factor = 0;
  //! The kernel that computes the loss over the logits (model/cross_entropy.hpp): Megatron-Core's own unless a
  //! recipe picks Transformer Engine's.
  loss_kernel cross_entropy = loss_kernel::native;

  //! The load the busiest expert-parallel rank carries over the mean: the imbalance, capped by the capacity.
  [[nodiscard]] double expert_load() const noexcept {
    return capacity_factor > 0 && capacity_factor < expert_imbalance ? capacity_factor : expert_imbalance;
  }
};

}  // namespace trinity::model
