#pragma once
//! \file
//! The analytic shape of a decoder-only transformer: what it holds, what a
//! token costs, what its activations and KV cache take. The figures:
//!  - parameters from the shape: per layer the attention projections
//!    h·(a·d + 2·g·d) + a·d·h (queries, keys and values for a query heads and
//!    g KV heads of width d, the output; a·d = h unless head_dim says otherwise), the MLP (3·h·f gated as SwiGLU, 2·h·f
//!    otherwise) and two norms of h; the embedding V·h, and V·h more when the output layer is untied; a final norm.
//!    Biases are left out (Llama has none). Multi-head latent attention (DeepSeek-V2, V3) replaces the QKV
//!    projection with down-projections to latents and up-projections per head (attention_parameters). A mixture of
//!    experts (Shazeer et al. 2017; Mixtral, Jiang et al. 2024) replaces the MLP of every moe_layer_frequency-th layer
//!    (Megatron-LM's --moe-layer-freq) with a router of h·E weights, E experts and any shared experts, each an MLP of
//!    width moe_ffn_hidden; a token runs top_k of the experts and every shared one, so its FLOPs follow the active
//!    weights and the memory the total. A multi-token prediction module (DeepSeek-V3's) adds one layer of the
//!    last layer's kind, a 2h → h projection and three norms; it shares the embedding and the output layer.
//!  - forward FLOPs: 2 per weight per token for the matrix multiplies, plus
//!    the attention term 4·h_q per layer per token per position it attends
//!    to (QK^T and the weighted sum of V; h_q = heads·d).
//!  - a training iteration: 3 forward passes' worth (forward, backward's two),
//!    4 with full recomputation of the layers, at the full s² attention as in
//!    Narayanan et al., SC'21, eq. (3): 96·B·s·l·h²·(1 + s/6h + V/16lh) for
//!    GPT's shape (f = 4h, g = heads, untied output) with recomputation.
//!  - activations per layer per micro-batch, 16-bit, Korthikanti et al. 2022
//!    ("Reducing Activation Recomputation in Large Transformer Models",
//!    Table 2), with t-way tensor parallelism: s·b·h·(10 + 24/t + 5·a·s/(h·t))
//!    without sequence parallelism, s·b·h·(34/t + 5·a·s/(h·t)) with it;
//!    selective recomputation drops the 5·a·s/(h·t) term; full recomputation
//!    keeps only the layer's input, 2·s·b·h (÷ t with sequence parallelism).
//!  - the KV cache: 2·layers·g·d values per token.
//!  - the pipeline bubble of p stages, m micro-batches and v virtual stages
//!    per device (interleaved 1F1B): (p − 1)/(m·v) of the ideal time
//!    (Narayanan et al., SC'21, §2.2).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

struct transformer_shape {
  std::size_t layers = 0;      //!< l
  std::size_t hidden = 0;      //!< h
  std::size_t ffn_hidden = 0;  //!< f
  std::size_t heads = 0;       //!< a, query heads
  std::size_t kv_heads = 0;    //!< g; equal to heads without grouped-query attention
  std::size_t vocabulary = 0;  //!< V
  bool gated_mlp = true;       //!< SwiGLU's three matrices (Llama) rather than two (GPT)
  bool tied_embeddings = false;
  //! d, a head's width, where heads × d is not the hidden size (Qwen3's, Gemma's); 0: hidden / heads.
  std::size_t head_size = 0;
  //! A mixture of experts: E routed experts (0: a dense model), top_k of them per token, each an MLP of width
  //! moe_ffn_hidden (0: ffn_hidden), shared_experts more of that width that every token runs, in every
  //! moe_layer_frequency-th layer counting from the first after first_dense_layers dense ones (DeepSeek-V3's
  //! first_k_dense_replace, Megatron-LM's --moe-layer-freq list that starts with zeros); the others keep the
  //! dense MLP of width ffn_hidden.
  std::size_t experts = 0, top_k = 0, moe_ffn_hidden = 0, shared_experts = 0, moe_layer_frequency = 1;
  std::size_t first_dense_layers = 0;
  //! Sliding-window attention (Mistral's, Gemma's, GPT-OSS's): a query sees only the last sliding_window
  //! positions (0: every position before it), in every layer but each full_attention_frequency-th (Megatron-LM's
  //! --window-attn-skip-freq: 2 alternates windowed and full layers, as GPT-OSS does; 0: every layer windowed).
  std::size_t sliding_window = 0, full_attention_frequency = 0;
  //! Multi-head latent attention (DeepSeek-V2's and V3's, Kimi K2's; 0: standard attention): keys and values
  //! projected down to kv_lora_rank values a token and up again per head, queries likewise through q_lora_rank
  //! (0: straight from hidden); each query and key head head_dim wide plus rope_head_dim rotary positions (the
  //! keys' computed once from hidden and shared by every head), each value head v_head_dim wide (0: head_dim).
  std::size_t kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0, v_head_dim = 0;
  //! Multi-token prediction (DeepSeek-V3's, Megatron-LM's --mtp-num-layers; 0: none): that many modules after the
  //! last layer, each predicting one token further. A module joins the next token's embedding and the hidden
  //! state (two norms, a 2h → h projection), runs one layer of the model's last layer's kind and a final norm,
  //! then the shared output layer and a loss again. Training runs them; a forward pass for serving does not.
  std::size_t mtp_layers = 0;

