#pragma once
//! \file
//! One layer's share of a micro-batch on one GPU: its GEMMs, attention core, memory-bound work and collectives,
//! forward, backward and recomputed, a mixture's experts in place of its MLP (layer()).
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
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>
#include <trinity/model/training/layout_checks.hpp>

namespace trinity::model {

struct layer_cost {
  seconds gemm_f{}, gemm_b{}, attn_f{}, attn_b{}, elem_f{}, elem_b{};
  seconds all_reduce{};         //!< one tensor-parallel all-reduce of the activation
  bytes all_reduce_bytes{};     //!< what it sends per GPU
  double pass_all_reduces = 2;  //!< per pass: attention's and the MLP's (an MoE block's shared experts' only)
  double all_reduces = 4;       //!< per layer: both passes', and the forward's again with full recomputation
  seconds exchange{};           //!< per pass, an MoE block's dispatch and combine (model/moe_layer.hpp)
  bytes exchange_bytes{};       //!< what they send per GPU per pass
  double exchanges = expert_exchange_passes(false);  //!< passes that exchange, a recomputed forward's too
  seconds cp_f{}, cp_b{};                            //!< the context ring's exposed time
  bytes kv_chunk{};                                  //!< what one hop of the ring sends
  double ring_blocks = 0;  //!< hops a micro-batch's passes send (context_ring_blocks), recomputed ones too
  seconds recompute{};
  double kept = 0, scores = 0;  //!< activation bytes without recomputation, and the attention scores' share
  double stored = 0;            //!< activation bytes kept under the layout's recomputation policy
  double modules = 0;           //!< what its single recomputed modules no longer keep (and rebuild backward)
  [[nodiscard]] seconds forward() const {
    return gemm_f + attn_f + elem_f + pass_all_reduces * all_reduce + cp_f + exchange;
  }
  [[nodiscard]] seconds backward() const {
    return gemm_b + attn_b + elem_b + pass_all_reduces * all_reduce + cp_b + exchange;
  }
};

namespace detail {
//! Bytes Transformer Engine's fp8 cast of a GEMM operand moves an element in training: the 16-bit value read
//! (2), its cast and the cast's transpose, which the weight-gradient GEMM takes, written (1 each). Its Linear
//! runs fp8_cast_transpose_fused on the input forward and on the output's gradient backward
//! (transformer_engine/pytorch/module/linear.py). Under sequence parallelism it casts the rank's rows before
//! the gather and transposes the gathered ones in the backward pass instead, which this count approximates.
inline constexpr double fp8_cast_bytes = 4.0;

//! What a dense MLP keeps of layer_activation_bytes: fc1's input, the activation's input(s) and fc2's input.
inline double dense_mlp_activation_bytes(const training_job& j, double T, double t, bool sp) {
  const auto& m = j.shape;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double linear_in = j.fp8 ? 1.0 : 2.0;
  return T * (linear_in * h / (sp ? t : 1.0) + (2.0 * m.up_width(f) + linear_in * f) / t);
}

//! An MoE layer: its block in place of the dense MLP (model/moe_layer.hpp). Returns the block's cost.
inline moe_block_cost replace_mlp(layer_cost& x, const training_job& j, const training_cluster& c,
                                  const parallel_layout& l, double T, double& traffic) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), etp = static_cast<double>(l.etp);
  const auto e = moe_block(j, c, l, T);
  x.gemm_f += e.gemm_f;
  x.gemm_b += e.gemm_b;
  x.pass_all_reduces = 1.0 + shared_expert_all_reduces(m);  // attention's, and the shared experts'
  x.all_reduces = 2.0 * x.pass_all_reduces;
  x.exchange = e.exchange();
  x.exchange_bytes = 2.0 * (e.all_to_all_bytes + e.etp_bytes);  // expert_exchange_bytes, or the node-deduplicated
  x.elem_f += e.copied / c.memory_bandwidth;
  x.elem_b += e.copied / c.memory_bandwidth;
  const double mlp = dense_mlp_activation_bytes(j, T, t, l.sequence_parallel);
  const double rows = j.expert_load() * e.rows;
  x.kept += e.kept - mlp;
  if (l.recompute != recomputation::full) x.stored += e.kept - mlp;
  training_job bf16 = j;
  bf16.fp8 = false;
  traffic +=
      j.fp8 ? moe_kept_bytes(bf16, l, T) - dense_mlp_activation_bytes(bf16, T, t, l.sequence_parallel) : e.kept - mlp;
  if (j.fp8) {
    // The experts' casts instead of the dense MLP's: each row's input and fc2's input forward; the gradients
    // of fc1's and fc2's outputs backward.
    const double fe = m.expert_ffn(), up = m.up_width(fe), f = static_cast<double>(m.ffn_hidden);
    x.elem_f += seconds{fp8_cast_bytes * (rows * (h + fe / etp) - T * (h + f / t)) / c.memory_bandwidth.value()};
    x.elem_b +=
        seconds{fp8_cast_bytes * (rows * (up / etp + h) - T * (m.up_width(f) / t + h)) / c.memory_bandwidth.value()};
  }
  return e;
}
}  // namespace detail

