#pragma once
//! \file
//! One layer's values whole, as a checkpoint holds them: its parameters, then `states_per` planes of them (the
//! optimizer's, value for value beside the parameters), and the steps the run that saved them had taken. A
//! layout that holds a layer in parts (a tensor-parallel slice: parallel/tensor_slice.hpp) moves its values by
//! a map of indices, the parameters and every state plane alike: `cut` takes a part out of the whole, `place`
//! puts one back, so a checkpoint saved in one layout's parts loads into another's (load_layers takes a
//! layer_values from its source as well as a reader).
//!
//!   shard::layer_values whole = ...;                              // e.g. checkpoint_reader::values(l)
//!   const auto mine = shard::cut(whole, parallel::slice_indices(kind, layer, t, tr));

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::shard {

struct layer_values {
  std::vector<float> parameters, states;
  std::size_t states_per = 0;
  long steps = 0;
};

//! The values of `whole` at `at`, in that order: the part a layout holds.
inline layer_values cut(const layer_values& whole, std::span<const std::size_t> at) {
  const std::size_t n = whole.parameters.size(), k = at.size(), sp = whole.states_per;
  trinity::detail::require(whole.states.size() == n * sp, "layer_values", "states are not states_per planes");
  layer_values part{std::vector<float>(k), std::vector<float>(k * sp), sp, whole.steps};
  for (std::size_t j = 0; j < k; ++j) {
    trinity::detail::require(at[j] < n, "at", [&] {
      return "index " + std::to_string(at[j]) + " is past the layer's " + std::to_string(n) + " values";
    });
    part.parameters[j] = whole.parameters[at[j]];
    for (std::size_t s = 0; s < sp; ++s) part.states[s * k + j] = whole.states[s * n + at[j]];
  }
  return part;
}

//! Puts `part`'s values at `at` of `whole` (cut's inverse where `at` is the map cut took it by). Refused where the
//! part is not one of `at`'s size, or another optimizer's or run's.
inline void place(layer_values& whole, const layer_values& part, std::span<const std::size_t> at) {
  const std::size_t n = whole.parameters.size(), k = at.size(), sp = whole.states_per;
  trinity::detail::require(
      part.parameters.size() == k && part.states.size() == k * sp && part.states_per == sp && part.steps == whole.steps,
      "layer_values", [&] {
        return "a part of " + std::to_string(part.parameters.size()) + " values after " + std::to_string(part.steps) +
               " steps does not fill " + std::to_string(k) + " places of a layer after " + std::to_string(whole.steps) +
               ": the parts come from another model or run";
      });
  for (std::size_t j = 0; j < k; ++j) {
    trinity::detail::require(at[j] < n, "at", [&] {
      return "index " + std::to_string(at[j]) + " is past the layer's " + std::to_string(n) + " values";
    });
    whole.parameters[at[j]] = part.parameters[j];
    for (std::size_t s = 0; s < sp; ++s) whole.states[s * n + at[j]] = part.states[s * k + j];
  }
}

//! A layer one layout holds in parts, re-cut for another: `parts` in order, part q's values at `at(parts.size(),
//! q)` of the layer's `values` whole, joined (where parts overlap, as a row-parallel layer's b on every rank,
//! part 0's copy is kept) and part `rank` of `ranks`, at `at(ranks, rank)`, cut from it.
template <class At>
layer_values recut(std::span<const layer_values> parts, std::size_t values, At&& at, std::size_t ranks,
                   std::size_t rank) {
  trinity::detail::require(!parts.empty(), "parts", "a layer re-cut from no parts");
  const std::size_t sp = parts.front().states_per;
  layer_values whole{std::vector<float>(values), std::vector<float>(values * sp), sp, parts.front().steps};
  for (std::size_t q = parts.size(); q-- > 0;) place(whole, parts[q], at(parts.size(), q));  // part 0 last
  return cut(whole, at(ranks, rank));
}

}  // namespace trinity::shard