  [[nodiscard]] bool moe() const noexcept { return experts > 0; }
  [[nodiscard]] bool mla() const noexcept { return kv_lora_rank > 0; }
  //! An expert's MLP width.
  [[nodiscard]] double expert_ffn() const noexcept {
    return static_cast<double>(moe_ffn_hidden ? moe_ffn_hidden : ffn_hidden);
  }
  //! The shared experts' width together: one dense MLP that every token of an MoE layer runs (0: none).
  [[nodiscard]] double shared_ffn() const noexcept { return static_cast<double>(shared_experts) * expert_ffn(); }
  //! The width of an MLP's first GEMM for an inner width f: gated, the gate and the up projection side by side.
  [[nodiscard]] double up_width(double f) const noexcept { return (gated_mlp ? 2.0 : 1.0) * f; }

  [[nodiscard]] double head_dim() const noexcept {
    return head_size ? static_cast<double>(head_size) : static_cast<double>(hidden) / static_cast<double>(heads);
  }
  //! A query's (and a key's) width per head, and a value's: head_dim for both unless latent attention says.
  [[nodiscard]] double query_key_dim() const noexcept { return head_dim() + static_cast<double>(rope_head_dim); }
  [[nodiscard]] double value_dim() const noexcept { return v_head_dim ? static_cast<double>(v_head_dim) : head_dim(); }
  friend bool operator==(const transformer_shape&, const transformer_shape&) = default;
};

//! Throws invalid_input naming the field.
inline void validate(const transformer_shape& m) {
  // Messages that format a number are built only on a failure (the lambdas): the step model checks the shape on
  // every pricing, and a calibration or a layout search prices hundreds of thousands of times.
  trinity::detail::require(m.layers >= 1, "layers", "must be at least 1");
  trinity::detail::require(m.hidden >= 1, "hidden", "must be at least 1");
  trinity::detail::require(m.ffn_hidden >= 1, "ffn_hidden", "must be at least 1");
  trinity::detail::require(m.heads >= 1 && (m.head_size > 0 || m.hidden % m.heads == 0), "heads", [&] {
    return "must divide hidden (" + std::to_string(m.hidden) + ") into whole heads, or give head_dim (a head's width)";
  });
  trinity::detail::require(m.kv_heads >= 1 && m.heads % m.kv_heads == 0, "kv_heads", [&] {
    return "must divide heads (" + std::to_string(m.heads) + "): each KV head serves whole query heads";
  });
  trinity::detail::require(m.vocabulary >= 1, "vocabulary", "must be at least 1");
  trinity::detail::require(m.mtp_layers <= m.layers, "mtp_layers", [&] {
    return "must be at most the " + std::to_string(m.layers) +
           " layers: each module predicts one token further (DeepSeek-V3 trains 1; 0: none)";
  });
  if (!m.mla()) {
    for (const auto& [value, key] :
         {std::pair{m.q_lora_rank, "q_lora_rank"}, std::pair{m.rope_head_dim, "rope_head_dim"},
          std::pair{m.v_head_dim, "v_head_dim"}})
      trinity::detail::require(value == 0, key,
                               "describes multi-head latent attention; give kv_lora_rank too, or leave it out");
  } else {
    trinity::detail::require(m.kv_heads == m.heads, "kv_heads", [&] {
      return "must equal heads (" + std::to_string(m.heads) +
             ") under latent attention: every head has its own keys and values, up-projected from the shared latent";
    });
  }
  if (m.sliding_window == 0)
    trinity::detail::require(m.full_attention_frequency == 0, "full_attention_frequency",
                             "describes sliding-window attention; give sliding_window too, or leave it out");
  else
    trinity::detail::require(m.full_attention_frequency != 1 && m.full_attention_frequency <= m.layers,
                             "full_attention_frequency", [&] {
                               return "must be 0 (every layer windowed) or from 2 to the " + std::to_string(m.layers) +
                                      " layers (every n-th layer full); 1 would leave no layer windowed: drop "
                                      "sliding_window instead";
                             });
  if (!m.moe()) {
    for (const auto& [value, key] : {std::pair{m.top_k, "top_k"}, std::pair{m.moe_ffn_hidden, "moe_ffn_hidden"},
                                     std::pair{m.shared_experts, "shared_experts"}})
      trinity::detail::require(value == 0, key, "describes a mixture of experts; give experts too, or leave it out");
    trinity::detail::require(m.moe_layer_frequency == 1, "moe_layer_frequency",
                             "describes a mixture of experts; give experts too, or leave it out");
    trinity::detail::require(m.first_dense_layers == 0, "first_dense_layers",
                             "describes a mixture of experts; give experts too, or leave it out");
    return;
  }
  trinity::detail::require(m.experts >= 2, "experts", "a mixture needs at least 2 experts (0: a dense model)");
  trinity::detail::require(m.top_k >= 1 && m.top_k <= m.experts, "top_k", [&] {
    return "must be from 1 to the " + std::to_string(m.experts) + " experts: the experts a token runs";
  });
  trinity::detail::require(m.moe_layer_frequency >= 1 && m.moe_layer_frequency <= m.layers, "moe_layer_frequency", [&] {
    return "must be from 1 (every layer) to the " + std::to_string(m.layers) + " layers";
  });
  trinity::detail::require(m.first_dense_layers < m.layers, "first_dense_layers", [&] {
    return "must leave a mixture layer: fewer than the " + std::to_string(m.layers) +
           " layers (0: the first layer is a mixture)";
  });
}