namespace detail {
//! One layer's attention core, forward and backward, for queries that see `keys` keys on average (causal: s/2
//! in full), a fused kernel walking `walk` positions (its rate's sequence on the device's measured curve).
inline std::pair<seconds, seconds> attention_core(const training_job& j, const training_cluster& c,
                                                  const parallel_layout& l, double keys, double walk) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), b = static_cast<double>(l.micro_batch);
  const double s = static_cast<double>(j.sequence), s_local = s / static_cast<double>(l.cp);
  // A query-key pair's width and a value's (one under standard attention); the kernel's rate at their mean.
  const double d_qk = m.query_key_dim(), d_v = m.value_dim(), d_head = (d_qk + d_v) / 2.0;
  const double heads = static_cast<double>(m.heads) / t;
  if (j.flash_attention && c.attention.measured()) {
    // One fused kernel: its s_local queries see `keys` keys on average (context parallelism's chunks are
    // balanced so), and the backward pass does 2.5 times the forward's work.
    const double work = attention_core_flops(b, heads, s_local, keys, d_head, false);
    const double peak = c.peak.value() * c.stack.matmul_share;
    return {seconds{work / (peak * c.attention.forward_share(walk, d_head))},
            seconds{attention_backward_ratio * work / (peak * c.attention.backward_share(walk, d_head))}};
  }
  // The attention core as batched GEMMs of (s_local × d)·(d × s) and (s_local × s)·(s × d_v), heads/t · b of each:
  // unfused, every score is computed and then masked, window or not; a fused kernel with no measured curve does
  // the share of them its queries attend to (the causal half in full), backward 2.5 times forward.
  seconds f = b * heads * (gemm_time(c, s_local, s, d_qk) + gemm_time(c, s_local, d_v, s));
  if (j.flash_attention) f = (keys / s) * f;
  return {f, (j.flash_attention ? attention_backward_ratio : 2.0) * f};
}

//! A GEMM of m rows, n outputs and k inputs.
struct gemm_shape {
  double m = 0, n = 0, k = 0;
};

//! A layer's GEMMs, held in place: the layout search prices a layer per candidate, so no allocation.
struct gemm_list {
  std::array<gemm_shape, 7> shapes{};  // latent attention's five projections and the MLP's two
  std::size_t size = 0;
  void push_back(const gemm_shape& g) { shapes[size++] = g; }
};

//! The key and value widths a tensor-parallel rank holds for each token: the KV heads (copied past t =
//! kv_heads) twice, or under latent attention every head's up-projected keys and values.
inline double key_value_width(const transformer_shape& m, double t) {
  if (m.mla()) return static_cast<double>(m.heads) * (m.query_key_dim() + m.value_dim()) / t;
  return 2.0 * static_cast<double>(m.kv_heads) * m.head_dim() / std::min(t, static_cast<double>(m.kv_heads));
}

