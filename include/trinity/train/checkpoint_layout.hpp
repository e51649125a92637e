#pragma once
//! \file
//! Where trinity-train's checkpoints keep a model's dense layers. A model in one piece (one pipeline stage, no
//! tensor slices) is saved at the checkpoint's top, as the data-parallel loop writes it. A model split over
//! pipeline ranks and tensor slices is saved a directory a piece, stage-<r>-of-<p>x<v>-slice-<t>-of-<T>: pipeline
//! rank r's chunks r, r + p, ... (v of them, each (layers)/(p·v) layers) in order, each layer tensor rank t's
//! slice (tensor_slices.hpp), sharded over the piece's data-parallel group as the run shards it. A run resumes at
//! any pipeline layout, data-parallel size, ZeRO stage and tensor-parallel size: each layer is found in whichever
//! piece holds it, its slices joined and re-cut where the run splits it over another number of ranks, and its
//! chunk cut for this rank.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/shard/checkpoint.hpp>
#include <trinity/shard/layer_values.hpp>
#include <trinity/train/detail/directory_numbers.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/tensor_slices.hpp>

namespace trinity::train {

//! How a checkpoint's dense layers were split: p pipeline ranks of v chunks each, every layer in t slices.
struct saved_stages {
  std::size_t p = 1, v = 1, t = 1;
  [[nodiscard]] bool whole() const noexcept { return p == 1 && v == 1 && t == 1; }
  friend bool operator==(const saved_stages&, const saved_stages&) = default;
};
inline std::string stage_directory(std::size_t r, const saved_stages& s, std::size_t tr) {
  return "stage-" + std::to_string(r) + "-of-" + std::to_string(s.p) + "x" + std::to_string(s.v) + "-slice-" +
         std::to_string(tr) + "-of-" + std::to_string(s.t);
}
//! Where pipeline rank r's tensor slice tr of a model split as `s` is saved in checkpoint `dir`.
inline std::filesystem::path stage_path(const std::filesystem::path& dir, std::size_t r, const saved_stages& s,
                                        std::size_t tr) {
  return s.whole() ? dir : dir / stage_directory(r, s, tr);
}

//! The split the dense layers in `dir` were saved at, from the name of its first piece's directory (rank 0's
//! slice 0), or the top's rank-0 file. Refused where it holds none, or two.
inline saved_stages stages_saved_in(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw invalid_input("--load-checkpoint", dir.string() + " is not a directory holding a checkpoint");
  std::optional<saved_stages> found;
  const auto add = [&](const saved_stages& s) {
    if (found && *found != s)
      throw invalid_input("checkpoint", dir.string() + " holds a model saved at two layouts (--pp " +
                                            std::to_string(found->p) + " --vpp " + std::to_string(found->v) + " --tp " +
                                            std::to_string(found->t) + ", and --pp " + std::to_string(s.p) + " --vpp " +
                                            std::to_string(s.v) + " --tp " + std::to_string(s.t) +
                                            "). Fix: save each run into a directory of its own");
    found = s;
  };
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string n = entry.path().filename().string();
    if (n.starts_with("rank-0-of-") && n.ends_with(".ckpt")) add({});
    // rank 0's slice 0 names the split
    const auto s = detail::numbers_in(n, {"stage-0-of-", "x", "-slice-0-of-"});
    if (s && !saved_stages{(*s)[0], (*s)[1], (*s)[2]}.whole()) add({(*s)[0], (*s)[1], (*s)[2]});
  }
  if (!found)
    throw invalid_input("--load-checkpoint",
                        dir.string() +
                            " holds no dense layers (no rank-0-of-<n>.ckpt, no stage-0-of-<p>x<v>-slice-0-of-"
                            "<t> directory). Fix: a directory --save-checkpoint wrote");
  return *found;
}

