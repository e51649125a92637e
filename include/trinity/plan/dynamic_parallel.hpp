#pragma once
//! \file
//! Dynamic parallelism (the paper's §4.1): a training set whose sequences come
//! in several lengths (video clips at different resolutions and frame counts)
//! runs each length bucket under its own layout, instead of one layout sized
//! for the longest.
//!
//! What may change per bucket, and what may not: the weights stay where they
//! are. A frame fixes tensor and pipeline parallelism (t, p, v), the ZeRO stage,
//! where the optimizer states live (device, or offloaded to the tier below), the
//! gradient codec of the one reduction, and the w = g/(t·p) ranks that hold the
//! same weights; each bucket then picks
//! how those w ranks split its sequences, c-way context parallelism and
//! d = w/c replicas, with its micro-batch, recomputation policy and sequence
//! parallelism. Weights, gradients and optimizer states are sharded over the
//! same w ranks whatever c is, so nothing is resharded between buckets (as in
//! dynamic sequence parallelism for video models).
//!
//! ZeRO-3 is left out: it gathers the weights again for every micro-batch, so
//! its traffic is not the frame's alone.
//!
//! A step takes the whole mixed batch: each bucket's share of the sequences
//! through its own layout (its own pipeline fill and drain), then one gradient
//! reduction (coded, where the frame names a codec), one optimizer step and,
//! offloaded, one round trip to the offload tier: all the frame's, priced once.
//! The codecs are the layout search's (o.codecs, else the system's devices'),
//! held to the workload's error budget.
//! The static baseline is the best single layout that runs and fits every
//! bucket; the gain is its step time over the dynamic plan's.
//!
//!   auto r = plan::plan_dynamic(plan::presets::dgx_h100(), video_workload, {.gpus = 64});
//!   r.frame; r.buckets[i].layout; r.step; r.static_layout; r.static_step; r.gain();

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>

