#pragma once
//! \file
//! A training workload as the planner sees it: a transformer of Ψ parameters
//! in L layers of width h, trained data-parallel on N ranks, each taking a
//! batch of sequences per step, with mixed-precision Adam unless told
//! otherwise, and a budget for the gradient error a codec may add.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/plan/training_stack.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

//! One length a training set's sequences come in (a clip's resolution and frame count, in tokens) and its
//! share of the sequences: what dynamic parallelism plans per bucket.
struct sequence_bucket {
  std::string name;
  std::size_t sequence = 0;  //!< tokens
  double share = 0;          //!< of the global batch's sequences
};

struct training_workload {
  std::string name;
  double parameters = 0;          //!< Ψ
  std::size_t layers = 0;         //!< L
  std::size_t hidden = 0;         //!< h
  std::size_t sequence = 0;       //!< tokens per sequence, s
  std::size_t batch = 1;          //!< sequences per rank per step, b
  std::size_t data_parallel = 0;  //!< N; 0 takes every device of the system
  model::state_bytes precision = model::mixed_precision_adam;
  double error_budget =
      model::default_error_budget;         //!< largest relative error a gradient codec may add, ||x - y|| / ||x||
  std::string compute_precision = "bf16";  //!< the precision the step's matrix multiplies run at (device.rate)
  //! The transformer's shape, where known: what the parallel step model (tensor, pipeline, context
  //! parallelism) needs beyond Ψ, L and h.
  std::optional<model::transformer_shape> shape = std::nullopt;
  std::size_t global_batch = 0;  //!< sequences per step over every replica; 0: batch × the data-parallel ranks
  bool flash_attention = true;   //!< the attention core keeps no s² scores (FlashAttention)
  //! The fused kernel it runs, by name (plan/attention_kernel.hpp: "cudnn", "flash-attention-2"); empty: the
  //! device's own curve
  std::string attention_kernel = {};
  //! The software stack it trains with (plan/training_stack.hpp): its constants, and the band its intervals come
  //! from. The default: Megatron-Core, the stack the step model was fitted on (listed as assumed).
  training_stack stack = stacks::megatron_core();
  bool dropout = false;  //!< GPT's dropouts and their masks; Llama trains without
  //! The data-parallel collectives bucket by bucket under the passes (model/overlap.hpp), where a layout
  //! does not say (its overlap=on|off)
  bool overlap = false;
  //! A mixture of experts' routing: the busiest expert-parallel rank's tokens over the mean, and the capacity
  //! factor that caps them (0: dropless); model::training_job's.
  double expert_imbalance = 1;
  double capacity_factor = 0;
  //! The kernel that computes the loss (model::training_job's cross_entropy): "native" or "te"
  model::loss_kernel cross_entropy = model::loss_kernel::native;
  //! Lengths the sequences come in, with their shares; empty: every sequence is `sequence` tokens.
  std::vector<sequence_bucket> sequence_mix = {};
  //! Under fp8, the GEMM weights kept in fp8 alone, with no 16-bit copy (model::training_job's fp8_params)
  bool fp8_params = false;
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};

  [[nodiscard]] double tokens_per_rank() const noexcept {
    return static_cast<double>(sequence) * static_cast<double>(batch);
  }
  [[nodiscard]] std::size_t ranks(const system& s) const noexcept {
    return data_parallel ? data_parallel : s.device.count;
  }
  //! The micro-batches of `batch` sequences each of `ranks` ranks runs a step, accumulating gradients: the global
  //! batch over the ranks, rounded up (the busiest rank's), or 1 where the workload gives no global batch.
  [[nodiscard]] std::size_t micro_batches(std::size_t ranks) const noexcept {
    if (global_batch == 0 || batch == 0 || ranks == 0) return 1;
    const std::size_t per_pass = batch * ranks;
    return (global_batch + per_pass - 1) / per_pass;
  }
};

