#pragma once
//! \file
//! What a pipelined step of the reference trainer sends and keeps, counted from the layers' shapes as the step
//! model counts them: the bytes between stages, over the tensor group and around the context ring, the activation
//! floats a rank keeps at most (walking its schedule's passes) and the first stage's chunks in flight, and the
//! layer forwards it runs. trinity-train prints it beside what the run measured.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <trinity/comm/partition.hpp>
#include <trinity/model/training/activations.hpp>
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/placement.hpp>

namespace trinity::train {

//! The mechanism's counts of one step, in bytes, as the step model counts them; the layers' activation floats this
//! rank holds at most, and the layer forwards it runs.
struct pipelined_prediction {
  std::uint64_t pipeline = 0, tensor = 0, context = 0, activation_peak = 0, layer_forwards = 0;
  std::size_t peak_rank0 = 0;
};

//! The floats this rank's chunks keep between their passes, and the most a recomputed block of each rebuilds, from
//! the layers' shapes: a column layer (k even) keeps its whole input, rows·in, and its rows·out/t outputs; a row
//! layer its held_rows·out outputs; a chunk its input, held_rows wide. A recomputed block keeps only its input.
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
//! The activation bytes this rank keeps at most: its passes in its schedule's order, each forward adding its chunk's
//! kept floats, each backward holding them, and a recomputed block's rebuilt ones, until it ends.
inline std::uint64_t activation_peak_bytes(const config& cfg, const mlp_shape& shape, std::size_t rows,
                                           std::size_t rank) {
  const auto floats = kept_floats_of(cfg, shape, rows, rank);
  std::uint64_t now = 0, peak = 0;
  for (const auto& x :
       model::schedule_passes(cfg.schedule, cfg.pipeline, rank, cfg.micro_batches, cfg.virtual_stages)) {
    if (x.forward) {
      peak = std::max(peak, now += floats.kept[x.chunk]);
    } else {
      peak = std::max(peak, now + floats.rebuilt[x.chunk]);
      now -= floats.kept[x.chunk];
    }
  }
  return peak * sizeof(float);
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
  out.activation_peak = activation_peak_bytes(cfg, shape, rows, rank);
  out.layer_forwards = m * forwards;
  return out;
}

}  // namespace trinity::train