//! Layers whose MLP is a mixture of experts: after the first_dense_layers, every moe_layer_frequency-th,
//! counting from the first of the rest.
inline std::size_t moe_layer_count(const transformer_shape& m) {
  if (!m.moe()) return 0;
  const std::size_t rest = m.layers - m.first_dense_layers;
  return (rest + m.moe_layer_frequency - 1) / m.moe_layer_frequency;
}

//! Whether the last layer's MLP is a mixture of experts: a multi-token prediction module runs a layer of its kind
//! (Megatron-Core builds it from the decoder's last layer's spec).
inline bool last_layer_moe(const transformer_shape& m) {
  return m.moe() && (m.layers - 1 - m.first_dense_layers) % m.moe_layer_frequency == 0;
}

//! Layers whose attention sees a window: all of them, or all but every full_attention_frequency-th.
inline std::size_t windowed_layer_count(const transformer_shape& m) {
  if (m.sliding_window == 0) return 0;
  return m.layers - (m.full_attention_frequency ? m.layers / m.full_attention_frequency : 0);
}

//! Keys a query attends to on average under a causal mask over `sequence` positions with a window of `window`
//! (0: none): sequence/2 in full (the kernels' own count), and windowed the pairs s·w − w²/2 over the s queries
//! (the first w queries see fewer than w), which meets sequence/2 at w = s.
inline double causal_keys_per_query(double sequence, double window) {
  if (window <= 0 || window >= sequence) return sequence / 2.0;
  return window - window * window / (2.0 * sequence);
}

//! Weights of one layer's attention: the query, key, value and output projections.
inline double attention_parameters(const transformer_shape& m) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  if (m.mla()) {
    // Queries (down and up, or straight), the keys' and values' latent and shared rotary part, their
    // up-projection, the output; the two latent norms (q_lora_rank + kv_lora_rank weights) are left out.
    const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
    const double queries = qr > 0 ? h * qr + qr * a * m.query_key_dim() : h * a * m.query_key_dim();
    return queries + h * (kvr + static_cast<double>(m.rope_head_dim)) + kvr * a * (m.head_dim() + m.value_dim()) +
           a * m.value_dim() * h;
  }
  const double hq = a * m.head_dim(), kv = static_cast<double>(m.kv_heads) * m.head_dim();
  return h * (hq + 2.0 * kv) + hq * h;
}

//! The attention core's width a token: heads × the mean of the query-key and value widths (heads × head_dim
//! without latent attention), so 4 × it FLOPs a query-key pair (QKᵀ and the weighted sum of V).
inline double attention_core_width(const transformer_shape& m) {
  return static_cast<double>(m.heads) * (m.query_key_dim() + m.value_dim()) / 2.0;
}

