#pragma once
//! \file
//! Which tensor-parallel split each of trinity-train's layers has. The model pairs its layers as Megatron's MLP:
//! even layers are column-parallel, odd ones row-parallel; parallel::slice_indices says where a slice's values sit
//! in the layer whole. A layer of one slice is the layer itself. The map cuts each rank's initial parameters, and
//! re-cuts a checkpoint saved over another tensor-parallel size (shard::recut: the saved slices joined into the
//! layer whole, this rank's slice cut from it, the optimizer's state planes moved as the parameters are).

#include <cstddef>
#include <string>
#include <vector>

#include <trinity/parallel/tensor_slice.hpp>

#include <trinity/train/mlp.hpp>

namespace trinity::train {

inline parallel::linear_split split_of(std::size_t l) {
  return l % 2 == 0 ? parallel::linear_split::column : parallel::linear_split::row;
}

//! Where rank tr of t holds layer l's values: the index of each in the layer whole.
inline std::vector<std::size_t> slice_indices(const mlp_shape& shape, std::size_t l, std::size_t t, std::size_t tr) {
  return parallel::slice_indices(split_of(l), {.in = shape.in(l), .out = shape.out(l)}, t, tr);
}

//! What of layer l `t` tensor-parallel ranks do not split (its outputs for a column layer, its inputs for a row
//! layer), or nothing where they split it.
inline std::string unsplit_by(const mlp_shape& shape, std::size_t l, std::size_t t) {
  const bool column = split_of(l) == parallel::linear_split::column;
  const std::size_t n = column ? shape.out(l) : shape.in(l);
  if (n % t == 0) return {};
  return "layer " + std::to_string(l) + "'s " + std::to_string(n) + (column ? " outputs" : " inputs");
}

}  // namespace trinity::train