//! The attention's projections on one of t tensor-parallel ranks, for T tokens: the fused QKV (KV heads copied
//! past t = kv_heads) and the output. Under latent attention: the queries' down- and up-projections (or one
//! from hidden), the keys' and values' down-projection with the shared rotary part, their up-projection, the
//! output; Megatron-Core runs the down-projections whole on every tensor-parallel rank, over its 1/t of the
//! sequence under sequence parallelism (T/split rows), and gathers the latents.
inline gemm_list attention_gemms(const transformer_shape& m, double T, double t, double split) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  gemm_list g;
  if (!m.mla()) {
    const double hq = a * m.head_dim();
    g.push_back({T, hq / t + key_value_width(m, t), h});
    g.push_back({T, h, hq / t});
    return g;
  }
  const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
  if (qr > 0) {
    g.push_back({T / split, qr, h});
    g.push_back({T, a * m.query_key_dim() / t, qr});
  } else {
    g.push_back({T, a * m.query_key_dim() / t, h});
  }
  g.push_back({T / split, kvr + static_cast<double>(m.rope_head_dim), h});
  g.push_back({T, a * (m.head_dim() + m.value_dim()) / t, kvr});
  g.push_back({T, h, a * m.value_dim() / t});
  return g;
}
}  // namespace detail

namespace detail {
//! The layout's single modules (model/recompute_modules.hpp), for T tokens a GPU: what each no longer keeps
//! comes off the layer's stored activations (and is held again while its layer's backward runs: `modules`),
//! and its second forward joins the recomputation: GEMMs at the device's curve, memory-bound work at the
//! memory's bandwidth, and the collectives that forward runs.
//!  - layernorm: the two norms' outputs as the next GEMMs keep them (an MoE layer's router takes the second,
//!    16-bit), 1/t of the tokens under sequence parallelism; each norm reads and writes a 16-bit row again
//!    (and casts it under fp8);
//!  - moe_act: fc2's input, a row of fe/etp values per token-expert row at the busiest rank's load; the
//!    activation reads its input(s) and writes its output again;
//!  - mla_up_proj: Q, K and V at their widths, 1/t of the heads; the two up-projections' GEMMs again;
//!  - mlp (a dense layer): all the MLP keeps but its input, which the checkpoint holds in 16 bits; fc1, the
//!    activation, fc2 and their casts again, and the MLP's tensor-parallel collective;
//!  - moe (an MoE layer): all the block keeps but its 16-bit input; the router, the dispatch and combine, the
//!    row copies, the experts' GEMMs, activation and casts, and the shared experts with their collective, again;
//!  - shared_experts: all they keep; their two GEMMs, activation, casts and collective again.
//! `gemms`: the layer's GEMM list, attention's first (`attention` of them), then the dense MLP's two; `block`:
//! an MoE layer's (replace_mlp's), null in a dense layer.
inline void recompute_single_modules(layer_cost& x, const training_job& j, const training_cluster& c,
                                     const parallel_layout& l, double T, std::span<const gemm_shape> gemms,
                                     std::size_t attention, const moe_block_cost* block) {
  const auto& m = j.shape;
  const bool moe = block != nullptr;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), etp = static_cast<double>(l.etp);
  const double split = l.sequence_parallel ? t : 1.0, linear_in = j.fp8 ? 1.0 : 2.0,
               cast = j.fp8 ? fp8_cast_bytes : 0.0;
  const double expert_rows = moe ? j.expert_load() * block->rows : 0.0;
  const double fe = m.expert_ffn(), up_e = m.up_width(fe);
  const auto again = [&](const gemm_shape& p) { x.recompute += gemm_time(c, p.m, p.n, p.k, j.fp8); };
  // A dense MLP of width f over T tokens split t ways: what it keeps past its input (fc1's output, fc2's
  // input), and the traffic its activation and casts (fc1's and fc2's inputs, under fp8) run again.
  const auto mlp_inside = [&](double f) {
    const double up = m.up_width(f);
    return std::pair{T * (2.0 * up + linear_in * f) / t, T * (2.0 * up + 2.0 * f) / t + cast * T * (h + f / t)};
  };
  const auto collective_again = [&] {
    x.recompute += x.all_reduce;
    x.all_reduces += 1.0;
  };
  double saved = 0, traffic = 0;
  if (l.modules.has(recompute_module::layernorm)) {
    saved += T / split * h * (linear_in + (moe ? 2.0 : linear_in));
    traffic += 2.0 * T / split * h * (4.0 + cast);
  }
  if (moe && l.modules.has(recompute_module::moe_act)) {
    saved += expert_rows * linear_in * fe / etp;
    traffic += expert_rows * (2.0 * up_e + 2.0 * fe + cast * fe) / etp;
  }
  if (m.mla() && l.modules.has(recompute_module::mla_up_proj)) {
    const double a = static_cast<double>(m.heads);
    saved += 2.0 * T * a * (2.0 * m.query_key_dim() + m.value_dim()) / t;
    // The up-projections in attention_gemms' list: the keys' and values' (second to last of attention's) and,
    // where the queries have a latent, theirs (second).
    again(gemms[attention - 2]);
    if (m.q_lora_rank > 0) again(gemms[1]);
  }
  if (!moe && l.modules.has(recompute_module::mlp)) {
    const auto [inside, moved] = mlp_inside(static_cast<double>(m.ffn_hidden));
    // fc1's input stays, as the checkpoint's 16-bit copy where fc1 kept an fp8 cast.
    saved += inside + T / split * h * (linear_in - 2.0);
    traffic += moved;
    again(gemms[attention]);
    again(gemms[attention + 1]);
    collective_again();
  }
  if (moe && l.modules.has(recompute_module::moe)) {
    saved += block->kept - block->tokens * 2.0 * h;
    traffic += block->copied.value() + expert_rows * ((2.0 * up_e + 2.0 * fe) / etp + cast * (h + fe / etp));
    x.recompute += block->gemm_f + x.exchange;
    x.exchanges = expert_exchange_passes(true);
    if (m.shared_experts > 0) {
      traffic += mlp_inside(m.shared_ffn()).second;
      collective_again();
    }
  }
  if (moe && l.modules.has(recompute_module::shared_experts)) {
    const double fs = m.shared_ffn(), up_s = m.up_width(fs);
    const auto [inside, moved] = mlp_inside(fs);
    saved += inside;
    traffic += moved;
    again({T, up_s / t, h});
    again({T, h, fs / t});
    collective_again();
  }
  x.stored -= saved;
  x.modules = saved;
  x.recompute += seconds{traffic / c.memory_bandwidth.value()};
}
//! The attention core's time, its layers' average where some attend through a window (model/transformer.hpp).
inline void price_attention_core(layer_cost& x, const training_job& j, const training_cluster& c,
                                 const parallel_layout& l, double s, double s_local) {
  const auto& m = j.shape;
  const auto [attn_f, attn_b] = attention_core(j, c, l, causal_keys_per_query(s, 0.0), s_local);
  x.attn_f = attn_f;
  x.attn_b = attn_b;
  if (const auto windowed = windowed_layer_count(m); windowed > 0) {
    const double w = static_cast<double>(m.sliding_window),
                 share = static_cast<double>(windowed) / static_cast<double>(m.layers);
    // The kernel walks about 2w positions a query block where a causal one over s walks s: a window's rate is
    // the curve's at a sequence of 2w.
    const auto [win_f, win_b] = attention_core(j, c, l, causal_keys_per_query(s, w), std::min(s_local, 2 * w));
    x.attn_f = (1.0 - share) * attn_f + share * win_f;
    x.attn_b = (1.0 - share) * attn_b + share * win_b;
  }
}

