#pragma once
// trinity-train with pipeline parallelism (--pp, --vpp): the MLP's layers split into pp·vpp chunks, rank r of
// each pipeline holding chunks r, r + pp, …; the world's pp-rank pipelines are data-parallel replicas, each
// taking its share of the global batch in --micro-batches micro-batches through parallel::run_pipeline (1F1B,
// or interleaved), its layers' states in a shard::data_parallel under the ZeRO stage over its data-parallel
// group (parallel::groups_of). Same task, same initial parameters, same loss as the data-parallel loop, so
// the losses are DDP's up to the order fp32 sums run in. Rank 0 prints one JSON line per step and a summary
// with the pipeline's bytes and kept activations as the mechanism's model says them.

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include <trinity/train/attention_block.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/shard.hpp>

#include <trinity/train/mlp.hpp>
#include <trinity/train/teacher_task.hpp>
#include <trinity/train/tensor_slices.hpp>
#include "train.hpp"

namespace trinity::train {

namespace detail {

// One rank's chunks of the MLP; weights and gradients live in `States`, the task gives inputs and targets. With
// tensor parallelism (t > 1) each chunk's layers pair up as Megatron's MLP: a column-parallel layer (this rank's
// out/t rows of W), tanh, then a row-parallel layer (its in/t columns, b whole), through parallel/tensor_parallel's
// passes over the `tp` group. With sequence parallelism the tokens outside a pair, and so between stages, are
// split t ways; without it each stage sends its 1/t of the activation and the next all-gathers it over the
// tensor group (Narayanan et al. 2021's scatter/gather), so a boundary carries 1/t of an activation either way.
//
// A mixture-of-experts block (--experts) after layer 1 runs on the stage holding it, over the tokens this rank
// holds there (with tp > 1 its 1/t of them: Megatron-Core's MoE layers take their tokens sequence-parallel).
template <class States, class TP, class Moe>
struct mlp_chunks {
  const mlp_shape* shape;
  const teacher_task* task;
  States* states;
  TP* tp;
  TP* cp;    // the context group: the ranks holding the other tokens of this rank's sequences
  Moe* moe;  // the experts, on the stage holding layer 1 (null elsewhere and without --experts)
  std::size_t p, v, rank, first_sample, rows, tokens;
  // With an attention block (S > 1): S tokens a sequence, this rank's S/c of them from token cr·S/c, heads of
  // `head_dim` features.
  std::size_t S, cr, head_dim;
  bool sp;
  long step;
  double loss = 0;
  // --recompute-layers (config::recomputed_layers, config::group_layers): the first `recompute` layers of each chunk
  // keep only their input and run their forward again in the backward, in checkpointed groups of `group` layers (a
  // column/row pair, as a transformer layer's MLP, under Megatron-Core's block method; --recompute-method uniform
  // groups pairs, a chunk's last group the layers left).
  std::size_t recompute = 0, group = 2;
  // --recompute-attention: the attention block's core keeps its input alone and runs again, its ring too, when the
  // backward reaches it (Megatron-Core's selective recomputation).
  bool recompute_attention = false;
  // --recompute-experts: the experts' block keeps its input alone and runs again, router, dispatch and combine, when
  // the backward reaches it (Megatron-Core's recompute module `moe`).
  bool recompute_experts = false;
  // --recompute-shared-experts: the shared experts keep the block's input alone and run again when the backward
  // reaches them (Megatron-Core's recompute module `shared_experts`).
  bool recompute_shared = false;
  // The layers' activation floats this rank holds now and at most (the kept chunks and a rebuilt block), and the
  // layer forwards it ran, recomputed ones too.
  std::size_t held_floats = 0, peak_floats = 0, layer_forwards = 0;
  // Where each of the pp·vpp chunks starts among the model's layers, and the layer count last (chunk_starts).
  std::vector<std::size_t> starts;
  struct kept_chunk {
    std::vector<std::vector<float>> outs;   // the chunk's input as held, then each layer's output as held
    std::vector<std::vector<float>> whole;  // a column layer's whole input (empty for a row layer)
    std::optional<attention_block> block;   // the first layer's attention, where this chunk has it
    std::optional<moe_kept> experts;        // the second layer's experts, where this chunk has them
  };
  std::map<std::pair<std::size_t, std::size_t>, kept_chunk> kept;