namespace detail {
//! A checkpoint of another model: refused by --layers, with `what` says why.
inline invalid_input layers_refused(const std::filesystem::path& dir, std::size_t total, const std::string& what) {
  return invalid_input("--layers", what + ": the checkpoint in " + dir.string() +
                                       " is of another model (this run's has " + std::to_string(total) +
                                       " layers, --layers + 1). Fix: --layers as saved");
}
//! The split `saved` checked against this run's model, whose `layers` this rank loads: the layers a saved chunk
//! holds. The counts come from a directory's name: bounded by the layers before they multiply, and the slices by the
//! widths they split before a directory a slice is opened.
inline std::size_t saved_chunk_layers(const std::filesystem::path& dir, const saved_stages& saved,
                                      const std::vector<std::size_t>& layers, const mlp_shape& shape) {
  const std::size_t total = shape.layers();
  if (saved.p > total || saved.v > total)
    throw layers_refused(dir, total,
                         "its " + std::to_string(saved.p) + " pipeline ranks of " + std::to_string(saved.v) +
                             " chunks hold more chunks than layers");
  const std::size_t chunks = saved.p * saved.v;
  if (total % chunks != 0)
    throw layers_refused(dir, total,
                         "its " + std::to_string(chunks) + " pipeline chunks do not split the model's layers");
  for (const std::size_t l : layers)
    if (const auto unsplit = unsplit_by(shape, l, saved.t); !unsplit.empty())
      throw invalid_input("--width", "the checkpoint in " + dir.string() + " split each layer over " +
                                         std::to_string(saved.t) + " tensor-parallel ranks, which do not split " +
                                         unsplit + ": it is of another model. Fix: --width as saved");
  return total / chunks;
}
//! Layer l's slices, read from the pieces that hold them, checked: each a slice of this model's layer, all after as
//! many steps.
template <class Reader>
std::vector<shard::layer_values> saved_slices(const std::filesystem::path& dir, const saved_stages& saved,
                                              const mlp_shape& shape, std::size_t l, std::size_t r, std::size_t at,
                                              Reader& reader) {
  std::vector<shard::layer_values> slices;
  for (std::size_t s = 0; s < saved.t; ++s) {
    slices.push_back(reader(r, s).values(at));
    const std::size_t want = slice_indices(shape, l, saved.t, s).size();
    if (slices.back().parameters.size() != want || slices.back().steps != slices.front().steps)
      throw invalid_input("checkpoint", stage_path(dir, r, saved, s).string() + " holds layer " + std::to_string(l) +
                                            " as " + std::to_string(slices.back().parameters.size()) +
                                            " values after " + std::to_string(slices.back().steps) +
                                            " steps; a slice of this model's layer is " + std::to_string(want) +
                                            " values, and slice 0 had taken " + std::to_string(slices.front().steps) +
                                            ": the slices come from another model or run. Fix: --width as "
                                            "saved, and each run saved into a directory of its own");
  }
  return slices;
}
}  // namespace detail

//! Restores this rank's dense layers from checkpoint `dir` into `states` (over its data-parallel group, where
//! it is rank `dp_rank`): `layers` holds the model's layer index of each of states' layers, and this rank holds
//! tensor slice `tr` of `tensor`, whatever the tensor-parallel size the checkpoint was saved at. Returns the steps
//! the layers had taken.
template <class States>
long load_stages(const std::filesystem::path& dir, States& states, int dp_rank, const std::vector<std::size_t>& layers,
                 const mlp_shape& shape, std::size_t tensor, std::size_t tr) {
  const saved_stages saved = stages_saved_in(dir);
  const std::size_t per = detail::saved_chunk_layers(dir, saved, layers, shape);
  std::map<std::pair<std::size_t, std::size_t>, shard::checkpoint_reader> readers;  // by saved pipeline rank, slice
  const auto reader = [&](std::size_t r, std::size_t slice) -> const shard::checkpoint_reader& {
    auto it = readers.find({r, slice});
    if (it == readers.end()) {
      const auto piece = stage_path(dir, r, saved, slice);
      it = readers.emplace(std::pair{r, slice}, piece).first;
      if (it->second.layers() != saved.v * per)
        throw detail::layers_refused(dir, shape.layers(),
                                     piece.string() + " holds " + std::to_string(it->second.layers()) +
                                         " layers, not " + std::to_string(saved.v * per));
    }
    return it->second;
  };
  // Where layer l sits: its saved pipeline rank, and its index among that rank's layers.
  const auto place = [&](std::size_t l) {
    const std::size_t chunk = l / per;
    return std::pair{chunk % saved.p, chunk / saved.p * per + l % per};
  };
  if (saved.t == tensor)
    return shard::load_layers(states, dp_rank, [&](std::size_t i) {
      const auto [r, at] = place(layers.at(i));
      return std::pair{&reader(r, tr), at};
    });
  return shard::load_layers(states, dp_rank, [&](std::size_t i) {
    const std::size_t l = layers.at(i);
    const auto [r, at] = place(l);
    return shard::recut(
        detail::saved_slices(dir, saved, shape, l, r, at, reader), shape.layer_size(l),
        [&](std::size_t t, std::size_t s) { return slice_indices(shape, l, t, s); }, tensor, tr);
  });
}

}  // namespace trinity::train