//! Throws invalid_input naming the field; checks the ranks against the system.
inline void validate(const training_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  detail::require_positive(w.parameters, "workload.parameters");
  trinity::detail::require(w.layers >= 1, "workload.layers", "must be at least 1");
  trinity::detail::require(w.hidden >= 1, "workload.hidden", "must be at least 1");
  trinity::detail::require(w.sequence >= 1, "workload.sequence", "must be at least 1 token");
  trinity::detail::require(w.batch >= 1, "workload.batch", "must be at least 1 sequence per rank");
  trinity::detail::require(
      w.data_parallel <= s.device.count, "workload.data_parallel",
      std::to_string(w.data_parallel) + " ranks exceed the system's " + std::to_string(s.device.count) + " devices");
  detail::require_positive(w.precision.parameter, "workload.precision.parameter");
  detail::require_positive(w.precision.gradient, "workload.precision.gradient");
  detail::require_non_negative(w.precision.optimizer, "workload.precision.optimizer");
  detail::require_non_negative(w.error_budget, "workload.error_budget");
  detail::require_precision(w.compute_precision, "workload.precision.compute");
  // A kernel measured, on a device it was measured on: the curve itself is cluster_of's to take.
  (void)attention_kernel_curve(s, w.attention_kernel, "workload.attention_kernel");
  require_fused_attention(w.attention_kernel, w.flash_attention, "workload.attention_kernel");
}

namespace presets {

//! The defaults a training preset leaves as they are, listed as a JSON workload's would be; Ψ comes from the
//! shape (model::parameters), as a JSON workload's does. The ranks follow the system (every device), so the
//! command that pairs them adds that one.
inline training_workload with_defaults_noted(training_workload w) {
  assume(w.assumed, "error_budget", w.error_budget);
  assume(w.assumed, "flash_attention", w.flash_attention);
  assume(w.assumed, "dropout", w.dropout);
  assume(w.assumed, "overlap", w.overlap);
  assume(w.assumed, "cross_entropy", std::string(model::to_string(w.cross_entropy)));
  return w;
}

//! Llama-2-7B (Meta's config.json: 32 layers, hidden 4096, FFN 11008, 32 heads and KV heads, vocabulary 32000,
//! SwiGLU), 4 sequences of 4,096 tokens per rank; 1,024 sequences a step for the parallel model (Touvron et
//! al. 2023, Table 1: 4M tokens per batch).
inline training_workload llm_7b() {
  return with_defaults_noted({"llm-7b-train", model::parameters(model::shapes::llama2_7b), 32, 4096, 4096, 4, 0,
                              model::mixed_precision_adam, model::default_error_budget, "bf16",
                              model::shapes::llama2_7b, 1024});
}
//! Llama-2-70B (config.json: 80 layers, hidden 8192, FFN 28672, 64 heads, 8 KV heads, vocabulary 32000,
//! SwiGLU), 1 sequence of 4,096 tokens per rank; 1,024 sequences a step for the parallel model (as above).
inline training_workload llm_70b() {
  return with_defaults_noted({"llm-70b-train", model::parameters(model::shapes::llama2_70b), 80, 8192, 4096, 1, 0,
                              model::mixed_precision_adam, model::default_error_budget, "bf16",
                              model::shapes::llama2_70b, 1024});
}

//! Mixtral-8x7B (Mistral AI's config.json: 32 layers, hidden 4096, FFN 14336, 32 heads, 8 KV heads, vocabulary
//! 32000, 8 experts, 2 a token), 256 sequences of 4,096 tokens a step: NeMo's Mixtral-8x7B pre-training recipe
//! as its performance summary runs it (NeMo Framework 25.04 performance summary: 64 GPUs, GBS 256, sequence
//! 4,096, EP 8). Routing balanced and dropless, as those benchmarks force it.
inline training_workload mixtral_8x7b() {
  auto w = with_defaults_noted({"mixtral-8x7b-train", model::parameters(model::shapes::mixtral_8x7b), 32, 4096, 4096, 1,
                                0, model::mixed_precision_adam, model::default_error_budget, "bf16",
                                model::shapes::mixtral_8x7b, 256});
  assume(w.assumed, "expert_imbalance", w.expert_imbalance);
  assume(w.assumed, "capacity_factor", "none (dropless)");
  return w;
}

inline std::vector<std::string_view> workload_names() {
  return {"llm-7b-train", "llm-70b-train", "mixtral-8x7b-train"};
}
inline std::optional<training_workload> find_workload(std::string_view name) {
  if (name == "llm-7b-train") return llm_7b();
  if (name == "llm-70b-train") return llm_70b();
  if (name == "mixtral-8x7b-train") return mixtral_8x7b();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