//! Weights of one MLP of width f: SwiGLU's three matrices, or two.
inline double mlp_parameters(const transformer_shape& m, double f) {
  return (m.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m.hidden) * f;
}

//! Weights of one routed expert.
inline double expert_parameters(const transformer_shape& m) { return mlp_parameters(m, m.expert_ffn()); }

//! Weights of one dense layer (attention, MLP, its two norms).
inline double layer_parameters(const transformer_shape& m) {
  const double h = static_cast<double>(m.hidden);
  return attention_parameters(m) + mlp_parameters(m, static_cast<double>(m.ffn_hidden)) + 2.0 * h;
}

//! Weights of one mixture-of-experts layer: attention, the router, `experts` of the routed experts and every
//! shared one, the norms. All of them with experts = m.experts; a token's share with experts = m.top_k.
inline double moe_layer_parameters(const transformer_shape& m, std::size_t experts) {
  const double h = static_cast<double>(m.hidden);
  return attention_parameters(m) + h * static_cast<double>(m.experts) +
         static_cast<double>(experts + m.shared_experts) * expert_parameters(m) + 2.0 * h;
}
inline double moe_layer_parameters(const transformer_shape& m) { return moe_layer_parameters(m, m.experts); }

//! Weights of the layers, every expert counted (`active`: only the top_k experts a token runs).
inline double layers_parameters(const transformer_shape& m, bool active = false) {
  const double moe = static_cast<double>(moe_layer_count(m));
  const double sparse = moe > 0 ? moe * moe_layer_parameters(m, active ? m.top_k : m.experts) : 0.0;
  return (static_cast<double>(m.layers) - moe) * layer_parameters(m) + sparse;
}

//! Weights of a multi-token prediction module's layer, of the last layer's kind: every expert counted (`active`: a
//! token's top_k).
inline double mtp_layer_parameters(const transformer_shape& m, bool active = false) {
  return last_layer_moe(m) ? moe_layer_parameters(m, active ? m.top_k : m.experts) : layer_parameters(m);
}

//! Weights of one multi-token prediction module of its own (the embedding and output layer it runs are the
//! model's): its layer, the 2h → h projection and three norms (the embedding's, the hidden state's and its final
//! one).
inline double mtp_module_parameters(const transformer_shape& m, bool active = false) {
  const double h = static_cast<double>(m.hidden);
  return mtp_layer_parameters(m, active) + 2.0 * h * h + 3.0 * h;
}

//! Every weight: the layers, the embedding (twice when untied), the final norm and any prediction modules.
inline double parameters(const transformer_shape& m) {
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocabulary);
  return layers_parameters(m) + (m.tied_embeddings ? 1.0 : 2.0) * v * h + h +
         static_cast<double>(m.mtp_layers) * mtp_module_parameters(m);
}

//! The weights one token runs through in training: a dense model's every weight; a mixture's top_k experts of
//! each layer (and of each prediction module).
inline double active_parameters(const transformer_shape& m) {
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocabulary);
  return layers_parameters(m, true) + (m.tied_embeddings ? 1.0 : 2.0) * v * h + h +
         static_cast<double>(m.mtp_layers) * mtp_module_parameters(m, true);
}

//! Forward FLOPs of `tokens` new tokens after `past` cached ones, causal: token i attends to past + i positions.
//! The logits of every token are counted (prefill computes them only for the last; the difference is 2·V·h per
//! token, a share 1/(l·(12h/V + …)) of the total, under 1% for Llama-3-70B). Prediction modules do not run.
inline flops forward_flops(const transformer_shape& m, double tokens, double past = 0) {
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocabulary);
  const double hq = attention_core_width(m);
  const double weights = layers_parameters(m, true) - 2.0 * h * static_cast<double>(m.layers) + v * h;  // matmuls'
  const double attended = tokens * past + tokens * (tokens + 1.0) / 2.0;  // Σ_{i=1..tokens} (past + i)
  return flops{2.0 * weights * tokens + 4.0 * hq * static_cast<double>(m.layers) * attended};
}

//! How a training step treats activations.
enum class recomputation { none, selective, full };

inline const char* to_string(recomputation r) {
  return r == recomputation::none ? "none" : r == recomputation::selective ? "selective" : "full";
}

