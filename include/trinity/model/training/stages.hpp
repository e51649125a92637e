#pragma once
//! \file
//! Where a pipeline puts the layers: each stage's, as Megatron-LM places them or as the layout states them, and of
//! them those recomputed, the inputs checkpointed and the layers a group rebuilds at once.
//! One seam of the training step model; model/parallel_training.hpp includes them all and says what a step costs.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/model/layout_violation.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/pipeline_layout.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>
#include <trinity/model/training/activations.hpp>

namespace trinity::model {

//! Layers a p-stage pipeline of v model chunks a stage places on its first, middle and last stages, as
//! Megatron-LM places them when they do not divide evenly: every middle stage holds ⌈l/(p·v)⌉·v (whole
//! chunks), and the first and last share what is left, the first the larger half (the last also computes the
//! logits). Even splits give every stage l/p.
struct stage_layers {
  std::size_t first = 0, middle = 0, last = 0;  //!< middle: the fullest, where a stated layout makes them differ
  std::size_t middle_fewest = 0;                //!< the emptiest middle stage: middle, unless a layout parts them
  friend bool operator==(const stage_layers&, const stage_layers&) = default;
};
inline stage_layers pipeline_stage_layers(std::size_t layers, std::size_t p, std::size_t v = 1) {
  if (p <= 1) return {layers, layers, layers, layers};
  const std::size_t middle = (layers + p * v - 1) / (p * v) * v;
  // Whole chunks that leave the first stage nothing (80 layers on 32 stages): Megatron's split does not apply,
  // and every stage is priced as holding the fullest's count, an upper bound.
  if (p > 2 && middle * (p - 2) >= layers) return {middle, middle, middle, middle};
  const std::size_t ends = layers - middle * (p - 2);  // at most 2·middle, since middle·p ≥ layers
  const std::size_t first = std::min(middle, (ends + 1) / 2);
  return {first, p > 2 ? middle : first, ends - first, p > 2 ? middle : first};
}

//! The end stages whose layers the layout states: 0, 1 or 2.
inline std::size_t stated_stages(const parallel_layout& l) noexcept {
  return (l.first_stage_layers ? std::size_t{1} : 0) + (l.last_stage_layers ? std::size_t{1} : 0);
}

//! Whether the layout states its stages twice: pipeline_layout places every stage's layers, and
//! first_stage_layers or last_stage_layers beside it would say it again.
inline layout_verdict check_stated_once(const parallel_layout& l) {
  if (l.pipeline_layout.empty() || stated_stages(l) == 0) return std::nullopt;
  const bool first = l.first_stage_layers.has_value();
  return layout_violation{first ? "first_stage_layers" : "last_stage_layers",
                          std::to_string(first ? *l.first_stage_layers : *l.last_stage_layers),
                          "pipeline_layout places every stage's layers already", "give one or the other"};
}

//! check_stated_once's verdict as 0.1 gave it, "field: why" or empty.
[[deprecated(
    "use check_stated_once, which returns the field, what is wrong and the fix apart (CHANGELOG.md, "
    "0.2.0)")]] inline std::string
stated_twice(const parallel_layout& l) {
  return message_of(check_stated_once(l));
}

//! The layers each stage holds under the layout: where it states every chunk's (pipeline_layout), each stage's
//! sum; where it states its first or last stage's (Megatron-Core's get_num_layers_to_build), those, and the
//! other stages split the rest evenly; otherwise the split above. check_layout has checked the statement.
inline stage_layers pipeline_stage_layers(std::size_t layers, const parallel_layout& l) {
  if (!l.pipeline_layout.empty() && l.pp > 1) {
    // Stated chunk by chunk: each stage's own sum; the middle stages priced at the fullest of them.
    const auto per_rank = layers_per_rank(parse_pipeline_layout(l.pipeline_layout), l.pp);
    const auto [fewest, fullest] = l.pp > 2 ? std::minmax_element(per_rank.begin() + 1, per_rank.end() - 1)
                                            : std::pair{per_rank.begin(), per_rank.begin()};
    return {per_rank.front(), *fullest, per_rank.back(), *fewest};
  }
  const std::size_t stated = stated_stages(l);
  if (stated == 0 || l.pp <= 1) return pipeline_stage_layers(layers, l.pp, l.vpp);
  const std::size_t first = l.first_stage_layers.value_or(0), last = l.last_stage_layers.value_or(0);
  const std::size_t each = l.pp > stated ? (layers - first - last) / (l.pp - stated) : first;
  const std::size_t middle = l.pp > 2 ? each : l.first_stage_layers.value_or(each);
  return {l.first_stage_layers.value_or(each), middle, l.last_stage_layers.value_or(each), middle};
}

namespace detail {
//! Of the layers each stage holds (`stages`), split into model chunks as the layout splits them, `per_chunk` (a
//! chunk's layers → a count) summed over each stage's chunks: the first, the middle, the last and the emptiest middle
//! stage's. A stated layout gives each chunk's layers, and of the middle stages the fullest's (and the emptiest's)
//! count, the largest of those that hold as many; otherwise a stage's layers split as evenly as they go over its vpp
//! chunks.
template <class PerChunk>
stage_layers sum_over_chunks(const parallel_layout& l, const stage_layers& stages, PerChunk per_chunk) {
  if (!l.pipeline_layout.empty() && l.pp > 1) {
    const auto chunks = parse_pipeline_layout(l.pipeline_layout);
    std::vector<std::size_t> held(l.pp, 0), counted(l.pp, 0);
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      held[c % l.pp] += chunks[c].layers;
      counted[c % l.pp] += per_chunk(chunks[c].layers);
    }
    // The middle stages are priced at the fullest; of those that hold as many, the one that counts most.
    std::size_t middle = 0, fewest = counted.front();
    bool any_fewest = false;
    for (std::size_t r = 1; r + 1 < l.pp; ++r) {
      if (held[r] == stages.middle) middle = std::max(middle, counted[r]);
      if (held[r] == stages.middle_fewest) fewest = any_fewest ? std::min(fewest, counted[r]) : counted[r];
      any_fewest = any_fewest || held[r] == stages.middle_fewest;
    }
    if (l.pp == 2) middle = fewest = counted.front();
    return {counted.front(), middle, counted.back(), fewest};
  }
  const std::size_t v = l.pp > 1 ? l.vpp : 1;
  const auto stage = [&](std::size_t L) {  // `fuller` chunks of q + 1 layers, the rest of q
    const std::size_t q = L / v, fuller = L % v;
    return fuller * per_chunk(q + 1) + (v - fuller) * per_chunk(q);
  };
  return {stage(stages.first), stage(stages.middle), stage(stages.last), stage(stages.middle_fewest)};
}

//! Whether the layout recomputes every layer in groups of recompute_layers (the uniform method).
inline bool uniform_groups(const parallel_layout& l) noexcept {
  return l.recompute == recomputation::full && l.recompute_layers && l.recompute_method == recompute_method::uniform;
}
}  // namespace detail

//! Of the layers each stage holds (`stages`), those recomputed in full: under recompute=full with
//! recompute_layers = n, the first n of each of the stage's model chunks (Megatron-Core's block method counts them
//! in each chunk's TransformerBlock); under recompute=full without it, or with the uniform method, every one; else
//! none.
inline stage_layers recomputed_stage_layers(const parallel_layout& l, const stage_layers& stages) {
  if (l.recompute != recomputation::full) return {};
  if (!l.recompute_layers || detail::uniform_groups(l)) return stages;
  const std::size_t n = *l.recompute_layers;
  return detail::sum_over_chunks(l, stages, [n](std::size_t layers) { return std::min(n, layers); });
}

//! Under recompute=full with the uniform method, the inputs each stage checkpoints a micro-batch: one a group of
//! recompute_layers of each chunk's layers, a chunk's last group the layers left (Megatron-Core's
//! TransformerBlock._checkpointed_forward: chunk_end = min(layer_idx + recompute_num_layers, num_layers)). Each
//! layer's own elsewhere: the stage's layers under full recomputation, none without it.
inline stage_layers checkpointed_stage_inputs(const parallel_layout& l, const stage_layers& stages) {
  if (!detail::uniform_groups(l)) return recomputed_stage_layers(l, stages);
  const std::size_t n = *l.recompute_layers;
  return detail::sum_over_chunks(l, stages, [n](std::size_t layers) { return (layers + n - 1) / n; });
}

//! The layers a group of the uniform method rebuilds at once on the fullest chunk: recompute_layers, or the chunk's
//! layers where it holds fewer; 1 under every other policy (a recomputed layer rebuilds itself).
inline std::size_t rebuilt_group_layers(const parallel_layout& l, const stage_layers& stages) {
  if (!detail::uniform_groups(l)) return 1;
  std::size_t fullest = 0;
  if (!l.pipeline_layout.empty() && l.pp > 1)
    for (const auto& c : parse_pipeline_layout(l.pipeline_layout)) fullest = std::max(fullest, c.layers);
  else {
    const std::size_t v = l.pp > 1 ? l.vpp : 1;
    fullest = (std::max({stages.first, stages.middle, stages.last}) + v - 1) / v;
  }
  return std::max<std::size_t>(1, std::min(*l.recompute_layers, fullest));
}

}  // namespace trinity::model