namespace trinity::plan {

struct dynamic_bucket {
  sequence_bucket bucket;
  std::size_t sequences = 0;       //!< of the global batch
  model::parallel_layout layout;   //!< its choice within the frame
  model::parallel_step_cost cost;  //!< its sequences alone, as one step
  seconds time{};                  //!< its share of the step: cost.step without the frame's (frame_time)
};

struct dynamic_result {
  std::size_t gpus = 0, frames = 0, layouts_priced = 0;
  model::parallel_layout frame;          //!< the dynamic plan's tp, pp, vpp, ZeRO (cp, dp as its first bucket's)
  std::vector<dynamic_bucket> buckets;   //!< the dynamic plan, bucket by bucket
  seconds step{}, shared{};              //!< the dynamic step, and its reduction, coding, optimizer and offload
  bytes device_bytes{};                  //!< the fullest bucket's peak per GPU
  model::parallel_layout static_layout;  //!< the best single layout for every bucket
  std::vector<dynamic_bucket> static_buckets;
  seconds static_step{};
  bytes static_device_bytes{};
  [[nodiscard]] double gain() const { return static_step / step; }
};

namespace detail {

//! A bucket's sequences under a layout: none (no step) when the layout cannot run them.
inline std::optional<model::parallel_step_cost> price_bucket(const model::training_job& base, const sequence_bucket& b,
                                                             std::size_t sequences, const model::training_cluster& c,
                                                             const model::parallel_layout& l,
                                                             const model::compressor_cost& codec) {
  auto j = base;
  j.sequence = b.sequence;
  j.global_batch = sequences;
  if (model::check_layout(j, l)) return std::nullopt;
  return model::price(j, c, l, codec);
}

//! What a step pays once, whatever its buckets (its reduction and update): the gradient's reduction and coding,
//! the embedding group's all-reduce, the optimizer step, and offloaded, the round trip to the offload tier.
inline seconds frame_time(const model::parallel_step_cost& c) {
  return c.dp_comm + c.codec + c.embedding_sync + c.optimizer + c.offload;
}

//! Whole sequences per bucket: each bucket's share of global_batch must be a whole number of sequences.
inline std::vector<std::size_t> whole_sequences(const training_workload& w, std::size_t global_batch) {
  std::vector<std::size_t> sequences;
  std::size_t all = 0;
  for (const auto& b : w.sequence_mix) {
    const double n = b.share * static_cast<double>(global_batch);
    trinity::detail::require(
        std::abs(n - std::round(n)) < 1e-6 && n >= 1, "workload.sequence_mix",
        b.name + "'s share " + std::to_string(b.share) + " of " + std::to_string(global_batch) +
            " sequences is not a whole number of them. Fix: shares that split global_batch exactly");
    sequences.push_back(static_cast<std::size_t>(std::llround(n)));
    all += sequences.back();
  }
  trinity::detail::require(all == global_batch, "workload.sequence_mix",
                           "the buckets' sequences do not add up to global_batch");
  return sequences;
}

//! Every per-bucket choice within frame `l` of `weights` weight replicas: context-parallel degree, micro-batch
//! and recomputation policy.
inline std::vector<model::parallel_layout> bucket_choices(model::parallel_layout l, std::size_t weights,
                                                          bool flash_attention) {
  std::vector<model::parallel_layout> choices;
  for (l.cp = 1; l.cp <= weights; ++l.cp) {
    if (weights % l.cp != 0) continue;
    l.dp = weights / l.cp;
    for (const auto mbs : searched_micro_batches) {
      l.micro_batch = mbs;
      for_each_policy(l, flash_attention, [&](const model::parallel_layout& x) { choices.push_back(x); });
    }
  }
  return choices;
}

//! The search's best so far: the dynamic plan and the static one in `r`, and their step times.
struct dynamic_search {
  dynamic_result& r;
  double best_dynamic = std::numeric_limits<double>::infinity();
  double best_static = std::numeric_limits<double>::infinity();
};

//! Prices one frame's `choices` (codec `k`) for every bucket; keeps the frame's best choice per bucket as the
//! dynamic plan, and a choice that runs every bucket as the static plan, where each beats the best so far.
inline void price_frame(const training_workload& w, const model::training_job& base,
                        const std::vector<std::size_t>& sequences, const model::training_cluster& cluster,
                        const std::vector<model::parallel_layout>& choices, const model::compressor_cost& k,
                        dynamic_search& best) {
  auto& r = best.r;
  std::vector<std::optional<dynamic_bucket>> pick(w.sequence_mix.size());
  seconds shared{};
  bool have_shared = false;
  for (const auto& c : choices) {
    std::vector<dynamic_bucket> each;
    bool all_fit = true;
    for (std::size_t b = 0; b < w.sequence_mix.size(); ++b) {
      const auto cost = price_bucket(base, w.sequence_mix[b], sequences[b], cluster, c, k);
      ++r.layouts_priced;
      if (!cost || cost->device_bytes > cluster.memory || cost->offloaded > cluster.host_memory) {
        all_fit = false;
        continue;
      }
      const seconds own = cost->step - frame_time(*cost);
      if (!have_shared) {  // the frame's reduction, coding, update and offload: the same for every choice
        shared = frame_time(*cost);
        have_shared = true;
      }
      dynamic_bucket d{w.sequence_mix[b], sequences[b], c, *cost, own};
      if (!pick[b] || own < pick[b]->time) pick[b] = d;
      each.push_back(std::move(d));
    }
    if (!all_fit) continue;
    seconds total = shared;
    bytes peak{};
    for (const auto& d : each) {
      total += d.time;
      peak = std::max(peak, d.cost.device_bytes);
    }
    if (total.value() < best.best_static) {
      best.best_static = total.value();
      r.static_layout = c;
      r.static_buckets = each;
      r.static_step = total;
      r.static_device_bytes = peak;
    }
  }
  if (std::any_of(pick.begin(), pick.end(), [](const auto& x) { return !x.has_value(); })) return;
  seconds total = shared;
  for (const auto& x : pick) total += x->time;
  if (total.value() >= best.best_dynamic) return;
  best.best_dynamic = total.value();
  r.frame = pick.front()->layout;
  r.buckets.clear();
  r.device_bytes = bytes{};
  for (const auto& x : pick) {
    r.buckets.push_back(*x);
    r.device_bytes = std::max(r.device_bytes, x->cost.device_bytes);
  }
  r.step = total;
  r.shared = shared;
}

}  // namespace detail

//! Plans every frame of `o.gpus` GPUs (default: the workload's ranks) for the workload's sequence_mix, and the
//! best static layout beside it. Throws invalid_input naming the field when nothing runs or fits.
inline dynamic_result plan_dynamic(const system& s, const training_workload& w, const parallel_options& o = {}) {
  validate(s);
  trinity::detail::require(
      w.shape.has_value(), "workload",
      w.name + " has no transformer shape; give heads, ffn_hidden and vocabulary (docs/parallelism.md)");
  trinity::detail::require(
      !w.sequence_mix.empty(), "workload.sequence_mix",
      w.name +
          " gives one sequence length; dynamic parallelism plans per length. Fix: give "
          "sequence_mix, e.g. [{\"sequence\": 14040, \"share\": 0.5}, {\"sequence\": 75600, \"share\": 0.5}]");
  trinity::detail::require(o.objective == objective::time, "objective", "dynamic parallelism plans for step time only");
  const std::size_t g = o.gpus ? o.gpus : w.ranks(s);
  trinity::detail::require(s.scale_out.has_value() || g <= s.device.count, "gpus",
                           std::to_string(g) + " GPUs, and " + s.name + " has " + std::to_string(s.device.count) +
                               " in one domain with no scale-out link");
  const auto base = job_of(w, g);
  model::validate(base.shape);
  const auto cluster = usable_cluster(s, w, o);
  const auto& m = base.shape;
  const auto codecs = codecs_of(s, o);

  const auto sequences = detail::whole_sequences(w, base.global_batch);

  dynamic_result r;
  r.gpus = g;
  detail::dynamic_search best{r};
  detail::for_each_frame(m, g, [&](model::parallel_layout f) {
    const std::size_t weights = g / (f.tp * f.pp);
    const int least = model::least_zero_stage(base);  // 1 for weights kept in fp8 alone
    for (f.zero_stage = least; f.zero_stage <= (weights == 1 ? least : 2); ++f.zero_stage)
      for (int off = 0; off <= (cluster.host_memory > bytes{} ? 1 : 0); ++off)
        for (const auto& k : codecs) {
          // A codec only where ranks share weights and so reduce a gradient, and only within the error budget.
          if (!model::is_uncoded(k) && (weights == 1 || k.relative_error > w.error_budget)) continue;
          f.offload = off == 1;
          f.codec = model::is_uncoded(k) ? std::string() : k.name;
          ++r.frames;
          detail::price_frame(w, base, sequences, cluster, detail::bucket_choices(f, weights, base.flash_attention), k,
                              best);
        }
  });
  trinity::detail::require(std::isfinite(best.best_dynamic), "workload",
                           "no layout of " + std::to_string(g) + " GPUs runs every bucket of " + w.name + " within " +
                               to_string(cluster.memory) +
                               " per GPU. Fix: more GPUs (--gpus), shorter sequences or a smaller batch");
  // The static plan is one of the dynamic plan's choices, so the dynamic plan is never slower; where no single
  // layout fits every bucket there is no static plan to compare with.
  if (!std::isfinite(best.best_static)) r.static_step = seconds{std::numeric_limits<double>::infinity()};
  return r;
}

}  // namespace trinity::plan
