#pragma once
//! \file
//! One parallel layout as one type: tensor, pipeline and context parallelism
//! composed with a shard scheme (DDP or a ZeRO stage, shard/schemes.hpp) over
//! the data-parallel ranks, checked at compile time.
//!
//!   using scheme = parallel::scheme<parallel::tensor_parallel<2>, parallel::pipeline<4, 2>,
//!                                   parallel::context_parallel<1>, shard::zero<1>>;
//!   const auto g = parallel::groups_of<scheme>(world_size, rank);   // g.tp, g.pp, g.cp, g.dp: world ranks
//!   comm::group tp(c, g.tp), pp(c, g.pp), dp(c, g.weights);
//!   shard::data_parallel<scheme::shard, comm::group<C>> states(dp, ...);  // this rank's layers' states
//!
//! Ranks are laid out as Megatron-Core lays them out and model/parallel_training.hpp
//! prices them (model::span): tensor innermost, then context, then data, the
//! pipeline outermost, so a tensor group is the GPUs that share the fastest
//! link and a stage's data-parallel reduction stays inside a node where the
//! stage fits in one, while the pipeline's sends cross nodes.
//! A pipeline with ZeRO-3 does not compile: stage 3 would gather every stage's
//! weights again for every micro-batch.

#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include <trinity/concepts/shard_scheme.hpp>
#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/shard/schemes.hpp>

namespace trinity::parallel {

template <std::size_t T>
struct tensor_parallel {
  static_assert(T >= 1, "trinity::parallel::tensor_parallel<T>: T GPUs share each matrix; T must be at least 1");
  static constexpr std::size_t degree = T;
};

template <std::size_t P, std::size_t V = 1>
struct pipeline {
  static_assert(P >= 1, "trinity::parallel::pipeline<P, V>: P stages; P must be at least 1");
  static_assert(V >= 1, "trinity::parallel::pipeline<P, V>: V model chunks per stage; V must be at least 1");
  static_assert(
      V == 1 || P > 1,
      "trinity::parallel::pipeline<1, V>: interleaving needs pipeline stages. Fix: pipeline<P, V> with P > 1, "
      "or pipeline<1>");
  static constexpr std::size_t stages = P;
  static constexpr std::size_t virtual_stages = V;
};

template <std::size_t C>
struct context_parallel {
  static_assert(C >= 1, "trinity::parallel::context_parallel<C>: C GPUs share each sequence; C must be at least 1");
  static constexpr std::size_t degree = C;
};

template <class T>
inline constexpr bool is_tensor_parallel = false;
template <std::size_t T>
inline constexpr bool is_tensor_parallel<tensor_parallel<T>> = true;
template <class T>
inline constexpr bool is_pipeline = false;
template <std::size_t P, std::size_t V>
inline constexpr bool is_pipeline<pipeline<P, V>> = true;
template <class T>
inline constexpr bool is_context_parallel = false;
template <std::size_t C>
inline constexpr bool is_context_parallel<context_parallel<C>> = true;

template <class TP = tensor_parallel<1>, class PP = pipeline<1>, class CP = context_parallel<1>,
          class Shard = shard::replicate>
struct scheme {
  static_assert(is_tensor_parallel<TP>,
                "trinity::parallel::scheme: the first slot takes parallel::tensor_parallel<T>. Fix: "
                "scheme<tensor_parallel<2>, ...>");
  static_assert(
      is_pipeline<PP>,
      "trinity::parallel::scheme: the second slot takes parallel::pipeline<P, V>. Fix: scheme<..., pipeline<4>, ...>");
  static_assert(is_context_parallel<CP>,
                "trinity::parallel::scheme: the third slot takes parallel::context_parallel<C>. Fix: scheme<..., "
                "context_parallel<1>, ...>");
  static_assert(diagnose_shard_scheme<Shard>(),
                "trinity::parallel::scheme: the fourth slot takes a ShardScheme "
                "(shard::replicate, shard::zero<1..3>, shard::offload<...>)");
  static_assert(PP::stages == 1 || !Shard::shards.parameters,
                "trinity::parallel::scheme: a pipeline with ZeRO-3 gathers every stage's weights again for every "
                "micro-batch. Fix: use shard::zero<1> or shard::zero<2> with pipeline<P>, or pipeline<1> with zero<3>");