  std::size_t t() const { return static_cast<std::size_t>(tp->size()); }
  // This rank's chunk `chunk` is the model's chunk stage_of(chunk); its layers, from layer_of(chunk, 0).
  std::size_t stage_of(std::size_t chunk) const { return chunk * p + rank; }
  std::size_t chunk_layers(std::size_t chunk) const { return starts[stage_of(chunk) + 1] - starts[stage_of(chunk)]; }
  std::size_t layer_of(std::size_t chunk, std::size_t k) const { return starts[stage_of(chunk)] + k; }
  // Its k-th layer among this rank's, chunk after chunk: where `states` keeps it.
  std::size_t local_of(std::size_t chunk, std::size_t k) const {
    for (std::size_t c = 0; c < chunk; ++c) k += chunk_layers(c);
    return k;
  }
  // The layers a checkpointed group holds, and of a chunk's those whose forward runs again in the backward.
  std::size_t block() const { return group; }
  std::size_t recomputed(std::size_t chunk) const { return std::min(recompute, chunk_layers(chunk)); }
  std::size_t group_end(std::size_t chunk, std::size_t first) const {
    return std::min(first + block(), chunk_layers(chunk));
  }
  int tr() const { return tp->rank(); }
  parallel::tokens held() const { return sp ? parallel::tokens::sequence_parallel : parallel::tokens::all; }
  std::size_t held_rows() const { return sp ? rows / t() : rows; }
  // A chunk's even layers are column-parallel, its odd ones row-parallel; a lone layer (t = 1) is a column layer of
  // one rank. Under --tp every chunk holds whole pairs, so its parity is the model's.
  bool column(std::size_t k) const { return k % 2 == 0; }
  // Layer l's inputs this rank's part of W takes (a row layer's in/t), and W's values before b's.
  std::size_t local_in(std::size_t k, std::size_t l) const { return column(k) ? shape->in(l) : shape->in(l) / t(); }
  std::size_t local_w(std::size_t k, std::size_t l) const {
    return local_in(k, l) * (column(k) ? shape->out(l) / t() : shape->out(l));
  }
  // This rank's share of an activation between stages: its chunk of the partition (its rows/t with sp).
  std::size_t input_size(std::size_t stage) const {
    return comm::partition(rows * shape->widths[starts[stage]], tp->size()).size(tr());
  }

  // Between stages: send this rank's chunk; receive one and, without sp, all-gather the whole activation.
  std::vector<float> to_send(std::vector<float> whole) const {
    if (sp || t() == 1) return whole;
    const comm::partition part(whole.size(), tp->size());
    const auto mine = part.chunk(std::span<const float>(whole), tr());
    return {mine.begin(), mine.end()};
  }
  std::vector<float> received(std::span<const float> in, std::size_t width) {
    if (sp || t() == 1) return {in.begin(), in.end()};
    std::vector<float> whole(rows * width);
    comm::all_gather(*tp, in, std::span<float>(whole), comm::algorithm::ring);
    return whole;
  }

  // Row r of micro-batch mb is token cr·S/c + r % (S/c) of the replica's sequence mb·rows/(S/c) + r / (S/c): task
  // sample (sequence)·S + token, as the data-parallel loop numbers them.
  std::size_t sample_index(std::size_t mb, std::size_t s) const {
    const std::size_t local = S / cp_size(),
                      r = mb * rows + (sp ? static_cast<std::size_t>(tr()) * held_rows() : 0) + s;
    return (first_sample + r / local) * S + cr * local + r % local;
  }
  void sample(std::size_t mb, std::span<float> x, std::span<float> y) const {
    const std::size_t in = shape->widths.front(), out = shape->widths.back();
    for (std::size_t s = 0; s < held_rows(); ++s)
      task->sample(static_cast<std::uint64_t>(step), sample_index(mb, s), x.subspan(s * in, in),
                   y.subspan(s * out, out));
  }
  // The task indices of the rows this rank holds of micro-batch mb: what balanced routing assigns experts by.
  std::vector<std::size_t> held_ids(std::size_t mb) const {
    std::vector<std::size_t> ids(held_rows());
    for (std::size_t s = 0; s < ids.size(); ++s) ids[s] = sample_index(mb, s);
    return ids;
  }
  std::size_t cp_size() const { return static_cast<std::size_t>(cp->size()); }

  // Layer k of `chunk` on `in`: its output after tanh (the model's last layer: linear); a column layer leaves its
  // whole input in `whole`. `keep` leaves the weights acquired for the layer's backward (a recomputed forward's:
  // ZeRO-3 gathers a layer once for both, as FSDP does under activation checkpointing).
  std::vector<float> layer_forward(std::size_t chunk, std::size_t k, std::span<const float> in,
                                   std::vector<float>& whole, bool keep) {
    const std::size_t l = layer_of(chunk, k), local = local_of(chunk, k), nw = local_w(k, l);
    states->acquire(local);
    const auto w = states->parameters(local);
    const parallel::linear_part part{w.first(nw), w.subspan(nw)};
    std::vector<float> z;
    if (column(k)) {
      z.resize(rows * part.b.size());
      parallel::column_forward(*tp, part, in, whole, z, rows, local_in(k, l), held());
    } else {
      z.resize(held_rows() * part.b.size());
      parallel::row_forward(*tp, part, in, z, rows, local_in(k, l), held());
    }
    if (!keep) states->release(local);
    if (l + 1 != shape->layers())
      for (auto& x : z) x = std::tanh(x);
    ++layer_forwards;
    return z;
  }

