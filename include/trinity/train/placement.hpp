#pragma once
//! \file
//! Where the reference trainer's layers go: the pp·vpp model chunks' first layers (chunk_starts: an even split, or
//! --chunk-layers as Megatron-Core's --pipeline-model-parallel-layout places them), the model::parallel_layout the
//! flags ask for over W ranks (checked, each refusal by the flag and the fix, the schedule's rules the step
//! model's), the rows a rank takes a micro-batch, and this rank's layers with their initial parameters, each its
//! tensor slice. Pure functions of the config: every rank computes the same.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/tensor_slices.hpp>

namespace trinity::train {

//! The model chunk that holds layer l, of those chunk_starts places.
inline std::size_t chunk_holding(const std::vector<std::size_t>& starts, std::size_t l) {
  return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), l) - starts.begin()) - 1;
}

//! Where each of the pp·vpp model chunks starts among the model's L layers, then L: --chunk-layers' counts, or an
//! even split. Each refusal names the flag and the fix.
inline std::vector<std::size_t> chunk_starts(const config& cfg, std::size_t L) {
  const std::size_t chunks = cfg.pipeline * cfg.virtual_stages;
  std::vector<std::size_t> starts{0};
  if (cfg.chunk_layers.empty()) {
    if (L % chunks != 0)
      throw invalid_input("--pp", std::to_string(chunks) + " model chunks (pp*vpp) do not divide the " +
                                      std::to_string(L) +
                                      " layers (--layers + 1). Fix: a layer count that splits evenly, or "
                                      "--chunk-layers to place them");
    for (std::size_t c = 1; c <= chunks; ++c) starts.push_back(c * (L / chunks));
    return starts;
  }
  if (cfg.chunk_layers.size() != chunks)
    throw invalid_input("--chunk-layers", std::to_string(cfg.chunk_layers.size()) + " counts for the " +
                                              std::to_string(chunks) +
                                              " model chunks (pp*vpp). Fix: one count a chunk, in the model's order");
  for (const std::size_t n : cfg.chunk_layers) starts.push_back(starts.back() + n);
  if (starts.back() != L)
    throw invalid_input("--chunk-layers", "the counts place " + std::to_string(starts.back()) +
                                              " layers, and the model has " + std::to_string(L) +
                                              " (--layers + 1). Fix: counts that add up to " + std::to_string(L));
  // A chunk may be empty, a pipeline rank not: it would hold no weights for its data-parallel group to share.
  for (std::size_t r = 0; r < cfg.pipeline; ++r) {
    std::size_t held = 0;
    for (std::size_t c = r; c < chunks; c += cfg.pipeline) held += cfg.chunk_layers[c];
    if (held == 0)
      throw invalid_input("--chunk-layers", "pipeline rank " + std::to_string(r) +
                                                " holds no layer (its chunks' counts are all 0). Fix: give it one");
  }
  return starts;
}