  using tensor = TP;
  using pipe = PP;
  using context = CP;
  using shard = Shard;
  //! GPUs one model replica spans.
  static constexpr std::size_t model_parallel = TP::degree * PP::stages * CP::degree;

  //! The layout the step model prices for `world` GPUs (the data-parallel degree is what is left).
  static model::parallel_layout layout(std::size_t world, std::size_t micro_batch = 1,
                                       model::recomputation r = model::recomputation::none,
                                       bool sequence_parallel = false) {
    trinity::detail::require(world % model_parallel == 0, "world",
                             std::to_string(world) + " ranks do not split into replicas of " +
                                 std::to_string(model_parallel) + " (tp*pp*cp). Fix: a multiple of " +
                                 std::to_string(model_parallel));
    model::parallel_layout l;
    l.tp = TP::degree;
    l.pp = PP::stages;
    l.vpp = PP::virtual_stages;
    l.cp = CP::degree;
    l.dp = world / model_parallel;
    l.micro_batch = micro_batch;
    l.recompute = r;
    l.sequence_parallel = sequence_parallel;
    l.zero_stage = Shard::shards.zero_stage();
    return l;
  }
};

//! The world ranks of each group a rank belongs to, in group order.
struct rank_groups {
  std::vector<int> tp, cp, pp, dp;
  //! The ranks that hold the same weights (data and context): gradients are summed, and ZeRO shards, over them.
  std::vector<int> weights;
  //! A mixture of experts' groups, the stage's tp·cp·dp ranks regrouped (Megatron-Core's folding): expert
  //! tensor parallelism innermost, then expert parallelism, then the ranks that hold the same expert slices.
  std::vector<int> expert, expert_tensor, expert_data;
};

//! Read from the job's rank layout (model::rank_layout_of: tensor innermost, then context and data, the pipeline
//! outermost, rank = t + T·(c + C·(d + D·p))) and the stage's expert fold (model::expert_fold).
inline rank_groups groups_of(const model::parallel_layout& l, int world, int rank) {
  using model::rank_axis, model::expert_axis;
  const std::size_t W = static_cast<std::size_t>(world), r = static_cast<std::size_t>(rank);
  trinity::detail::require(world >= 1 && rank >= 0 && rank < world, "rank", "must be in [0, world)");
  trinity::detail::require(
      l.gpus() == W, "world",
      std::to_string(world) + " ranks, and the layout uses " + std::to_string(l.gpus()) + " (tp*pp*cp*dp)");
  const auto ranks = model::rank_layout_of(l);
  rank_groups g;
  g.tp = ranks.along(r, {rank_axis::tensor});
  g.cp = ranks.along(r, {rank_axis::context});
  g.pp = ranks.along(r, {rank_axis::pipeline});
  g.dp = ranks.along(r, {rank_axis::data});
  g.weights = ranks.along(r, {rank_axis::context, rank_axis::data});
  const std::size_t stage = ranks.span(rank_axis::data), et = l.etp, ee = l.ep;
  trinity::detail::require(ee >= 1 && et >= 1, "ep", "ep and etp must be at least 1");
  trinity::detail::require(stage % (et * ee) == 0, "ep",
                           "ep·etp = " + std::to_string(et * ee) + " must divide a stage's tp·cp·dp = " +
                               std::to_string(stage) + " ranks, which the expert groups regroup");
  const auto fold = model::expert_fold(l);
  const int base = static_cast<int>(r - r % stage);
  const auto in_stage = [&](std::vector<int> local) {
    for (auto& x : local) x += base;
    return local;
  };
  g.expert = in_stage(fold.along(r % stage, {expert_axis::expert}));
  g.expert_tensor = in_stage(fold.along(r % stage, {expert_axis::expert_tensor}));
  g.expert_data = in_stage(fold.along(r % stage, {expert_axis::expert_data}));
  return g;
}

template <class Scheme>
rank_groups groups_of(int world, int rank) {
  return groups_of(Scheme::layout(static_cast<std::size_t>(world)), world, rank);
}

}  // namespace trinity::parallel