  // The attention block after layer 0 on its output: this rank's heads (a column layer's outputs) over its tokens
  // of rows/(S/c) sequences, the keys and values around the context ring.
  void attend(kept_chunk& c, std::vector<float>& z) {
    const std::size_t local_tokens = S / cp_size();
    c.block.emplace(rows / local_tokens, local_tokens, shape->out(0) / t(), head_dim);
    c.block->forward(*cp, z);
  }

  static std::size_t floats_of(const kept_chunk& c) {
    std::size_t n = 0;
    for (const auto* set : {&c.outs, &c.whole})
      for (const auto& x : *set) n += x.size();
    return n;
  }
  void hold(std::size_t floats) { peak_floats = std::max(peak_floats, held_floats += floats); }
  void drop(std::vector<float>& x) {
    held_floats -= x.size();
    std::vector<float>().swap(x);
  }
  // What a recomputed block's backward rebuilds: its layers' whole inputs and outputs, but not its input, nor the
  // next block's where that block is kept. The chunk's output goes where its last block is recomputed.
  bool rebuilt_output(std::size_t chunk, std::size_t i) const {
    return i <= recomputed(chunk) && (i % block() != 0 || i == chunk_layers(chunk));
  }

  std::vector<float> forward(std::size_t chunk, std::size_t mb, std::span<const float> in) {
    kept_chunk c;
    if (chunk * p + rank == 0) {
      c.outs.emplace_back(held_rows() * shape->widths.front());
      std::vector<float> y(held_rows() * shape->widths.back());
      sample(mb, c.outs[0], y);
    } else {
      c.outs.push_back(received(in, shape->widths[layer_of(chunk, 0)]));
    }
    for (std::size_t k = 0; k < chunk_layers(chunk); ++k) {
      const std::size_t l = layer_of(chunk, k);
      c.whole.emplace_back();
      auto z = layer_forward(chunk, k, c.outs.back(), c.whole.back(), false);
      if (l == 0 && S > 1) attend(c, z);
      if (l == 0 && S > 1 && recompute_attention) c.block->forget();
      if (l == 1 && moe) {
        c.experts = moe->forward(z, held_ids(mb));
        if (recompute_experts) moe->forget(*c.experts);
        if (recompute_shared) moe->forget_shared(*c.experts);
      }
      c.outs.push_back(std::move(z));
    }
    auto out = c.outs.back();
    if (recomputed(chunk) > 0) {  // the attention after layer 0 and the experts after layer 1 run again with their pair
      c.block.reset();
      c.experts.reset();
    }
    for (std::size_t k = 0; k < recomputed(chunk); ++k) std::vector<float>().swap(c.whole[k]);
    for (std::size_t i = 1; i < c.outs.size(); ++i)
      if (rebuilt_output(chunk, i)) std::vector<float>().swap(c.outs[i]);
    hold(floats_of(c));
    kept[{chunk, mb}] = std::move(c);
    return to_send(std::move(out));
  }

