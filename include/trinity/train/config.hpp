#pragma once
//! \file
//! train::config: what the reference trainer runs, each field as trinity-train's flag names it (the flag beside
//! it), and the rules of its recomputation flags. The model, the pipeline split, recomputation, context and tensor
//! parallelism and the experts' block; placement.hpp turns it into a model::parallel_layout and this rank's layers.
//! Refusals name the flag and the fix.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/moe_parameters.hpp>

namespace trinity::train {

struct config {
  std::size_t inputs = 32, width = 256, hidden_layers = 3, outputs = 8;
  std::size_t batch = 64;  // global
  long steps = 20;
  float learning_rate = 1e-3f;
  std::uint64_t seed = 1;
  int stage = 0;
  bool offload = false;
  std::string compress;  // catalog name, stage 0 only
  std::string save_checkpoint, load_checkpoint;
  long inject_nan_step = -1;
  int inject_nan_rank = 0;
  std::size_t pipeline = 1, virtual_stages = 1, micro_batches = 0;  // --pp, --vpp, --micro-batches (0: pp)
  // --chunk-layers: each model chunk's layers in the model's order, pp·vpp counts (chunk c on rank c mod pp), as
  // Megatron-Core's --pipeline-model-parallel-layout places them; empty: an even split.
  std::vector<std::size_t> chunk_layers;
  std::string schedule;    // --schedule: the pipeline schedule by name (model/pipeline_schedule.hpp); empty: 1F1B
  std::size_t tensor = 1;  // --tp
  std::size_t recompute_layers = 0;  // --recompute-layers: blocks of each chunk that keep only their input
  // --recompute-method: what --recompute-layers counts, each chunk's first blocks or the blocks of each group
  model::recompute_method recompute_method = model::recompute_method::block;
  bool recompute_attention = false;  // --recompute-attention: the attention core keeps its input alone
  bool recompute_experts = false;    // --recompute-experts: the experts' block keeps its input alone
  bool recompute_shared = false;     // --recompute-shared-experts: the shared experts keep the block's input alone
  bool sequence_parallel = false;    // --sp
  std::size_t context = 1;           // --cp: ranks that share each sequence's tokens
  std::size_t sequence = 1;  // --sequence: tokens a sample has; above 1 an attention block follows the first layer
  std::size_t heads = 4;     // --heads: the attention block's heads, over the first layer's outputs
  moe_config moe;            // --experts, --top-k, --ep, ...: a mixture-of-experts block after the second layer

  [[nodiscard]] bool attention() const noexcept { return sequence > 1; }
  //! Whether the attention block runs its forward again in the backward: alone (--recompute-attention), or with
  //! its pair under --recompute-layers. Either sends its keys and values around the context ring again.
  [[nodiscard]] bool attention_again() const noexcept {
    return attention() && (recompute_attention || recompute_layers > 0);
  }
  //! Of a chunk of `layers` layers, those whose forward runs again in the backward under --recompute-layers:
  //! the first blocks' (a block is a column/row pair), or under the uniform method every one.
  [[nodiscard]] std::size_t recomputed_layers(std::size_t layers) const noexcept {
    return recompute_layers == 0 ? 0 : uniform() ? layers : 2 * recompute_layers;
  }
  //! Whether --recompute-layers counts the blocks of each checkpointed group (Megatron-Core's uniform method).
  [[nodiscard]] bool uniform() const noexcept { return recompute_method == model::recompute_method::uniform; }
  //! The layers a checkpointed group holds: a block, or under the uniform method --recompute-layers blocks.
  [[nodiscard]] std::size_t group_layers() const noexcept {
    return uniform() && recompute_layers > 0 ? 2 * recompute_layers : 2;
  }
  [[nodiscard]] bool experts() const noexcept { return moe.experts > 0; }
  [[nodiscard]] std::size_t tokens() const noexcept { return batch * sequence; }

  [[nodiscard]] mlp_shape shape() const {
    mlp_shape s;
    s.widths.push_back(inputs);
    for (std::size_t i = 0; i < hidden_layers; ++i) s.widths.push_back(width);
    s.widths.push_back(outputs);
    return s;
  }
};

//! Refuses, naming `fix`, a model chunk of `layers` layers that --recompute-layers cannot split into blocks.
inline void check_recompute_pairs(const config& cfg, std::size_t layers, const std::string& fix) {
  if (cfg.recompute_layers > 0 && layers % 2 != 0)
    throw invalid_input("--recompute-layers",
                        "recomputes blocks of a column and a row layer (a transformer layer's "
                        "MLP), and a chunk of " +
                            std::to_string(layers) + " layers does not pair. Fix: " + fix);
}

//! The recomputation flags against a model chunk of `layers` layers. --recompute-layers: pairs of them, not more
//! than it has (a uniform group may be: it is then the whole chunk); --recompute-method uniform needs a group size.
//! --recompute-attention and --recompute-experts: a block to recompute, and not beside
//! --recompute-layers, which reruns both with their pair; --recompute-shared-experts also not beside
//! --recompute-experts, whose block holds them (Megatron-Core's modules moe and shared_experts do not go together).
//! Each refusal names the flag and the fix.
inline void check_recompute(const config& cfg, std::size_t layers) {
  if (cfg.recompute_attention && !cfg.attention())
    throw invalid_input("--recompute-attention",
                        "recomputes the attention block, and there is none without sequences. Fix: --sequence N "
                        "(above 1), or drop it");
  if (cfg.recompute_experts && !cfg.experts())
    throw invalid_input("--recompute-experts",
                        "recomputes the experts' block, and the run has none. Fix: --experts N, or drop it");
  if (cfg.recompute_experts && cfg.recompute_layers > 0)
    throw invalid_input("--recompute-experts",
                        "full recomputation (--recompute-layers) runs the experts again with their pair already. Fix: "
                        "drop one of them");
  if (cfg.recompute_shared && cfg.moe.shared_experts == 0)
    throw invalid_input("--recompute-shared-experts",
                        "recomputes the shared experts, and the run has none. Fix: --shared-experts N, or drop it");
  if (cfg.recompute_shared && (cfg.recompute_layers > 0 || cfg.recompute_experts))
    throw invalid_input("--recompute-shared-experts",
                        std::string(cfg.recompute_experts ? "the experts' block (--recompute-experts)"
                                                          : "full recomputation (--recompute-layers)") +
                            " runs the shared experts again already. Fix: drop one of them");
  if (cfg.recompute_attention && cfg.recompute_layers > 0)
    throw invalid_input("--recompute-attention",
                        "full recomputation (--recompute-layers) runs the attention block again with its pair "
                        "already; Megatron-Core takes one granularity. Fix: drop one of them");
  if (cfg.uniform() && cfg.recompute_layers == 0)
    throw invalid_input("--recompute-method",
                        "uniform recomputes every block in groups of --recompute-layers, and none is given. Fix: "
                        "--recompute-layers N (the blocks a group holds), or drop it");
  const std::size_t again = cfg.recompute_layers;
  if (again == 0) return;
  check_recompute_pairs(cfg, layers, "--layers so that (layers + 1) / (pp * vpp) is even");
  if (again > layers / 2 && !cfg.uniform())  // a uniform group past the chunk is the chunk (Megatron-Core's)
    throw invalid_input("--recompute-layers",
                        std::to_string(again) + " blocks recomputed, and a chunk has " + std::to_string(layers / 2) +
                            " (a column/row pair each). Fix: at most " + std::to_string(layers / 2));
}

}  // namespace trinity::train