//! FLOPs of one training iteration of `batch` sequences of `sequence` tokens (Narayanan et al.'s convention:
//! full s² attention, logits in 3 passes; the layers in 4 passes with full recomputation, 3 otherwise, and
//! 3 plus the attention scores again with selective recomputation). The count, an MFU's numerator, keeps the full
//! s² for windowed layers too, as that convention does; the step model prices a window's attention as it runs.
//! A prediction module counts as one more layer, its projection and the logits again.
inline flops training_flops(const transformer_shape& m, double batch, double sequence, recomputation r) {
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocabulary),
               mtp = static_cast<double>(m.mtp_layers), l = static_cast<double>(m.layers);
  const double hq = attention_core_width(m);
  const double tokens = batch * sequence;
  // The layers' GEMM weights, less their two norms each, the modules' layers among them; a module's projection
  // (2h·h) is outside its layer, so it runs in 3 passes, as the logits do.
  const double join = mtp * 2.0 * h * h;
  const double linear = layers_parameters(m, true) - 2.0 * l * h + mtp * (mtp_layer_parameters(m, true) - 2.0 * h);
  const double matmul = 2.0 * linear * tokens;                        // one forward pass, active
  const double attention = 4.0 * hq * (l + mtp) * sequence * tokens;  // one forward pass, s² per sequence
  const double heads = 2.0 * (v * h * (1.0 + mtp) + join) * tokens;   // the logits, and the modules' projections
  const double passes = r == recomputation::full ? 4.0 : 3.0;
  return flops{passes * (matmul + attention) + (r == recomputation::selective ? attention : 0.0) + 3.0 * heads};
}

//! Activation bytes one layer keeps for the backward pass, per micro-batch of `batch` sequences of `sequence`
//! tokens, under t-way tensor parallelism (Korthikanti et al. 2022, Table 2; 16-bit activations, dropout masks
//! counted as in the paper).
inline bytes activation_bytes_per_layer(const transformer_shape& m, double sequence, double batch, double t,
                                        bool sequence_parallel, recomputation r) {
  trinity::detail::require(t >= 1, "tensor_parallel", "must be at least 1");
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  const double sbh = sequence * batch * h;
  if (r == recomputation::full) return bytes{2.0 * sbh / (sequence_parallel ? t : 1.0)};
  const double scores = r == recomputation::selective ? 0.0 : 5.0 * a * sequence / (h * t);
  return bytes{sbh * ((sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t) + scores)};
}

//! KV-cache bytes per token: keys and values of every layer's KV heads.
inline bytes kv_bytes_per_token(const transformer_shape& m, double bytes_per_value) {
  return bytes{2.0 * static_cast<double>(m.layers) * static_cast<double>(m.kv_heads) * m.head_dim() * bytes_per_value};
}

//! The pipeline bubble as a share of the ideal step: (p − 1)/(m·v) for p stages, m micro-batches per step and
//! v model chunks per device (v = 1: plain 1F1B).
inline double pipeline_bubble(std::size_t p, std::size_t micro_batches, std::size_t v = 1) {
  trinity::detail::require(p >= 1, "pipeline_parallel", "must be at least 1");
  trinity::detail::require(micro_batches >= 1, "micro_batches", "must be at least 1");
  trinity::detail::require(v >= 1, "virtual_stages", "must be at least 1");
  return static_cast<double>(p - 1) / (static_cast<double>(micro_batches) * static_cast<double>(v));
}

//! Prefill FLOPs of each block of `block_tokens` tokens at depths 0 .. blocks - 1, the blocks before it cached:
//! what a prefix cache saves per block it serves, at each depth.
inline std::vector<flops> prefill_by_block_depth(const transformer_shape& m, std::size_t blocks,
                                                 std::size_t block_tokens) {
  const double bt = static_cast<double>(block_tokens);
  std::vector<flops> out(blocks);
  for (std::size_t d = 0; d < blocks; ++d) out[d] = forward_flops(m, bt, static_cast<double>(d) * bt);
  return out;
}

namespace shapes {
//! Llama-3-70B (Meta's config.json: 80 layers, hidden 8192, FFN 28672, 64 heads, 8 KV heads, vocabulary 128256,
//! SwiGLU, untied output).
inline constexpr transformer_shape llama3_70b{80, 8192, 28672, 64, 8, 128256, true, false};
//! Llama-3-8B (config.json: 32 layers, hidden 4096, FFN 14336, 32 heads, 8 KV heads, vocabulary 128256).
inline constexpr transformer_shape llama3_8b{32, 4096, 14336, 32, 8, 128256, true, false};
//! GPT-3 175B (Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads; FFN 4·d_model; vocabulary
//! 50257 as GPT-2's BPE), the shape of Narayanan et al.'s and Korthikanti et al.'s largest comparisons.
inline constexpr transformer_shape gpt3_175b{96, 12288, 4 * 12288, 96, 96, 50257, false, false};
}  // namespace shapes

}  // namespace trinity::model
