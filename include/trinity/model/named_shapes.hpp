#pragma once
//! \file
//! Published transformer shapes by name, each with its source: what a
//! workload's `"model": "llama2-70b"` fills in, so a user pricing a known
//! model types its name, not six numbers that may disagree with it.
//!
//!   if (const auto* m = model::find_named_shape("gpt3-175b")) price(m->shape);
//!
//! Decoder-only models, dense and mixtures of experts (Mixtral, Qwen3's MoE): a
//! mixture's shape carries its experts, which the training step model prices
//! and the serving model refuses.

#include <span>
#include <string_view>
#include <vector>

#include <trinity/model/transformer.hpp>

namespace trinity::model {

struct named_shape {
  std::string_view name;
  transformer_shape shape;
  std::string_view source;
  //! The parameter count its publisher states: the shape's own count must land within 1% of it (a test holds it).
  double published_parameters;
};

namespace shapes {
// Layers, hidden, FFN, heads, KV heads, vocabulary, gated MLP, tied embeddings; sources in the table below.
inline constexpr transformer_shape llama2_7b{32, 4096, 11008, 32, 32, 32000, true, false};
inline constexpr transformer_shape llama2_13b{40, 5120, 13824, 40, 40, 32000, true, false};
inline constexpr transformer_shape llama2_70b{80, 8192, 28672, 64, 8, 32000, true, false};
inline constexpr transformer_shape llama3_405b{126, 16384, 53248, 128, 8, 128256, true, false};
inline constexpr transformer_shape llama3_2_1b{16, 2048, 8192, 32, 8, 128256, true, true};
inline constexpr transformer_shape llama3_2_3b{28, 3072, 8192, 24, 8, 128256, true, true};
inline constexpr transformer_shape gptj_6b{28, 4096, 16384, 16, 16, 50400, false, false};
// Mixtures of experts, then: head_dim (0: hidden / heads), experts, top_k, moe_ffn_hidden (0: ffn_hidden).
inline constexpr transformer_shape mixtral_8x7b{32, 4096, 14336, 32, 8, 32000, true, false, 0, 8, 2};
inline constexpr transformer_shape mixtral_8x22b{56, 6144, 16384, 48, 8, 32768, true, false, 0, 8, 2};
inline constexpr transformer_shape qwen3_30b_a3b{48, 2048, 6144, 32, 4, 151936, true, false, 128, 128, 8, 768};
inline constexpr transformer_shape qwen3_235b_a22b{94, 4096, 12288, 64, 4, 151936, true, false, 128, 128, 8, 1536};
// Then shared_experts, moe_layer_frequency, first_dense_layers, sliding_window, full_attention_frequency.
inline constexpr transformer_shape gpt_oss_120b{36,  2880, 2880, 64, 8, 201088, true, false, 64,
                                                128, 4,    2880, 0,  1, 0,      128,  2};
// Then kv_lora_rank, q_lora_rank, rope_head_dim, v_head_dim (multi-head latent attention), mtp_layers.
inline constexpr transformer_shape deepseek_v3{61,   7168, 18432, 128, 128, 129280, true, false, 128, 256, 8,
                                               2048, 1,    1,     3,   0,   0,      512,  1536,  64,  128, 1};
}  // namespace shapes

namespace detail {
inline constexpr named_shape named_shapes[] = {
    {"llama2-7b", shapes::llama2_7b,
     "Meta's Llama-2-7b-hf config.json; Touvron et al. 2023, Table 1 (6.74B on the model card)", 6.74e9},
    {"llama2-13b", shapes::llama2_13b, "Meta's Llama-2-13b-hf config.json (13.0B on the model card)", 13.0e9},
    {"llama2-70b", shapes::llama2_70b,
     "Meta's Llama-2-70b-hf config.json; grouped-query attention, 8 KV heads (69.0B on the model card)", 68.98e9},
    {"llama3-8b", shapes::llama3_8b, "Meta's Meta-Llama-3-8B config.json (8.03B on the model card)", 8.03e9},
    {"llama3-70b", shapes::llama3_70b, "Meta's Meta-Llama-3-70B config.json (70.6B on the model card)", 70.6e9},
    {"llama3-405b", shapes::llama3_405b,
     "Llama Team, \"The Llama 3 Herd of Models\" 2024, Table 3 (126 layers, 16,384 wide, FFN 53,248, 128 heads, "
     "8 KV heads, 128K vocabulary; 405B)",
     405e9},
    {"llama3.2-1b", shapes::llama3_2_1b,
     "Meta's Llama-3.2-1B config.json (16 layers, hidden 2,048, FFN 8,192, 32 heads, 8 KV heads, vocabulary "
     "128,256, tie_word_embeddings true); Meta's Llama 3.2 model card (1.23B, shared embeddings)",
     1.23e9},
    {"llama3.2-3b", shapes::llama3_2_3b,
     "Meta's Llama-3.2-3B config.json (28 layers, hidden 3,072, FFN 8,192, 24 heads, 8 KV heads, vocabulary "
     "128,256, tie_word_embeddings true); Meta's Llama 3.2 model card (3.21B, shared embeddings)",
     3.21e9},
    {"gptj-6b", shapes::gptj_6b,
     "EleutherAI's gpt-j-6b config.json (28 layers, n_embd 4,096, 16 heads, FFN 4 x 4,096, vocabulary 50,400, "
     "untied head; 6,053,381,344 parameters on the model card)",
     6.053e9},
    {"gpt3-175b", shapes::gpt3_175b, "Brown et al. 2020, Table 2.1 (96 layers, d_model 12,288, 96 heads; 175B)", 175e9},
    {"mixtral-8x7b", shapes::mixtral_8x7b,
     "Mistral AI's Mixtral-8x7B-v0.1 config.json (32 layers, hidden 4,096, FFN 14,336, 32 heads, 8 KV heads, "
     "vocabulary 32,000, 8 local experts, 2 per token); Jiang et al. 2024, \"Mixtral of Experts\" (46.7B, 12.9B "
     "active)",
     46.7e9},
    {"mixtral-8x22b", shapes::mixtral_8x22b,
     "Mistral AI's Mixtral-8x22B-v0.1 config.json (56 layers, hidden 6,144, FFN 16,384, 48 heads, 8 KV heads, "
     "vocabulary 32,768, 8 experts, 2 per token); Mistral AI's announcement (141B, 39B active)",
     141e9},
    {"qwen3-30b-a3b", shapes::qwen3_30b_a3b,
     "Qwen's Qwen3-30B-A3B config.json (48 layers, hidden 2,048, 32 heads of 128, 4 KV heads, vocabulary "
     "151,936, 128 experts of width 768, 8 per token); Qwen3 Technical Report 2025, Table 2 (30.5B, 3.3B active)",
     30.5e9},
    {"qwen3-235b-a22b", shapes::qwen3_235b_a22b,
     "Qwen's Qwen3-235B-A22B config.json (94 layers, hidden 4,096, 64 heads of 128, 4 KV heads, vocabulary "
     "151,936, 128 experts of width 1,536, 8 per token); Qwen3 Technical Report 2025, Table 2 (235B, 22B active)",
     235e9},
    {"gpt-oss-120b", shapes::gpt_oss_120b,
     "OpenAI's gpt-oss-120b config.json (36 layers, hidden 2,880, 64 heads of 64, 8 KV heads, vocabulary 201,088, "
     "128 experts of width 2,880, 4 per token, a 128-token sliding window in every other layer, the first "
     "windowed); OpenAI's gpt-oss model card 2025, Table 1 (116.83B, 5.13B active; its attention biases and sinks "
     "are left out here)",
     116.83e9},
    {"deepseek-v3", shapes::deepseek_v3,
     "DeepSeek's DeepSeek-V3 config.json (61 layers, the first 3 dense of FFN 18,432, hidden 7,168, 128 heads, "
     "latent attention of kv_lora_rank 512 and q_lora_rank 1,536, heads of 128 plus 64 rotary, values of 128, "
     "vocabulary 129,280, 256 routed experts of width 2,048 and one shared, 8 a token, num_nextn_predict_layers "
     "1); DeepSeek-AI 2024, \"DeepSeek-V3 Technical Report\", §1 and §2.2 (671B, 37B active, and one "
     "multi-token prediction module sharing the embedding and output head); its model card's 685B counts the "
     "module's 14B with a head and embedding of its own (11.6B without)",
     685e9},
};
}  // namespace detail

//! Every named shape, in the order listed.
inline std::span<const named_shape> named_shapes() noexcept { return detail::named_shapes; }

//! The names, for a refusal's "one of ..." and its nearest match.
inline std::vector<std::string_view> named_shape_names() {
  std::vector<std::string_view> out;
  for (const auto& s : detail::named_shapes) out.push_back(s.name);
  return out;
}

//! The shape of that name, or null.
inline const named_shape* find_named_shape(std::string_view name) noexcept {
  for (const auto& s : detail::named_shapes)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace trinity::model
