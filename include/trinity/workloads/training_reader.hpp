#pragma once
//! \file
//! A training workload's JSON reader: a model named or its shape spelt out (or Ψ, L and h alone), the sequence,
//! the batch, the precision, the kernels and stack a shape reads, and the sequence-length buckets; every wrong
//! value in one message. workloads/training.hpp plans what it reads.
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include <trinity/field_problems.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training_stack.hpp>
#include <trinity/plan/workload.hpp>

namespace trinity::io::detail {

inline constexpr key training_own_keys[] = {{"name", required},
                                            {"type"},
                                            {"model"},
                                            {"parameters"},
                                            {"layers"},
                                            {"hidden"},
                                            {"sequence", required},
                                            {"batch"},
                                            {"data_parallel"},
                                            {"precision"},
                                            {"error_budget"},
                                            {"ffn_hidden"},
                                            {"heads"},
                                            {"kv_heads"},
                                            {"vocabulary"},
                                            {"global_batch"},
                                            {"flash_attention"},
                                            {"attention_kernel"},
                                            {"stack"},
                                            {"dropout"},
                                            {"overlap"},
                                            {"cross_entropy"},
                                            {"capacity_factor"},
                                            {"expert_imbalance"},
                                            {"fp8_params"},
                                            {"sequence_mix"}};
inline constexpr auto training_keys = concat(training_own_keys, optional_shape_keys);
inline constexpr key bucket_keys[] = {{"name"}, {"sequence", required}, {"share", required}};
inline constexpr key precision_keys[] = {
    {"parameter", required}, {"gradient", required}, {"optimizer", required}, {"compute"}};

// A mixture's routing (io/workload.hpp's read_routing, which the published runs read too).
inline void read_routing(const object& o, plan::training_workload& w) {
  const auto r = io::detail::read_routing(o, *w.shape, &w.assumed);
  w.expert_imbalance = r.imbalance, w.capacity_factor = r.capacity_factor;
}

// "mixed", "fp8" (Transformer Engine's recipe: the layers' GEMMs in fp8 over mixed precision's states), "fp32",
// or the bytes of each state spelt out.
inline void read_training_precision(const object& o, plan::training_workload& w) {
  if (!o.has("precision")) return plan::assume(w.assumed, "precision", "mixed");
  const auto& p = o.at("precision");
  if (p.is_string()) {
    static constexpr std::string_view named[] = {"mixed", "fp8", "fp32"};
    const auto name = choice(p, "precision", named);
    if (name == "mixed" || name == "fp8")
      w.precision = model::mixed_precision_adam, w.compute_precision = name == "fp8" ? "fp8" : "bf16";
    else
      w.precision = model::fp32_adam, w.compute_precision = "fp32";
    return;
  }
  const object q(p, "precision", precision_keys, "\"mixed\", \"fp8\", \"fp32\" or a precision object");
  w.precision = {q.number("parameter"), q.number("gradient"), q.number("optimizer")};
  if (q.has("compute")) w.compute_precision = precision_name(q, "compute");
}

// Under fp8, whether the GEMM weights are kept in fp8 alone (false unless said); refused for other precisions.
inline void read_fp8_params(const object& o, plan::training_workload& w) {
  if (w.compute_precision == "fp8") return o.get("fp8_params", w.fp8_params, w.assumed);
  if (o.has("fp8_params"))
    fail("fp8_params", "keeps the GEMM weights in fp8, and this workload trains in " + w.compute_precision +
                           "; give \"precision\": \"fp8\", or drop fp8_params");
}

// Keys that only a transformer's shape gives meaning to: refused without one.
// clang-format off
inline constexpr const char* shape_only_keys[] = {
    "gated_mlp", "tied_embeddings", "flash_attention", "attention_kernel", "stack", "dropout", "overlap",
    "cross_entropy", "sequence_mix", "top_k", "moe_ffn_hidden", "shared_experts", "moe_layer_frequency",
    "first_dense_layers", "full_attention_frequency", "q_lora_rank", "rope_head_dim", "v_head_dim", "capacity_factor",
    "expert_imbalance", "mtp_layers", "fp8_params"};
// clang-format on

// The model's size: its transformer's shape (for the parallel step model), named or spelt out, or Ψ, L and h
// alone. Returns whether it has a shape.
inline bool read_model_size(const object& o, plan::training_workload& w) {
  auto& assumed = w.assumed;
  // The transformer's shape, for the parallel step model: named, or heads, ffn_hidden and vocabulary together.
  const bool shaped = o.has("model") || o.has("heads") || o.has("ffn_hidden") || o.has("vocabulary") ||
                      o.has("kv_heads") || o.has("head_dim") || o.has("experts") || o.has("sliding_window") ||
                      o.has("kv_lora_rank");
  if (shaped) {
    if (!o.has("model"))
      for (const char* k : {"heads", "ffn_hidden", "vocabulary"})
        if (!o.has(k))
          fail(k,
               "missing; a transformer's shape needs heads, ffn_hidden and vocabulary (kv_heads "
               "defaults to heads, gated_mlp to true), or name the model (\"model\": \"llama2-7b\")");
    w.shape = read_shape(o, &assumed);
    w.layers = w.shape->layers;
    w.hidden = w.shape->hidden;
    w.parameters = shape_parameters(o, *w.shape);
  } else {
    for (const char* k : shape_only_keys)
      if (o.has(k))
        fail(k,
             "describes a transformer's shape; give heads, ffn_hidden and vocabulary too, or name the "
             "model (\"model\": \"llama2-7b\")");
    for (const char* k : {"parameters", "layers", "hidden"})
      if (!o.has(k))
        fail(k,
             "missing; a training workload without a transformer's shape needs parameters, layers "
             "and hidden (or give the shape, heads, ffn_hidden and vocabulary, which determines "
             "parameters, or name the model: \"model\": \"llama2-7b\")");
    w.parameters = o.number("parameters");
    w.layers = o.count("layers");
    w.hidden = o.count("hidden");
  }
  return shaped;
}

// Shares of the global batch's sequences by length: each bucket a whole number of them, all of them in all.
inline void read_sequence_mix(const object& o, plan::training_workload& w) {
  double total = 0;
  for_each(
      o.at("sequence_mix"), "sequence_mix",
      [&](const json& b, const std::string& at) {
        const object e(b, at, bucket_keys, "a bucket, {\"name\": \"720p\", \"sequence\": 75600, \"share\": 0.2}");
        plan::sequence_bucket x;
        x.name = "bucket " + std::to_string(w.sequence_mix.size());
        e.get("name", x.name);
        x.sequence = e.count("sequence");
        x.share = e.number("share");
        if (!(x.share > 0 && x.share <= 1))
          fail(e.path("share"), "must lie in (0, 1]: the bucket's share of the sequences");
        total += x.share;
        w.sequence_mix.push_back(std::move(x));
      },
      64);
  if (w.sequence_mix.empty()) fail("sequence_mix", "give at least one bucket, or leave sequence_mix out");
  if (std::abs(total - 1.0) > 1e-9)
    fail("sequence_mix", "the shares add up to " + std::to_string(total) + "; they must add up to 1");
}

// The keys only a transformer's shape reads: its kernels, stack, dropout, overlap, loss and routing.
inline void read_shaped_training(const object& o, plan::training_workload& w, const plan::system& s,
                                 field_problems& each) {
  auto& assumed = w.assumed;
  each([&] { o.get("flash_attention", w.flash_attention, assumed); });
  if (o.has("attention_kernel"))
    each([&] { w.attention_kernel = o.text("attention_kernel"); });
  else if (w.flash_attention)
    plan::assume(assumed, "attention_kernel", plan::own_attention_kernel(s));
  if (o.has("stack"))
    each([&] { w.stack = plan::stacks::named(o.text("stack"), o.path("stack")); });
  else
    plan::assume(assumed, "stack", w.stack.name);
  each([&] { o.get("dropout", w.dropout, assumed); });
  each([&] { o.get("overlap", w.overlap, assumed); });
  // The loss's kernel, by Megatron-Core's names for it (cross_entropy_fusion_impl): its own unless given.
  if (o.has("cross_entropy"))
    each([&] { w.cross_entropy = loss_kernel_name(o, "cross_entropy"); });
  else
    plan::assume(assumed, "cross_entropy", std::string(model::to_string(w.cross_entropy)));
  each([&] { read_routing(o, w); });
}

inline plan::training_workload read_training(const json& j, const plan::system& s) {
  const object o(j, "", training_keys, "a training workload");
  plan::training_workload w;
  auto& assumed = w.assumed;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  each([&] { w.sequence = o.count("sequence"); });
  each([&] { o.get("batch", w.batch, assumed); });
  if (o.has("data_parallel"))
    each([&] { w.data_parallel = o.count("data_parallel"); });
  else
    plan::assume(assumed, "data_parallel", s.device.count);  // 0 in the workload: every device
  each([&] { o.get("error_budget", w.error_budget, assumed); });
  bool shaped = false;
  each([&] { shaped = read_model_size(o, w); });
  if (o.has("global_batch"))
    each([&] { w.global_batch = o.count("global_batch"); });
  else if (shaped)
    plan::assume(assumed, "global_batch", w.batch * (w.data_parallel ? w.data_parallel : s.device.count));
  if (shaped) read_shaped_training(o, w, s, each);
  if (o.has("sequence_mix")) each([&] { read_sequence_mix(o, w); });
  each([&] {
    read_training_precision(o, w);
    read_fp8_params(o, w);  // judged against the precision read: not checked when that was refused
  });
  // Checks across fields judge what was read; a field refused above kept its default, which they pass.
  each.raise();
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail
