#pragma once
//! \file
//! The fields several workload readers share (workloads/*.hpp reads each kind): a transformer's shape, named
//! or spelt out, and the parameter count it determines; a power-law hit-rate curve; a precision's name and a
//! loss kernel's; the check against the system that names a field as the file spells it. And the request trace
//! a diffusion workload may bring in place of its hit-rate curve (io/diffusion_trace.hpp replays it).

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::io {

//! A request trace to replay in place of a diffusion workload's hit-rate curve.
struct diffusion_trace {
  std::string requests;             //!< CSV of timestamp,row
  std::string embeddings;           //!< .fvecs
  std::vector<bytes> capacities;    //!< where to replay it (at least two)
  bool measure_reuse_depth = true;  //!< false when the workload gave its reuse_depth
};

namespace detail {

inline constexpr key hit_rate_keys[] = {{"family"}, {"kappa_per_gb", required}, {"gamma", required}};
inline constexpr std::string_view shape_keys[] = {"layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocabulary"};

inline std::string precision_name(const object& o, std::string_view k) {
  return choice(o.at(k), o.path(k), plan::precisions);
}

//! The kernel that computes the loss, by Megatron-Core's names for it (model/cross_entropy.hpp).
inline model::loss_kernel loss_kernel_name(const object& o, std::string_view k) {
  return model::loss_kernel_named(choice(o.at(k), o.path(k), model::loss_kernel_names));
}

//! Objectives (a time at most), each read where the object gives it and otherwise none, listed as assumed by its
//! path; a refused one is gathered in `each`.
inline void read_objectives(const object& o, std::initializer_list<std::pair<const char*, seconds*>> objectives,
                            plan::assumptions& assumed, field_problems& each) {
  for (const auto& [key, slo] : objectives) {
    if (o.has(key))
      each([&o, key = key, slo = slo] { *slo = o.quantity<seconds>(key); });
    else
      plan::assume(assumed, o.path(key), "none (no objective)");
  }
}

// Failures of plan::validate name "workload.<field>"; in a workload file the field is spelt without it.
template <class W>
W validated(W w, const plan::system& s) {
  try {
    validate(w, s);  // by argument-dependent lookup: the plan:: overload of W, declared with W
  } catch (const invalid_input& e) {
    auto problems = problems_of(e);
    for (auto& p : problems)
      if (p.field.starts_with("workload.")) p.field.erase(0, 9);
    fail_together(std::move(problems));
  }
  return w;
}

// A power-law hit-rate curve in bytes: {"family": "power-law", "kappa_per_gb": k, "gamma": g}.
inline model::power_law read_power_law(const object& o, const char* what) {
  const object h(o.at("hit_rate"), "hit_rate", hit_rate_keys, what);
  if (h.has("family")) {
    static constexpr std::string_view families[] = {"power-law"};
    (void)choice(h.at("family"), h.path("family"), families);
  }
  return {per_byte{h.number("kappa_per_gb") / 1e9}, h.number("gamma")};
}

// A spelt-out shape's optional keys beyond its widths, which the training readers (a training workload, a
// published run) list and read_shape reads: the MLP's gating, a head's width, an output layer tied to the embedding,
// sliding windows, latent attention, the experts and multi-token prediction. The serving readers list none of the
// last four kinds, so they refuse them as unknown; a named model refuses every one of them beside its name.
inline constexpr key optional_shape_keys[] = {
    {"gated_mlp"},    {"tied_embeddings"}, {"head_dim"},       {"sliding_window"},      {"full_attention_frequency"},
    {"kv_lora_rank"}, {"q_lora_rank"},     {"rope_head_dim"},  {"v_head_dim"},          {"experts"},
    {"top_k"},        {"moe_ffn_hidden"},  {"shared_experts"}, {"moe_layer_frequency"}, {"first_dense_layers"},
    {"mtp_layers"}};

//! A mixture of experts' routing: the busiest expert-parallel rank's tokens over the mean (1: balanced, as
//! benchmark runs force it) and the cap on an expert's tokens over its even share (0: none, dropless).
struct expert_routing {
  double imbalance = 1, capacity_factor = 0;
};

//! The routing `o` gives, each key checked and named at its path; what it leaves out is assumed (balanced,
//! dropless) and noted in `assumed` where given. A dense model refuses both keys.
inline expert_routing read_routing(const object& o, const model::transformer_shape& m,
                                   plan::assumptions* assumed = nullptr) {
  expert_routing r;
  if (!m.moe()) {
    for (const char* k : {"capacity_factor", "expert_imbalance"})
      if (o.has(k)) fail(o.path(k), "describes a mixture of experts' routing; the model has no experts");
    return r;
  }
  if (assumed)
    o.get("expert_imbalance", r.imbalance, *assumed);
  else
    o.get("expert_imbalance", r.imbalance);
  if (!(r.imbalance >= 1 && r.imbalance <= static_cast<double>(m.experts)))
    fail(o.path("expert_imbalance"), "must be from 1 (balanced) to the " + std::to_string(m.experts) +
                                         " experts: the busiest expert-parallel rank's tokens over the mean");
  if (!o.has("capacity_factor")) {
    if (assumed) plan::assume(*assumed, o.path("capacity_factor"), "none (dropless)");
    return r;
  }
  r.capacity_factor = o.number("capacity_factor");
  if (!(r.capacity_factor >= 1))
    fail(o.path("capacity_factor"),
         "must be at least 1: an expert's tokens over its even share (leave it out for dropless routing)");
  return r;
}

// A mixture of experts' keys, where the object has them (a reader whose keys leave them out refuses them as
// unknown): experts, top_k (required with experts), moe_ffn_hidden, shared_experts, moe_layer_frequency,
// first_dense_layers.
inline constexpr std::string_view expert_keys[] = {
    "experts", "top_k", "moe_ffn_hidden", "shared_experts", "moe_layer_frequency", "first_dense_layers"};
inline void read_experts(const object& o, model::transformer_shape& m, plan::assumptions* assumed) {
  if (!o.has("experts")) {
    for (const auto k : expert_keys)
      if (o.has(k)) fail(o.path(k), "describes a mixture of experts; give experts (how many) too, or leave it out");
    return;
  }
  m.experts = o.count("experts", 100'000);
  if (!o.has("top_k")) fail(o.path("top_k"), "missing; a mixture of experts needs the experts a token runs");
  m.top_k = o.count("top_k", 100'000);
  if (o.has("moe_ffn_hidden"))
    m.moe_ffn_hidden = o.count("moe_ffn_hidden", 1'000'000, 1);
  else if (assumed)
    plan::assume(*assumed, o.path("moe_ffn_hidden"), m.ffn_hidden);  // each expert as wide as the dense MLP
  if (o.has("shared_experts"))
    m.shared_experts = o.count("shared_experts", 1'000);
  else if (assumed)
    plan::assume(*assumed, o.path("shared_experts"), 0);
  if (o.has("moe_layer_frequency"))
    m.moe_layer_frequency = o.count("moe_layer_frequency", 100'000);
  else if (assumed)
    plan::assume(*assumed, o.path("moe_layer_frequency"), 1);  // every layer a mixture
  if (o.has("first_dense_layers"))
    m.first_dense_layers = o.count("first_dense_layers", 100'000);
  else if (assumed)
    plan::assume(*assumed, o.path("first_dense_layers"), 0);  // the first layer a mixture too
}

// Multi-head latent attention's keys, where the object has them (only the training readers list them: the
// serving model's KV cache is not a latent one): kv_lora_rank turns it on; q_lora_rank, rope_head_dim and
// v_head_dim default to 0, 0 and head_dim.
inline void read_latent_attention(const object& o, model::transformer_shape& m, plan::assumptions* assumed) {
  static constexpr std::string_view rest[] = {"q_lora_rank", "rope_head_dim", "v_head_dim"};
  if (!o.has("kv_lora_rank")) {
    for (const auto k : rest)
      if (o.has(k)) fail(o.path(k), "describes multi-head latent attention; give kv_lora_rank too, or leave it out");
    return;
  }
  m.kv_lora_rank = o.count("kv_lora_rank", 1'000'000);
  if (m.kv_lora_rank == 0) fail(o.path("kv_lora_rank"), "must be at least 1 (leave it out for standard attention)");
  std::size_t* fields[] = {&m.q_lora_rank, &m.rope_head_dim, &m.v_head_dim};
  for (std::size_t i = 0; i < 3; ++i) {
    if (o.has(rest[i]))
      *fields[i] = o.count(rest[i], 1'000'000, i == 2 ? 1 : 0);  // v_head_dim 0 would read as head_dim
    else if (assumed)
      plan::assume(*assumed, o.path(rest[i]), i == 2 ? static_cast<std::size_t>(m.head_dim()) : 0);
  }
}

// "\"llama2-7b\", \"llama2-13b\", ... or \"gpt3-175b\"": the named shapes, for a refusal.
inline std::string named_models() {
  std::string out;
  const auto names = model::named_shape_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "\"" : i + 1 == names.size() ? " or \"" : ", \"") + std::string(names[i]) + "\"";
  return out;
}

// A model named (its published shape, model/named_shapes.hpp) or spelt out, one of the two. What a spelt-out
// shape leaves to its defaults (kv_heads, gated_mlp) goes to `assumed` when given.
inline model::transformer_shape read_shape(const object& o, plan::assumptions* assumed = nullptr) {
  bool any = false;
  for (auto k : shape_keys) any |= o.has(k);
  if (o.has("model") == any)
    fail("model", "name a model (" + named_models() +
                      ") or give its shape (layers, hidden, ffn_hidden, heads, "
                      "kv_heads, vocabulary), one of the two");
  if (o.has("model")) {
    const auto names = model::named_shape_names();
    const auto m = choice(o.at("model"), "model", names);
    // A named model fixes these too: its gating, head width, window, latent attention and experts.
    for (const auto& k : optional_shape_keys)
      if (o.has(k.name))
        fail(std::string(k.name), "is part of the named model's shape; leave it out or spell the shape out");
    return model::find_named_shape(m)->shape;
  }
  model::transformer_shape m;
  m.layers = o.count("layers");
  m.hidden = o.count("hidden");
  m.ffn_hidden = o.count("ffn_hidden");
  m.heads = o.count("heads");
  m.kv_heads = o.has("kv_heads") ? o.count("kv_heads") : m.heads;
  m.vocabulary = o.count("vocabulary");
  if (o.has("head_dim")) m.head_size = o.count("head_dim", 4096, 1);
  // Only the training readers list these (the serving readers refuse them as unknown: a window bounds the KV
  // cache, which the serving model does not count).
  if (o.has("sliding_window")) m.sliding_window = o.count("sliding_window", 10'000'000, 1);
  if (o.has("full_attention_frequency"))
    m.full_attention_frequency = o.count("full_attention_frequency", 100'000);
  else if (assumed && m.sliding_window > 0)
    plan::assume(*assumed, o.path("full_attention_frequency"), 0);  // every layer windowed
  read_latent_attention(o, m, assumed);
  read_experts(o, m, assumed);
  // Absent, the model has none, as absent experts make it dense: nothing is assumed.
  if (o.has("mtp_layers")) m.mtp_layers = o.count("mtp_layers", 1'000);
  // An output layer that shares the embedding's weights, as GPT-2's, Megatron's GPT and Llama 3.2's do, holds V·h
  // fewer of them (on a pipeline the last stage keeps a copy: model::embedding_all_reduce_bytes).
  if (assumed) {
    if (!o.has("kv_heads")) plan::assume(*assumed, o.path("kv_heads"), m.kv_heads);
    o.get("gated_mlp", m.gated_mlp, *assumed);
    o.get("tied_embeddings", m.tied_embeddings, *assumed);
    if (!o.has("head_dim") && m.heads > 0) plan::assume(*assumed, o.path("head_dim"), m.hidden / m.heads);
  } else {
    o.get("gated_mlp", m.gated_mlp);
    o.get("tied_embeddings", m.tied_embeddings);
  }
  model::validate(m);  // names the key, which is the JSON field here
  return m;
}

// Ψ from the shape, which determines it: a `parameters` given beside a shape is only a check, and one more than
// 1% off is refused, so the data-parallel planner (which reads Ψ) and the layout model (which reads the shape)
// cannot price two different models.
inline double shape_parameters(const object& o, const model::transformer_shape& m) {
  const double derived = model::parameters(m);
  if (!o.has("parameters")) return derived;
  const double given = o.number("parameters");
  if (!(std::abs(given - derived) <= 0.01 * derived))
    fail("parameters", units::detail::format_number(given) + " differs by " +
                           units::detail::format_number(100.0 * (given - derived) / derived) + "% from the shape's " +
                           units::detail::format_number(derived) +
                           " (its embeddings, attention, MLP and norms). Fix: leave parameters out "
                           "(the shape determines it), or correct the shape");
  return derived;
}

}  // namespace detail

}  // namespace trinity::io