  std::vector<float> backward(std::size_t chunk, std::size_t mb, std::span<const float> grad) {
    auto c = std::move(kept.at({chunk, mb}));
    kept.erase({chunk, mb});
    // A recomputed block's forward again, from its kept input, its weights left acquired for its backward; an
    // output the next block keeps is rebuilt beside it (`spare`), as a checkpointed layer's is.
    std::vector<float> spare;
    const std::size_t n = chunk_layers(chunk);
    std::size_t rebuilt = n;  // the first layer of the block rebuilt, if any
    const auto rebuild = [&](std::size_t first) {
      for (std::size_t k = first; k < group_end(chunk, first); ++k) {
        auto z = layer_forward(chunk, k, c.outs[k], c.whole[k], true);
        if (layer_of(chunk, k) == 0 && S > 1) attend(c, z);
        if (layer_of(chunk, k) == 1 && moe) c.experts = moe->forward(z, held_ids(mb), /*again=*/true);
        hold(c.whole[k].size() + z.size());
        (rebuilt_output(chunk, k + 1) ? c.outs[k + 1] : spare) = std::move(z);
      }
      rebuilt = first;
    };
    std::vector<float> delta;
    if (n > 0 && recomputed(chunk) == n && stage_of(chunk) + 1 == p * v)  // the loss's: the last group's
      rebuild((n - 1) / block() * block());
    if (stage_of(chunk) + 1 == p * v) {
      // ½‖ŷ − y‖², averaged over the global batch, as the data-parallel loop; without sp every rank of the
      // tensor group holds every row, and the first counts the loss.
      std::vector<float> x(held_rows() * shape->widths.front()), y(held_rows() * shape->widths.back());
      sample(mb, x, y);
      delta.resize(y.size());
      for (std::size_t k = 0; k < y.size(); ++k) {
        const float d = c.outs.back()[k] - y[k];
        if (sp || tr() == 0) loss += 0.5 * static_cast<double>(d) * d;
        delta[k] = d / static_cast<float>(tokens);
      }
    } else {
      delta = received(grad, shape->widths[starts[stage_of(chunk) + 1]]);
    }
    for (std::size_t k = n; k-- > 0;) {
      const std::size_t l = layer_of(chunk, k), local = local_of(chunk, k), nw = local_w(k, l), in = local_in(k, l),
                        first = k - k % block();
      const bool again = k < recomputed(chunk);
      if (again && rebuilt != first) rebuild(first);
      std::span<const float> at = c.outs[k + 1];  // tanh' at the layer's output, before an attention block
      if (c.block && l == 0) {
        if (recompute_attention) c.block->rebuild(*cp);
        c.block->backward(*cp, delta);
        at = c.block->input();
      }
      if (c.experts && l == 1) {
        if (recompute_experts) c.experts = moe->rebuild(*c.experts, held_ids(mb));
        if (recompute_shared) moe->rebuild_shared(*c.experts);
        at = moe->backward(*c.experts, delta, /*ready=*/false);  // step() reduces them
      }
      if (l + 1 != shape->layers())
        for (std::size_t i = 0; i < delta.size(); ++i) delta[i] *= 1 - at[i] * at[i];
      if (!again) states->acquire(local);
      const auto w = states->parameters(local);
      auto g = states->gradient(local);
      const parallel::linear_part part{w.first(nw), w.subspan(nw)};
      const parallel::linear_grads grads{g.first(nw), g.subspan(nw)};
      std::vector<float> dx;
      if (column(k)) {
        dx.resize(held_rows() * in);
        parallel::column_backward(*tp, part, c.whole[k], delta, grads, dx, rows, in, held());
      } else {
        dx.resize(rows * in);
        parallel::row_backward(*tp, part, c.outs[k], delta, grads, dx, rows, in, held());
      }
      states->release(local);
      delta = std::move(dx);
      if (again && k == first) {  // the block's backward is done: what it rebuilt goes
        for (std::size_t j = first; j < group_end(chunk, first); ++j) {
          drop(c.whole[j]);
          if (rebuilt_output(chunk, j + 1)) drop(c.outs[j + 1]);
        }
        drop(spare);
      }
    }
    held_floats -= floats_of(c);
    return to_send(std::move(delta));
  }
};

}  // namespace detail

namespace detail {

// The model chunk that holds layer l, of those chunk_starts places.
inline std::size_t chunk_holding(const std::vector<std::size_t>& starts, std::size_t l) {
  return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), l) - starts.begin()) - 1;
}

// Where each of the pp·vpp model chunks starts among the model's L layers, then L: --chunk-layers' counts, or an
// even split. Each refusal names the flag and the fix.
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

// The layout the flags ask for over W ranks, checked: each refusal names the flag and the fix.
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

// The rows each rank takes a micro-batch from its replica's `mine` samples (S/c tokens of each), checked: the
// micro-batches split them, the interleaved schedule has a multiple of --pp, and sp splits the rows t ways.
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

// This rank's layers, chunk by chunk, and their initial parameters (the data-parallel loop's), each its tensor
// slice (tensor_slices.hpp).
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

// The mechanism's counts of one step, in bytes, as the step model counts them; the layers' activation floats this
// rank holds at most, and the layer forwards it runs.
struct pipelined_prediction {
  std::uint64_t pipeline = 0, tensor = 0, context = 0, activation_peak = 0, layer_forwards = 0;
  std::size_t peak_rank0 = 0;
};