//! Context parallelism: K and V chunks around the ring, c − 1 hops forward; backward c − 1 hops of K, V, dK
//! and dV, then dK and dV home: 2(c − 1) + 1 chunks' worth (parallel/context_parallel.hpp's ring),
//! hidden behind the attention core where shorter. `T`: the tokens a rank holds a micro-batch.
inline void price_context_ring(layer_cost& x, const transformer_shape& m, const training_cluster& c,
                               const parallel_layout& l, double T) {
  const double t = static_cast<double>(l.tp), cp = static_cast<double>(l.cp);
  x.kv_chunk = bytes{T * key_value_width(m, t) * 2.0};
  const auto& cp_link = level(c, span(l, layout_group::context));
  const seconds hop = cp_link.latency + x.kv_chunk / cp_link.bandwidth;
  const seconds ring_f = l.cp > 1 ? (cp - 1.0) * hop : seconds{};
  const seconds ring_b = l.cp > 1 ? (cp - 1.0) * (hop + hop) + hop : seconds{};
  x.cp_f = ring_f > x.attn_f ? ring_f - x.attn_f : seconds{};
  x.cp_b = ring_b > x.attn_b ? ring_b - x.attn_b : seconds{};
  x.ring_blocks = context_ring_blocks(l.cp, l.recompute != recomputation::none);
}

