#pragma once
//! \file
//! mlp_chunks: one pipeline rank's chunks of the reference trainer's perceptron, the stage parallel::run_pipeline
//! runs (forward and backward of a chunk for a micro-batch), with tensor and sequence parallelism inside each pair of
//! layers, the attention block after layer 0 over the context group, the experts' block after layer 1, and
//! recomputation of a chunk's first layers in checkpointed groups.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <trinity/comm/collectives.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/train/attention_block.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/moe_block.hpp>
#include <trinity/train/placement.hpp>
#include <trinity/train/teacher_task.hpp>

namespace trinity::train {

//! One rank's chunks of the MLP; weights and gradients live in `States`, the task gives inputs and targets. With
//! tensor parallelism (t > 1) each chunk's layers pair up as Megatron's MLP: a column-parallel layer (this rank's
//! out/t rows of W), tanh, then a row-parallel layer (its in/t columns, b whole), through parallel/tensor_parallel's
//! passes over the `tp` group. With sequence parallelism the tokens outside a pair, and so between stages, are
//! split t ways; without it each stage sends its 1/t of the activation and the next all-gathers it over the
//! tensor group (Narayanan et al. 2021's scatter/gather), so a boundary carries 1/t of an activation either way.
//!
//! A mixture-of-experts block (--experts) after layer 1 runs on the stage holding it, over the tokens this rank
//! holds there (with tp > 1 its 1/t of them: Megatron-Core's MoE layers take their tokens sequence-parallel).
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
    const bool last = stage_of(chunk) + 1 == p * v;
    if (n > 0 && recomputed(chunk) == n && last) rebuild((n - 1) / block() * block());  // the loss's: the last group's
    std::vector<float> delta = last ? output_delta(mb, c) : received(grad, shape->widths[starts[stage_of(chunk) + 1]]);
    for (std::size_t k = n; k-- > 0;) {
      const std::size_t first = k - k % block();
      const bool again = k < recomputed(chunk);
      if (again && rebuilt != first) rebuild(first);
      layer_backward(chunk, k, mb, c, delta, again);
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

 private:
  // δ at the model's output for micro-batch mb: ½‖ŷ − y‖², averaged over the global batch, as the data-parallel
  // loop; without sp every rank of the tensor group holds every row, and the first counts the loss.
  std::vector<float> output_delta(std::size_t mb, const kept_chunk& c) {
    std::vector<float> x(held_rows() * shape->widths.front()), y(held_rows() * shape->widths.back());
    sample(mb, x, y);
    std::vector<float> delta(y.size());
    for (std::size_t k = 0; k < y.size(); ++k) {
      const float d = c.outs.back()[k] - y[k];
      if (sp || tr() == 0) loss += 0.5 * static_cast<double>(d) * d;
      delta[k] = d / static_cast<float>(tokens);
    }
    return delta;
  }
  // Layer k of `chunk`'s backward: δ at its output (after the block that follows it, if any, carried back through
  // that block) to δ at its input, its gradients added. `again`: a recomputed layer, whose weights its rebuild left
  // acquired.
  void layer_backward(std::size_t chunk, std::size_t k, std::size_t mb, kept_chunk& c, std::vector<float>& delta,
                      bool again) {
    const std::size_t l = layer_of(chunk, k), local = local_of(chunk, k), nw = local_w(k, l), in = local_in(k, l);
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
  }
};

//! The chunks of pipeline rank `rank` for step `step` as `cfg` runs them: its layers' states in `states`, its tensor
//! and context groups, the experts' block where this stage holds it (else null), its replica's samples from
//! `first_sample`, `rows` rows a micro-batch (micro_batch_rows).
template <class States, class TP, class Moe>
mlp_chunks<States, TP, Moe> chunks_of(const config& cfg, const mlp_shape& shape, const teacher_task& task,
                                      States& states, TP& tp, TP& cp, Moe* moe, std::size_t rank,
                                      std::size_t first_sample, std::size_t rows, long step) {
  return {.shape = &shape,
          .task = &task,
          .states = &states,
          .tp = &tp,
          .cp = &cp,
          .moe = moe,
          .p = cfg.pipeline,
          .v = cfg.virtual_stages,
          .rank = rank,
          .first_sample = first_sample,
          .rows = rows,
          .tokens = cfg.tokens(),
          .S = cfg.sequence,
          .cr = static_cast<std::size_t>(cp.rank()),
          .head_dim = shape.out(0) / cfg.heads,
          .sp = cfg.sequence_parallel,
          .step = step,
          .recompute = cfg.recomputed_layers(shape.layers()),
          .group = cfg.group_layers(),
          .recompute_attention = cfg.recompute_attention,
          .recompute_experts = cfg.recompute_experts,
          .recompute_shared = cfg.recompute_shared,
          .starts = chunk_starts(cfg, shape.layers()),
          .kept = {}};
}

}  // namespace trinity::train