// The floats this rank's chunks keep between their passes, and the most a recomputed block of each rebuilds, from
// the layers' shapes: a column layer (k even) keeps its whole input, rows·in, and its rows·out/t outputs; a row
// layer its held_rows·out outputs; a chunk its input, held_rows wide. A recomputed block keeps only its input.
struct kept_floats {
  std::vector<std::uint64_t> kept, rebuilt;  // by chunk
};
inline kept_floats kept_floats_of(const config& cfg, const mlp_shape& shape, std::size_t rows, std::size_t rank) {
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, t = cfg.tensor,
                    held_rows = cfg.sequence_parallel ? rows / t : rows, block = cfg.group_layers();
  const auto starts = chunk_starts(cfg, shape.layers());
  kept_floats out;
  for (std::size_t ch = 0; ch < v; ++ch) {
    const std::size_t first = starts[ch * p + rank], per_chunk = starts[ch * p + rank + 1] - first,
                      again = std::min(cfg.recomputed_layers(shape.layers()), per_chunk);
    std::uint64_t kept = held_rows * shape.in(first), rebuilt = 0, block_floats = 0;
    for (std::size_t k = 0; k < per_chunk; ++k) {
      const std::size_t l = first + k, whole = k % 2 == 0 ? rows * shape.in(l) : 0,
                        z = k % 2 == 0 ? rows * (shape.out(l) / t) : held_rows * shape.out(l);
      // An output is kept unless its block is recomputed and it is not the next block's input (or it is the
      // chunk's output), as mlp_chunks::rebuilt_output says.
      const bool output_kept = k + 1 > again || ((k + 1) % block == 0 && k + 1 != per_chunk);
      if (k >= again) kept += whole;
      if (output_kept) kept += z;
      if (k < again) {
        block_floats += whole + z;
        if ((k + 1) % block == 0 || k + 1 == per_chunk) rebuilt = std::max(rebuilt, std::exchange(block_floats, 0));
      }
    }
    out.kept.push_back(kept);
    out.rebuilt.push_back(rebuilt);
  }
  return out;
}
inline pipelined_prediction predict_pipelined(const config& cfg, const mlp_shape& shape, std::size_t rows,
                                              std::size_t rank, int tr) {
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, m = cfg.micro_batches, t = cfg.tensor, cps = cfg.context;
  const auto starts = chunk_starts(cfg, shape.layers());
  // Between stages: this rank's chunk of the activation at each chunk boundary it feeds, forward and backward,
  // per micro-batch. Over the tensor group, per micro-batch: a pair's two all-reduces (with sp: an all-gather
  // and a reduce-scatter each way), and without sp the all-gather of each activation or gradient it receives
  // from another stage. A ring sends all but one chunk of the partition in each half: all but this rank's in a
  // reduce-scatter, all but the next rank's in an all-gather.
  const auto chunk_of = [&](std::size_t n, int r) {
    return comm::partition(n, static_cast<int>(t)).size(r % static_cast<int>(t));
  };
  const auto gather = [&](std::size_t n) { return t == 1 ? 0 : n - chunk_of(n, tr + 1); };
  const auto scatter = [&](std::size_t n) { return t == 1 ? 0 : n - chunk_of(n, tr); };
  std::uint64_t boundary_floats = 0, tensor_floats = 0, forwards = 0;
  for (std::size_t ch = 0; ch < v; ++ch) {
    const std::size_t stage = ch * p + rank, first = starts[stage], per_chunk = starts[stage + 1] - first,
                      again = std::min(cfg.recomputed_layers(shape.layers()), per_chunk);
    forwards += per_chunk + again;
    const std::size_t in_n = rows * shape.widths[first], out_n = rows * shape.widths[starts[stage + 1]];
    if (stage + 1 < p * v) boundary_floats += chunk_of(out_n, tr);  // forward out
    if (stage > 0) boundary_floats += chunk_of(in_n, tr);           // backward in
    if (!cfg.sequence_parallel) {                                   // what it receives, gathered
      if (stage > 0) tensor_floats += gather(in_n);
      if (stage + 1 < p * v) tensor_floats += gather(out_n);
    }
    for (std::size_t k = 0; t > 1 && k < per_chunk; k += 2) {
      const std::size_t l = first + k, x_n = rows * shape.in(l), y_n = rows * shape.out(l + 1);
      tensor_floats += cfg.sequence_parallel ? gather(x_n) + scatter(y_n) + gather(y_n) + scatter(x_n)
                                             : gather(y_n) + scatter(y_n) + gather(x_n) + scatter(x_n);
      // A recomputed pair's forward runs again, its collectives too.
      if (k < again) tensor_floats += cfg.sequence_parallel ? gather(x_n) + scatter(y_n) : gather(y_n) + scatter(y_n);
    }
    // The shared experts after layer 1, on its chunk, on the block's sequence-parallel rows: a pair's collectives
    // more a pass, the forward's again where they run again (with their pair, with the block, or alone).
    if (t > 1 && cfg.moe.shared_experts > 0 && first <= 1 && 1 < first + per_chunk) {
      const std::size_t x_n = rows * shape.out(1);
      tensor_floats += 2 * (gather(x_n) + scatter(x_n));
      if (1 - first < again || cfg.recompute_experts || cfg.recompute_shared)
        tensor_floats += gather(x_n) + scatter(x_n);
    }
  }
  pipelined_prediction out;
  out.pipeline = p == 1 ? 0 : m * boundary_floats * sizeof(float);
  out.tensor = m * tensor_floats * sizeof(float);
  // The context ring (parallel/context_parallel.hpp), on the stage holding the first layer: K and V of this rank's
  // heads and tokens c − 1 hops forward, with their gradients c − 1 hops backward, then the gradients home.
  const std::uint64_t kv_floats = 2 * rows * (shape.out(0) / t);
  out.context = rank == chunk_holding(starts, 0) % p
                    ? static_cast<std::uint64_t>(std::llround(static_cast<double>(m * kv_floats * sizeof(float)) *
                                                              model::context_ring_blocks(cps, cfg.attention_again())))
                    : 0;
  // The first stage's most chunks in flight, as the step model counts them (micro-batches of v chunks each).
  out.peak_rank0 =
      static_cast<std::size_t>(std::llround(model::pipeline_in_flight(cfg.schedule, p, m, v) * static_cast<double>(v)));
  // This rank's passes in its schedule's order: each forward adds its chunk's kept floats; each backward holds them,
  // and a recomputed block's rebuilt ones, until it ends.
  const auto floats = kept_floats_of(cfg, shape, rows, rank);
  std::uint64_t now = 0;
  for (const auto& x : model::schedule_passes(cfg.schedule, p, rank, m, v)) {
    if (x.forward) {
      out.activation_peak = std::max(out.activation_peak, now += floats.kept[x.chunk]);
    } else {
      out.activation_peak = std::max(out.activation_peak, now + floats.rebuilt[x.chunk]);
      now -= floats.kept[x.chunk];
    }
  }
  out.activation_peak *= sizeof(float);
  out.layer_forwards = m * forwards;
  return out;
}

