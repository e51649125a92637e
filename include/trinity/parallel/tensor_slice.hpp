#pragma once
//! \file
//! Where a tensor-parallel rank's slice of a linear layer sits in the layer whole. A layer's values whole are W
//! (out × in, row-major) then b (out) where it has one; a slice's are its part of W, row-major, then its part of
//! b, as tensor_parallel.hpp's layers hold them:
//!  - linear_split::column (column_parallel_linear): rank tr of t holds rows tr·out/t … of W, and of b;
//!  - linear_split::row (row_parallel_linear): columns tr·in/t … of every row of W, and b whole.
//! The map re-cuts a checkpoint saved over one tensor-parallel size for another, as Megatron's checkpoint
//! converter does: join the saved slices into the whole layer (shard::place), cut each new rank's slice from it
//! (shard::cut); an optimizer's state planes move by the same map.
//!
//!   const auto at = parallel::slice_indices(parallel::linear_split::row, {.in = 4096, .out = 1024}, t, tr);
//!   const auto mine = shard::cut(whole, at);

#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::parallel {

//! Which of a linear layer's dimensions its tensor-parallel ranks split: its outputs (column) or inputs (row).
enum class linear_split { column, row };

//! A linear layer's shape: y = x·Wᵀ (+ b), W out × in.
struct linear_layer {
  std::size_t in = 0, out = 0;
  bool bias = true;  // false for a layer without b (a mixture's experts)
  [[nodiscard]] std::size_t values() const noexcept { return out * in + (bias ? out : 0); }
};

//! The index in the layer's whole values (W, then b) of each value rank `tr` of `t` holds, in the order it holds
//! them. Refused where t does not divide the dimension the split cuts, or tr is not a rank of t.
inline std::vector<std::size_t> slice_indices(linear_split kind, const linear_layer& layer, std::size_t t,
                                              std::size_t tr) {
  const bool column = kind == linear_split::column;
  const std::size_t in = layer.in, out = layer.out, cut = column ? out : in;
  trinity::detail::require(t >= 1 && tr < t, "tensor_parallel", [&] {
    return "rank " + std::to_string(tr) + " is not one of " + std::to_string(t) + ". Fix: a rank in [0, t)";
  });
  trinity::detail::require(cut % t == 0, column ? "out" : "in", [&] {
    return std::to_string(t) + " tensor-parallel ranks do not split the layer's " + std::to_string(cut) +
           (column ? " outputs" : " inputs") + ". Fix: a tensor-parallel degree that divides it";
  });
  const std::size_t b = out * in, part = cut / t, first = tr * part;
  std::vector<std::size_t> at;
  at.reserve(column ? part * (in + 1) : out * (part + 1));
  if (column) {
    for (std::size_t k = first * in; k < (first + part) * in; ++k) at.push_back(k);
    if (layer.bias)
      for (std::size_t o = first; o < first + part; ++o) at.push_back(b + o);
  } else {
    for (std::size_t o = 0; o < out; ++o)
      for (std::size_t i = first; i < first + part; ++i) at.push_back(o * in + i);
    if (layer.bias)
      for (std::size_t o = 0; o < out; ++o) at.push_back(b + o);
  }
  return at;
}

}  // namespace trinity::parallel
