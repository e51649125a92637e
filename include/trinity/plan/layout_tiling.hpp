#pragma once
//! \file
//! The layouts of a GPU count: the tp x pp frames the layout search enumerates, and which GPU counts a training
//! job's layouts can tile at all, for the refusal of a count none tiles. A layout spans
//! tp x pp x cp x dp GPUs: tp splits the heads (model::check_tensor_split), pp at most the layers, cp divides the
//! sequence and dp (times a micro-batch) divides the global batch. The layout search prices what it enumerates;
//! this says why a count offers nothing to price and the nearest count below that does.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include <trinity/error.hpp>
#include <trinity/model/training/layout_checks.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/training_job.hpp>

namespace trinity::plan {

namespace detail {
//! Every tp and pp that divide `gpus` GPUs as the shape allows (tp splitting the heads, KV heads and FFN, so never
//! more than the heads; pp up to the layers), as f(tp, pp): the rule the search's frames and the tiling share.
template <class F>
void for_each_tp_pp(const model::transformer_shape& m, std::size_t gpus, F&& f) {
  for (std::size_t tp = 1; tp <= gpus && tp <= m.heads; ++tp) {
    if (gpus % tp != 0 || model::check_tensor_split(m, tp)) continue;
    for (std::size_t pp = 1; pp <= gpus / tp && pp <= m.layers; ++pp)
      if ((gpus / tp) % pp == 0) f(tp, pp);
  }
}

//! Where the weights go: every tp, pp and vpp of `gpus` GPUs the shape allows (for_each_tp_pp's, and vpp > 1
//! only over stages, with pp·vpp dividing the layers), as f(layout).
template <class F>
void for_each_frame(const model::transformer_shape& m, std::size_t gpus, F&& f) {
  for_each_tp_pp(m, gpus, [&](std::size_t tp, std::size_t pp) {
    model::parallel_layout l;
    l.tp = tp, l.pp = pp;
    for (l.vpp = 1; l.pp * l.vpp <= m.layers; ++l.vpp) {
      if (l.vpp > 1 && (l.pp == 1 || m.layers % (l.pp * l.vpp) != 0)) continue;
      f(l);
    }
  });
}
}  // namespace detail

//! Whether some tp x pp x cp x dp of `job` spans exactly `gpus` GPUs.
inline bool layouts_tile(const model::training_job& job, std::size_t gpus) {
  bool tiles = false;
  detail::for_each_tp_pp(job.shape, gpus, [&](std::size_t tp, std::size_t pp) {
    const std::size_t rest = gpus / (tp * pp);
    // cp runs over the sequence's divisors (a handful), not up to the sequence.
    for (std::size_t cp = 1; !tiles && cp * cp <= job.sequence; ++cp) {
      if (job.sequence % cp != 0) continue;
      for (const std::size_t c : {cp, job.sequence / cp}) tiles |= rest % c == 0 && job.global_batch % (rest / c) == 0;
    }
  });
  return tiles;
}

//! The largest count below `gpus` that some layout tiles, searched over the next `window` counts down.
inline std::optional<std::size_t> nearest_tiled_below(const model::training_job& job, std::size_t gpus,
                                                      std::size_t window = 4096) {
  for (std::size_t n = gpus; n-- > 1 && gpus - n <= window;)
    if (layouts_tile(job, n)) return n;
  return std::nullopt;
}

//! The refusal of a GPU count no layout tiles: the rule, the job's figures, and the nearest count that works.
[[noreturn]] inline void refuse_untiled(const model::training_job& job, std::size_t gpus) {
  const auto nearest = nearest_tiled_below(job, gpus);
  throw invalid_input(
      "gpus", "no layout spans " + std::to_string(gpus) +
                  " GPUs: tp x pp x cp x dp must equal it, with tp "
                  "splitting the " +
                  std::to_string(job.shape.heads) + " heads, pp at most the " + std::to_string(job.shape.layers) +
                  " layers, cp dividing the sequence of " + std::to_string(job.sequence) +
                  " and dp dividing the global batch of " + std::to_string(job.global_batch) + ". Fix: " +
                  (nearest ? std::to_string(*nearest) + " GPUs (the nearest count below that a layout spans)"
                           : std::string("fewer GPUs")) +
                  ", or a larger global_batch");
}

}  // namespace trinity::plan