// What the summary predicts of ZeRO and offload for this rank's Ψ over its data-parallel group, per rank.
template <class Comm>
nlohmann::json predicted_states(Comm& c, const config& cfg, std::size_t psi, std::size_t group, int stage,
                                const model::state_bytes& sb) {
  // ZeRO's traffic (model/sharding.hpp), in whole bytes. Stage 3 gathers each layer for every micro-batch's
  // forward and backward: 2m gathers and a reduce-scatter where one micro-batch has three
  // (model/parallel_training.hpp counts the same).
  const double zero_units = stage == 3 ? (1.0 + 2.0 * static_cast<double>(cfg.micro_batches)) / 3.0 : 1.0;
  const auto dp = train::detail::per_rank(
      c, static_cast<std::uint64_t>(std::llround(
             zero_units *
             model::zero_traffic_per_step(static_cast<double>(psi), group, stage, model::fp32_adam).value())));
  // Offloaded, the states and master copy leave the device, and a step moves the gradient shard down and the
  // parameter shard up.
  const auto offloaded = train::detail::per_rank(
      c, static_cast<std::uint64_t>(std::llround(
             model::zero_memory_per_rank(static_cast<double>(psi), group, stage, sb, cfg.offload).offloaded.value())));
  const auto moved = train::detail::per_rank(
      c, static_cast<std::uint64_t>(std::llround(
             model::offload_traffic_per_step(static_cast<double>(psi), group, stage, model::fp32_adam, cfg.offload)
                 .value())));
  // a codec's frames are not counted here: verify prices them with the planner's model
  return {{"data_parallel_bytes_per_step", cfg.compress.empty() ? nlohmann::json(dp) : nlohmann::json(nullptr)},
          {"offloaded_bytes_per_rank", offloaded},
          {"offload_bytes_per_step", moved}};
}

// A pipelined step's end: the passes left every gradient to the step, so each layer is marked ready here (with
// --inject-nan, after a NaN is put in this rank's first layer's at its step), and the world votes before the
// dense states and the experts step (train::detail::step_voted): every stage skips where one saw a NaN.
template <class Comm, class States, class Moe>
shard::step_report finish_step(Comm& c, const config& cfg, long t, States& states, Moe* moe, const shard::adam& opt,
                               std::uint64_t& dense_moved) {
  if (t == cfg.inject_nan_step && c.rank() == cfg.inject_nan_rank)
    states.gradient(0)[0] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t l = 0; l < states.layers(); ++l) states.gradient_ready(l);
  if (moe) moe->finish_gradients();
  return train::detail::step_voted(c, states, moe, opt, &dense_moved);
}

// Bytes each group sent, gathered per rank, and the ledger's residency, for one step's JSON line.
struct step_counts {
  std::uint64_t pipeline = 0, data = 0, tensor = 0, context = 0, experts = 0, expert_data = 0;
  std::uint64_t parameters = 0, gradients = 0, optimizer = 0, offloaded = 0, moved = 0, stashed = 0, peak = 0, ns = 0;
  std::uint64_t activations = 0, forwards = 0;  // the layers' activation bytes at most, and their forwards run
  // What the ledger holds between the passes and the optimizer step: what ZeRO's formulas count.
  static step_counts resident_in(const shard::memory_ledger& ledger) {
    using shard::state_kind;
    step_counts k;
    k.parameters = ledger.resident(state_kind::parameters);
    k.gradients = ledger.resident(state_kind::gradients);
    k.optimizer = ledger.resident(state_kind::optimizer_states);
    k.offloaded = ledger.resident(state_kind::optimizer_states, shard::placement::offload);
    return k;
  }
};
template <class Comm>
nlohmann::json step_line(Comm& c, const config& cfg, const model::parallel_layout& layout, const step_counts& k) {
  const auto all = [&](std::uint64_t x) { return train::detail::per_rank(c, x); };
  return {{"ranks", c.size()},
          {"tp", layout.tp},
          {"sp", cfg.sequence_parallel},
          {"pp", layout.pp},
          {"vpp", layout.vpp},
          {"cp", layout.cp},
          {"dp", layout.dp},
          {"micro_batches", cfg.micro_batches},
          {"stage", layout.zero_stage},
          {"offload", cfg.offload},
          {"compress", cfg.compress.empty() ? nlohmann::json(nullptr) : nlohmann::json(cfg.compress)},
          {"resident_bytes",
           {{"parameters", all(k.parameters)},
            {"gradients", all(k.gradients)},
            {"optimizer_states", all(k.optimizer)},
            {"offloaded", all(k.offloaded)}}},
          {"peak_bytes", {{"device", all(k.peak)}, {"activations", all(k.activations)}}},
          {"layer_forwards", all(k.forwards)},
          {"sent_bytes", all(k.pipeline + k.data + k.tensor + k.context + k.experts + k.expert_data)},
          {"offload_bytes", all(k.moved)},
          {"pipeline_bytes", all(k.pipeline)},
          {"data_parallel_bytes", all(k.data)},
          {"tensor_parallel_bytes", all(k.tensor)},
          {"context_parallel_bytes", all(k.context)},
          {"peak_stashed_chunks", all(k.stashed)}};
}