//! The recomputation policy's second forward: the whole layer's under full recomputation; under selective, the
//! attention core's, as Megatron-Core checkpoints it (checkpoint_core_attention), fused or not, with its context
//! ring. A fused kernel keeps no scores (x.scores is 0), so all it saves is the kernel's own statistics while its
//! forward costs the same again.
inline void price_recomputation(layer_cost& x, const training_cluster& c, const parallel_layout& l) {
  if (l.recompute == recomputation::full) {
    x.recompute = x.forward();
    x.all_reduces += x.pass_all_reduces;
    x.exchanges = expert_exchange_passes(true);
  } else if (l.recompute == recomputation::selective) {
    x.recompute += x.attn_f + x.cp_f + seconds{c.elementwise_traffic * x.scores / c.memory_bandwidth.value()};
  }
}
}  // namespace detail

//! The layer's cost for this layout (no check of the layout: price() checks); `moe`: a mixture-of-experts
//! layer, whose MLP is the experts' block.
inline layer_cost layer(const training_job& j, const training_cluster& c, const parallel_layout& l, bool moe = false) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), cp = static_cast<double>(l.cp), b = static_cast<double>(l.micro_batch);
  const double s = static_cast<double>(j.sequence), s_local = s / cp;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double T = b * s_local;
  layer_cost x;
  const double up = m.up_width(f) / t;
  // Attention's GEMMs, then the dense MLP's two (an MoE layer's block replaces them below). Under fp8 each
  // GEMM's input is cast forward, and its output's gradient backward: cast_in and cast_out elements.
  auto gemms = detail::attention_gemms(m, T, t, l.sequence_parallel ? t : 1.0);
  const std::size_t attention = gemms.size;
  gemms.push_back({T, up, h});
  gemms.push_back({T, h, f / t});
  double cast_in = 0, cast_out = 0;
  for (std::size_t i = 0; i < gemms.size; ++i) {
    const auto& g = gemms.shapes[i];
    cast_in += g.m * g.k;
    cast_out += g.m * g.n;
    if (moe && i >= attention) continue;
    x.gemm_f += detail::gemm_time(c, g.m, g.n, g.k, j.fp8);
    x.gemm_b += detail::gemm_bwd(c, g.m, g.n, g.k, j.fp8);
  }
  detail::price_attention_core(x, j, c, l, s, s_local);
  x.kept = layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, recomputation::none);
  x.scores = x.kept - layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, recomputation::selective);
  x.stored = layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, l.recompute);
  const double kappa = c.elementwise_traffic;
  // The memory-bound kernels' traffic follows the 16-bit activations whatever fp8 keeps of them.
  training_job bf16 = j;
  bf16.fp8 = false;
  double traffic =
      j.fp8 ? layer_activation_bytes(bf16, s_local, s, b, t, l.sequence_parallel, recomputation::none) : x.kept;
  if (j.fp8) {
    // Casts to fp8 with their transposes (detail::fp8_cast_bytes): forward, the GEMMs' inputs; backward, the
    // gradients of their outputs.
    x.elem_f += seconds{detail::fp8_cast_bytes * cast_in / c.memory_bandwidth.value()};
    x.elem_b += seconds{detail::fp8_cast_bytes * cast_out / c.memory_bandwidth.value()};
  }
  std::optional<moe_block_cost> block;
  if (moe) block = detail::replace_mlp(x, j, c, l, T, traffic);
  const seconds elementwise{kappa * traffic / c.memory_bandwidth.value()};
  x.elem_f += elementwise + c.stack.layer_overhead;  // the stack's own work a pass, beside the kernels'
  x.elem_b += 2.0 * elementwise + c.stack.layer_overhead;

  // Tensor-parallel collectives: the activation, 16-bit, per pass attention's and the MLP's.
  const bytes activation{T * h * 2.0};
  const auto tp_link = detail::as_collective(detail::level(c, span(l, layout_group::tensor)));
  x.all_reduce = l.tp > 1 ? ring_all_reduce_time(l.tp, activation, tp_link) : seconds{};
  x.all_reduce_bytes = l.tp > 1 ? 2.0 * (t - 1.0) / t * activation : bytes{};
  if (!l.modules.empty())
    detail::recompute_single_modules(x, j, c, l, T,
                                     std::span<const detail::gemm_shape>(gemms.shapes.data(), gemms.size), attention,
                                     block ? &*block : nullptr);
  detail::price_context_ring(x, m, c, l, T);
  detail::price_recomputation(x, c, l);
  return x;
}

}  // namespace trinity::model