//! The layout the flags ask for over W ranks, checked: each refusal names the flag and the fix.
inline model::parallel_layout pipelined_layout(const config& cfg, const mlp_shape& shape, std::size_t W,
                                               int zero_stage) {
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, t = cfg.tensor, cps = cfg.context, L = shape.layers();
  if (W % (t * p * cps) != 0)
    throw invalid_input(cps > 1 ? "--cp" : (t > 1 ? "--tp" : "--pp"),
                        std::to_string(t * p * cps) + " ranks a replica (tp*pp*cp) do not divide the " +
                            std::to_string(W) + " ranks. Fix: --ranks (or mpirun -n) a multiple of it");
  const auto starts = chunk_starts(cfg, L);
  const bool stated = !cfg.chunk_layers.empty();
  std::size_t fullest = 0;
  for (std::size_t c = 0; c + 1 < starts.size(); ++c) {
    const std::size_t n = starts[c + 1] - starts[c];
    fullest = std::max(fullest, n);
    const std::string fix =
        stated ? "even --chunk-layers counts" : "--layers so that (layers + 1) / (pp * vpp) is even";
    if (t > 1 && n % 2 != 0)
      throw invalid_input("--tp",
                          "pairs each chunk's layers, column-parallel then row-parallel (Megatron's MLP); a "
                          "chunk of " +
                              std::to_string(n) + " layers does not pair. Fix: " + fix);
    check_recompute_pairs(cfg, n, fix);
  }
  for (std::size_t l = 0; l < L; l += 2)
    if (t > 1 && shape.out(l) % t != 0)
      throw invalid_input("--tp", std::to_string(t) + " does not divide layer " + std::to_string(l) + "'s " +
                                      std::to_string(shape.out(l)) + " outputs. Fix: a --width it divides");
  if (cfg.sequence_parallel && t == 1)
    throw invalid_input("--sp", "splits tokens over the tensor group. Fix: --tp 2 or more");
  check_recompute(cfg, fullest);
  const std::size_t blocks = fullest / 2, again = cfg.recompute_layers;
  model::parallel_layout layout;
  layout.tp = t;
  layout.pp = p;
  layout.vpp = v;
  layout.cp = cps;
  layout.dp = W / (t * p * cps);
  layout.micro_batch = 1;
  layout.sequence_parallel = cfg.sequence_parallel;
  layout.zero_stage = zero_stage;
  if (again > 0) layout.recompute = model::recomputation::full;
  if (again > 0 && (again < blocks || cfg.uniform())) layout.recompute_layers = again;
  layout.recompute_method = cfg.recompute_method;
  if (cfg.recompute_attention) layout.recompute = model::recomputation::selective;
  if (cfg.recompute_experts) layout.modules.add(model::recompute_module::moe);
  if (cfg.recompute_shared) layout.modules.add(model::recompute_module::shared_experts);
  if (cfg.experts()) layout.ep = cfg.moe.ep, layout.etp = cfg.moe.etp;
  layout.schedule = cfg.schedule;
  // The schedule's own rules, as the step model states them, by the flag that sets the field they name.
  if (const auto broken = model::check_schedule(layout)) throw invalid_input("--" + broken->field, broken->problem());
  if (stated) {  // in Megatron-Core's marks: the embedding's place in the first chunk, the loss's in the last
    for (std::size_t c = 0; c + 1 < starts.size(); ++c) {
      const std::size_t n = starts[c + 1] - starts[c];
      layout.pipeline_layout +=
          std::string(c ? "|" : "E") + (n ? "t*" + std::to_string(n) : "") + (c + 2 == starts.size() ? "L" : "");
    }
  }
  return layout;
}

//! The rows each rank takes a micro-batch from its replica's `mine` samples (S/c tokens of each), checked: the
//! micro-batches split them, the interleaved schedule has a multiple of --pp, and sp splits the rows t ways.
inline std::size_t micro_batch_rows(const config& cfg, std::size_t mine) {
  const std::size_t p = cfg.pipeline, m = cfg.micro_batches, t = cfg.tensor;
  if (mine % m != 0)
    throw invalid_input("--micro-batches", std::to_string(mine) + " samples per replica do not split into " +
                                               std::to_string(m) +
                                               " micro-batches. Fix: a divisor of --batch / (ranks / (tp * pp * cp))");
  if (cfg.virtual_stages > 1 && m % p != 0)
    throw invalid_input("--micro-batches",
                        "the interleaved schedule needs a multiple of --pp (" + std::to_string(p) + ")");
  const std::size_t rows = mine / m * (cfg.sequence / cfg.context);
  if (cfg.sequence_parallel && rows % t != 0)
    throw invalid_input("--sp", "splits each micro-batch's " + std::to_string(rows) + " samples " + std::to_string(t) +
                                    " ways. Fix: a --batch whose micro-batches divide by --tp");
  return rows;
}

//! This rank's layers, chunk by chunk, and their initial parameters (the data-parallel loop's), each its tensor
//! slice (tensor_slices.hpp).
struct local_layers {
  std::vector<std::size_t> sizes, ids;  // each layer's values here, and its index in the model
  std::vector<float> initial;
  std::size_t psi = 0;
};
inline local_layers local_layers_of(const config& cfg, const mlp_shape& shape, std::size_t rank, int tr) {
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, t = cfg.tensor, L = shape.layers();
  const auto starts = chunk_starts(cfg, L);
  const auto sizes = shape.layer_sizes();
  const auto all = initial_parameters(shape, cfg.seed + 1);
  std::vector<std::size_t> offset(L + 1, 0);
  for (std::size_t l = 0; l < L; ++l) offset[l + 1] = offset[l] + sizes[l];
  local_layers out;
  for (std::size_t ch = 0; ch < v; ++ch)
    for (std::size_t l = starts[ch * p + rank]; l < starts[ch * p + rank + 1]; ++l) {
      // A chunk's k-th layer is a column layer where k is even (mlp_chunks::column); under --tp, as l is.
      for (const auto at : slice_indices(shape, l, t, static_cast<std::size_t>(tr)))
        out.initial.push_back(all[offset[l] + at]);
      out.sizes.push_back(out.initial.size() - out.psi);
      out.ids.push_back(l);
      out.psi += out.sizes.back();
    }
  return out;
}

}  // namespace trinity::train