// The run's last line: its layout and states beside what the counting formulas predict per rank.
template <class Comm>
void pipelined_summary(Comm& c, const config& cfg, const mlp_shape& shape, const model::parallel_layout& layout,
                       const auto& local, const auto& predicted, int zero, const std::vector<double>& step_seconds,
                       const nlohmann::json& last, const nlohmann::json& experts, std::ostream& out) {
  const std::size_t cps = cfg.context;
  const model::state_bytes sb = cfg.offload ? model::state_bytes{4, 4, 12} : model::fp32_adam;
  auto pipeline = predicted_states(c, cfg, local.psi, layout.dp * cps, zero, sb);
  pipeline["bytes_per_step"] = train::detail::per_rank(c, predicted.pipeline);
  pipeline["peak_stashed_chunks_rank0"] = predicted.peak_rank0;
  pipeline["tensor_parallel_bytes_per_step"] = train::detail::per_rank(c, predicted.tensor);
  pipeline["context_parallel_bytes_per_step"] = train::detail::per_rank(c, predicted.context);
  pipeline["peak_activation_bytes"] = train::detail::per_rank(c, predicted.activation_peak);
  pipeline["layer_forwards_per_step"] = train::detail::per_rank(c, predicted.layer_forwards);
  pipeline["recompute_layers"] = cfg.recompute_layers;
  pipeline["recompute_method"] = model::to_string(cfg.recompute_method);
  pipeline["recompute_attention"] = cfg.recompute_attention;
  pipeline["recompute_experts"] = cfg.recompute_experts;
  pipeline["recompute_shared_experts"] = cfg.recompute_shared;
  const auto psi_all = train::detail::per_rank(c, local.psi);
  if (c.rank() != 0) return;
  nlohmann::json summary{
      {"summary",
       {{"parameters", shape.parameters()},
        {"ranks", c.size()},
        {"layout", model::to_string(layout)},
        {"parameters_per_rank", psi_all},
        {"state_bytes", {{"parameter", sb.parameter}, {"gradient", sb.gradient}, {"optimizer", sb.optimizer}}},
        {"offload", cfg.offload},
        {"pipeline", pipeline},
        {"step_seconds", step_seconds},
        {"last_step", last}}}};
  if (!experts.is_null()) summary["summary"]["experts"] = experts;
  out << summary.dump() << '\n' << std::flush;
}

}  // namespace detail

