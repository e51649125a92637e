#pragma once
//! \file
//! The activations a layer keeps and the blocks and activations a rank passes: what the step model counts per
//! micro-batch before pricing it (Korthikanti et al. 2022 for the activations, parallel/context_parallel.hpp and
//! parallel/pipeline.hpp for the rings and pipelines they count).
//! One seam of the training step model; model/parallel_training.hpp includes them all and says what a step costs.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/pipeline_layout.hpp>
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! Activation bytes one layer keeps for the backward pass, per micro-batch of b sequences whose s_local tokens
//! attend to s_full positions, under t-way tensor parallelism, counted tensor by tensor as Korthikanti et al.
//! 2022 §4.1 count them (16-bit tensors, 1-byte dropout masks) and generalised to grouped KV heads and gated
//! MLPs. For GPT's shape this is their s·b·h·(10 + 24/t + 5·a·s/(h·t)) (34/t with sequence parallelism),
//! plus the two LayerNorms' fp32 mean and reciprocal deviation (16 bytes a token), which they leave out.
inline double layer_activation_bytes(const training_job& j, double s_local, double s_full, double b, double t, bool sp,
                                     recomputation r) {
  const auto& m = j.shape;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double a = static_cast<double>(m.heads);
  // The attention core's queries, keys and values a token (every head's, latent attention's up-projected).
  const double kv = m.mla() ? 0.0 : static_cast<double>(m.kv_heads) * m.head_dim();
  const double q = a * m.query_key_dim(), k = m.mla() ? q : kv, v = m.mla() ? a * m.value_dim() : kv;
  const double sb = s_local * b;
  const double split = sp ? t : 1.0;  // what sequence parallelism splits: the norms, dropouts and their inputs
  if (r == recomputation::full) return 2.0 * sb * h / split;
  const double masks = j.dropout ? 2.0 * h : 0.0;  // after the projection and after the MLP
  const double linear_in = j.fp8 ? 1.0 : 2.0;      // a GEMM's input as kept: its fp8 cast under fp8
  // The two norms' inputs, QKV's (or the down-projections') and fc1's inputs.
  const double replicated = 2.0 * h + linear_in * h + 2.0 * h + linear_in * h + masks;
  const double act_in = m.up_width(f);  // the activation function's input(s)
  // Q, K, V (the attention core's, 16-bit); the projection's input; the activation's; fc2's input.
  const double divided = 2.0 * (q + k + v) + linear_in * a * m.value_dim() + 2.0 * act_in + linear_in * f;
  // Latent attention's latents, which every tensor-parallel rank computes whole: their norms' inputs and the
  // up-projections' inputs.
  const double latents = static_cast<double>(m.q_lora_rank + m.kv_lora_rank) * (2.0 + linear_in);
  const double norm_stats = m.mla() ? 24.0 : 16.0;  // two more norms' mean and variance under latent attention
  double bytes = sb * (replicated / split + divided / t + latents + norm_stats / split);
  if (r == recomputation::none && !j.flash_attention) {
    const double heads = static_cast<double>(m.heads);
    // The softmax's output (2 bytes), and with dropout its mask (1) and the dropped probabilities (2).
    bytes += (j.dropout ? 5.0 : 2.0) * heads * s_local * s_full * b / t;
  }
  return bytes;
}

//! Key-and-value blocks a rank sends around a c-rank context ring per attention layer and micro-batch,
//! forward and backward: c − 1 hops of K and V, c − 1 of K, V, dK and dV, then dK and dV home
//! (parallel/context_parallel.hpp's ring), 3(c − 1) + 1; none without context parallelism. `again`: the attention's
//! forward runs a second time, under full or selective recomputation, and sends its c − 1 hops again (Transformer
//! Engine's context-parallel attention is what Megatron-Core's checkpoint reruns).
inline double context_ring_blocks(std::size_t c, bool again = false) {
  const double hops = c > 1 ? static_cast<double>(c) - 1.0 : 0.0;
  return c > 1 ? (again ? 4.0 : 3.0) * hops + 1.0 : 0.0;
}

//! Activations (or their gradients) the busiest rank of a p-stage pipeline, v model chunks a rank, sends per
//! micro-batch, and as many as it receives: one each way per chunk boundary it feeds. With p > 2 a middle
//! rank feeds 2v; with p = 2 both ranks hold an end of the pipeline, which sends one fewer
//! (parallel/pipeline.hpp's counts).
inline double pipeline_transfers(std::size_t p, std::size_t v) {
  if (p <= 1) return 0.0;
  return p > 2 ? 2.0 * static_cast<double>(v) : 2.0 * static_cast<double>(v) - 1.0;
}

}  // namespace trinity::model
