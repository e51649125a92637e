#pragma once
//! \file
//! The reference trainer's mixture-of-experts block, what it is made of: its configuration (moe_config), its
//! initial weights (each a pure function of the seed and the expert, the same on whichever rank holds it), and where
//! a tensor slice of an expert's MLP sits in the whole. moe_block.hpp runs them.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <trinity/parallel/tensor_slice.hpp>
#include <trinity/shard/data_parallel.hpp>
#include <trinity/train/seeded_draws.hpp>
#include <trinity/train/token_dispatch.hpp>

namespace trinity::train {

//! The block's shape and split; trinity-train's flags name each field.
struct moe_config {
  std::size_t experts = 0;         //!< --experts: 0, no block
  std::size_t top_k = 2;           //!< --top-k
  std::size_t ep = 1;              //!< --ep: ranks an expert group spreads the experts over
  std::size_t etp = 1;             //!< --etp: ranks each expert's width splits over
  std::size_t expert_width = 0;    //!< --expert-width: an expert's FFN width (0: the MLP's --width)
  double capacity_factor = 0;      //!< --capacity-factor: 0 dropless
  bool balanced = false;           //!< --balanced-routing
  std::size_t shared_experts = 0;  //!< --shared-experts: experts every token runs beside its routed ones
  dispatcher dispatch{};           //!< --dispatcher (and --node-ranks): all-to-all, or deduplicated by node
};

//! Adds `from`'s step to `into`: skipped where either skipped, the offload tier's bytes of both.
inline void add_step(shard::step_report& into, const shard::step_report& from) {
  into.skipped = into.skipped || from.skipped;
  into.offload_bytes += from.offload_bytes;
}

namespace detail {
//! Expert e's W1 (f × h, bound √(3/h)) and W2 (h × f, bound √(3/f)), LeCun-uniform and a pure function of the
//! seed and e: the same weights whichever rank holds the expert.
inline std::vector<float> initial_expert(std::size_t e, std::size_t h, std::size_t f, std::uint64_t seed) {
  std::vector<float> w(2 * f * h);
  const auto draw = [&](std::size_t i, std::size_t which, float bound) {
    return symmetric(key(seed, 3000 + e, i, which), bound);
  };
  for (std::size_t i = 0; i < f * h; ++i) w[i] = draw(i, 0, std::sqrt(3.0f / static_cast<float>(h)));
  for (std::size_t i = 0; i < h * f; ++i) w[f * h + i] = draw(i, 1, std::sqrt(3.0f / static_cast<float>(f)));
  return w;
}
//! The shared experts' W1 (f × h) and W2 (h × f), f their fused width: drawn as an expert's, under an index no
//! routed expert has.
inline std::vector<float> initial_shared(std::size_t h, std::size_t f, std::uint64_t seed) {
  return initial_expert(std::size_t{1} << 20, h, f, seed);
}
//! The router's experts × h weights, LeCun-uniform.
inline std::vector<float> initial_router(std::size_t experts, std::size_t h, std::uint64_t seed) {
  std::vector<float> w(experts * h);
  const float bound = std::sqrt(3.0f / static_cast<float>(h));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = symmetric(key(seed, 2000, i, 0), bound);
  return w;
}
}  // namespace detail

//! Balanced routing's logits (--balanced-routing): a 1 at each of row i's experts (ids[i]·k + j) mod E, j < k, and
//! 0 elsewhere, so every rank's rows spread evenly over the experts, each weighed 1/k (NeMo's benchmarks force the
//! balance so); `ids[i]` is row i's index in the global batch.
inline std::vector<float> balanced_logits(std::span<const std::size_t> ids, std::size_t experts, std::size_t top_k) {
  std::vector<float> z(ids.size() * experts, 0.0f);
  for (std::size_t t = 0; t < ids.size(); ++t)
    for (std::size_t j = 0; j < top_k; ++j) z[t * experts + (ids[t] * top_k + j) % experts] = 1.0f;
  return z;
}

//! Where tensor rank t of `ranks` holds the values of an MLP h → f → h without biases (an expert's, or the shared
//! experts' fused one): W1 (f × h) split by its rows, as a column-parallel layer, then W2 (h × f) by its columns, as
//! a row-parallel one. Indices into the whole, W1 then W2.
inline std::vector<std::size_t> expert_slice_indices(std::size_t h, std::size_t f, std::size_t ranks, std::size_t t) {
  auto at = parallel::slice_indices(parallel::linear_split::column, {.in = h, .out = f, .bias = false}, ranks, t);
  for (const auto k :
       parallel::slice_indices(parallel::linear_split::row, {.in = f, .out = h, .bias = false}, ranks, t))
    at.push_back(f * h + k);
  return at;
}

}  // namespace trinity::train