template <class Scheme, class Comm>
int run_pipelined(Comm& c, const config& cfg, std::ostream& out, any_reduction<comm::group<Comm>> reduction,
                  const group_reductions<Comm>& expert_reductions) {
  using namespace trinity::shard;
  const mlp_shape shape = cfg.shape();
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, m = cfg.micro_batches, t = cfg.tensor, cps = cfg.context;
  const auto layout =
      detail::pipelined_layout(cfg, shape, static_cast<std::size_t>(c.size()), Scheme::shards.zero_stage());
  const auto groups = parallel::groups_of(layout, c.size(), c.rank());
  // ZeRO shards, and gradients sum, over the ranks that hold the same weights: data and context.
  comm::group tp(c, groups.tp), pp(c, groups.pp), cp(c, groups.cp), dp(c, groups.weights);
  // Sequences over the replicas; each replica's context ranks hold S/c tokens of every one of its sequences.
  const comm::partition samples(cfg.batch, layout.dp);
  const std::size_t replica = static_cast<std::size_t>(dp.rank()) / cps;
  const std::size_t rows = detail::micro_batch_rows(cfg, samples.size(static_cast<int>(replica)));
  const std::size_t rank = static_cast<std::size_t>(pp.rank());
  const int tr = tp.rank();

  const auto local = detail::local_layers_of(cfg, shape, rank, tr);
  const teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
  const adam opt{.learning_rate = cfg.learning_rate};
  memory_ledger ledger;
  data_parallel<Scheme, comm::group<Comm>, any_reduction<comm::group<Comm>>> states(
      dp, ledger, local.sizes, local.initial, opt, std::move(reduction));
  const auto predicted = detail::predict_pipelined(cfg, shape, rows, rank, tr);
  // The experts on the stage holding layer 1, its tp·cp·dp ranks regrouped into expert groups. Their states
  // are charged to a ledger of their own, so the dense states' residency stays what ZeRO's formulas count.
  using experts_type = moe_block<Scheme, Comm>;
  std::optional<experts_type> moe;
  memory_ledger expert_ledger;
  const auto starts = detail::chunk_starts(cfg, shape.layers());
  const std::size_t stage_ranks = t * cps * layout.dp, owner = detail::chunk_holding(starts, 1) % p;
  if (cfg.experts() && rank == owner)
    emplace_experts(moe, c, groups, owner * stage_ranks, stage_ranks, expert_ledger, cfg.moe, shape.out(1),
                    cfg.seed + 1, opt, expert_reductions);

  // Checkpoints: this rank's piece of the dense layers in its pipeline rank's and slice's directory.
  const saved_stages split{p, v, t};
  const long step0 = cfg.load_checkpoint.empty() ? 0 : train::detail::resume_from(c, cfg.load_checkpoint, [&] {
    return train::detail::load_all(cfg.load_checkpoint, states, dp.rank(), local.ids, shape, t,
                                   static_cast<std::size_t>(tr), cfg.experts(), moe);
  });

  nlohmann::json last;
  std::vector<double> step_seconds;
  for (long t_step = step0; t_step < step0 + cfg.steps; ++t_step) {
    const auto started = std::chrono::steady_clock::now();
    ledger.reset_peaks();
    const std::uint64_t pp_before = pp.bytes_sent(), dp_before = dp.bytes_sent(), tp_before = tp.bytes_sent(),
                        cp_before = cp.bytes_sent(), experts_before = moe ? moe->sent() : 0,
                        shared_before = moe ? moe->tensor_sent() : 0, expert_data_before = moe ? moe->data_sent() : 0;
    detail::mlp_chunks<decltype(states), comm::group<Comm>, experts_type> stage{
        &shape,
        &task,
        &states,
        &tp,
        &cp,
        moe ? &*moe : nullptr,
        p,
        v,
        rank,
        samples.begin(static_cast<int>(replica)),
        rows,
        cfg.tokens(),
        cfg.sequence,
        static_cast<std::size_t>(cp.rank()),
        shape.out(0) / cfg.heads,
        cfg.sequence_parallel,
        t_step,
        0,
        cfg.recomputed_layers(shape.layers()),
        cfg.group_layers(),
        cfg.recompute_attention,
        cfg.recompute_experts,
        cfg.recompute_shared,
        0,
        0,
        0,
        starts,
        {}};
    const auto stats = parallel::run_pipeline(pp, cfg.schedule, m, v, stage);
    auto k = detail::step_counts::resident_in(ledger);
    std::uint64_t dense_moved = 0;
    const step_report report = detail::finish_step(c, cfg, t_step, states, moe ? &*moe : nullptr, opt, dense_moved);
    k.ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
    k.pipeline = pp.bytes_sent() - pp_before, k.data = dp.bytes_sent() - dp_before;
    // The shared experts' collectives are the tensor group's, as the step model counts them.
    k.tensor = tp.bytes_sent() - tp_before + (moe ? moe->tensor_sent() - shared_before : 0);
    k.context = cp.bytes_sent() - cp_before;
    k.experts = moe ? moe->sent() - experts_before : 0;
    k.expert_data = moe ? moe->data_sent() - expert_data_before : 0;
    k.moved = dense_moved, k.stashed = stats.peak_stashed, k.peak = ledger.peak(placement::device);
    k.activations = stage.peak_floats * sizeof(float), k.forwards = stage.layer_forwards;
    double loss = stage.loss;
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    nlohmann::json line = detail::step_line(c, cfg, layout, k);
    if (cfg.experts()) line.update(detail::expert_step(c, moe ? &*moe : nullptr, k.experts, k.expert_data));
    train::detail::emit_step(c, std::move(line), t_step + 1, loss / static_cast<double>(cfg.tokens()), report, k.ns,
                             step_seconds, last, out);
  }
  if (!cfg.save_checkpoint.empty())
    train::detail::save_all(cfg.save_checkpoint, stage_path({}, rank, split, static_cast<std::size_t>(tr)), states, dp,
                            moe, c, step0 + cfg.steps, train::detail::layout_word(cfg, c.size()));
  // Each pass of the experts takes the rows this rank holds of a micro-batch (rows/t with sp).
  const auto experts =
      cfg.experts() ? detail::expert_summary(c, cfg, moe ? &*moe : nullptr, cfg.sequence_parallel ? rows / t : rows, m)
                    : nlohmann::json();
  detail::pipelined_summary(c, cfg, shape, layout, local, predicted, Scheme::shards.zero_stage(), step_seconds, last,
                            experts, out);
  return 0;
}

}  // namespace trinity::train
