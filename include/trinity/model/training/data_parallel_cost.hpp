#pragma once
//! \file
//! The data-parallel collectives of a step (exposed, or hidden under the passes), the optimizer's update and what
//! offloading it moves.
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
#include <trinity/model/moe_layer.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/pipeline_layout.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>
#include <trinity/model/training/binding_stage.hpp>

namespace trinity::model {

namespace detail {

//! The data-parallel collectives (and how much of them the passes hide), the optimizer's update and what
//! offloading it moves: fills those parts of `r`.
inline void price_data_parallel(parallel_step_cost& r, const training_job& j, const training_cluster& c,
                                const parallel_layout& l, const compressor_cost& codec, const stage_weights& weights,
                                const fp8_weights& fp8, const binding_stage& st, double mb) {
  const std::size_t shard_ranks = l.dp * l.cp, expert_ranks = expert_data_parallel(l);
  const double n = static_cast<double>(shard_ranks), n_e = static_cast<double>(expert_ranks);
  const double psi = weights.dense + weights.experts;
  const auto dp_link = as_collective(level(c, span(l, layout_group::stage)));
  const auto& pb = j.precision;
  const auto dense = sync_weights(weights.dense, shard_ranks, j, l, codec, dp_link, fp8.dense);
  const auto experts = sync_weights(weights.experts, expert_ranks, j, l, codec, dp_link, fp8.experts);
  const seconds reduce = dense.reduce + experts.reduce, gather = dense.gather + experts.gather;
  const double gathers = parameter_gathers(l, mb);
  // Each pipeline flush ends in the reduction and the gathers (parallel_layout::flushes), each under its own
  // flush's passes; coding them too.
  const double flushes = static_cast<double>(l.flushes);
  r.codec = flushes * (dense.coding + experts.coding);
  r.gradient_frame = bytes{psi * (is_uncoded(codec) ? pb.gradient : 4.0 / codec.ratio)};
  r.dp_collectives = flushes * (reduce + gathers * gather);
  r.dp_comm = r.dp_collectives;
  r.overlap = l.overlap.value_or(j.overlap_dp);
  if (r.overlap && std::max(shard_ranks, weights.experts > 0 ? expert_ranks : 1) > 1) {
    // Bucket by bucket (model/overlap.hpp): the reduction under the last micro-batch's backward, the gather
    // under the first micro-batch's forward (ZeRO-3: under each micro-batch's forward and backward).
    r.buckets = bucket_count(psi, megatron_bucket_parameters(shard_ranks));
    const seconds backward =
        st.binding([](const layer_cost& x) { return x.backward() + x.recompute; }) + st.logits_b + st.loss_b;
    const seconds forward = st.binding([](const layer_cost& x) { return x.forward(); });
    r.dp_comm = exposed_after_overlap(reduce, backward, r.buckets);
    if (l.zero_stage == 3)
      r.dp_comm +=
          mb * (exposed_after_overlap(gather, forward, r.buckets) + exposed_after_overlap(gather, backward, r.buckets));
    else if (l.zero_stage >= 1)
      r.dp_comm += exposed_after_overlap(gather, forward, r.buckets);
    r.dp_comm = flushes * r.dp_comm;
  }
  r.stage_parameters = psi;
  r.expert_parameters = weights.experts;
  r.dp_bytes =
      flushes * (dense.reduce_bytes + dense.gathered(gathers) + experts.reduce_bytes + experts.gathered(gathers));
  r.gathered_dense = dense.params, r.gathered_experts = experts.params;
  // The optimizer's share of the weights on this GPU: ZeRO shards each group over its own ranks.
  const double local =
      weights.dense / (l.zero_stage >= 1 ? n : 1.0) + weights.experts / (l.zero_stage >= 1 ? n_e : 1.0);
  // The update reads and writes the optimizer states and reads the parameter and gradient, where it runs: on
  // the device, or offloaded on the host at the host tier's rate, after the gradient shard comes down and
  // before the parameter shard goes back up (ZeRO-Offload; what trinity-train --offload moves).
  if (l.offload && c.host_memory <= bytes{})
    throw invalid_input("offload",
                        "the system has no tier below device memory to hold optimizer states. Fix: offload=off, "
                        "or a system with a host tier");
  const bytes_per_second update_rate = l.offload ? c.host.bandwidth : c.memory_bandwidth;
  r.optimizer = seconds{local * (2.0 * pb.optimizer + pb.parameter + pb.gradient) / update_rate.value()};
  if (l.offload) {
    r.offload_bytes =
        model::offload_traffic_per_step(weights.dense, shard_ranks, l.zero_stage, pb) +
        (weights.experts > 0 ? model::offload_traffic_per_step(weights.experts, expert_ranks, l.zero_stage, pb)
                             : bytes{});
    r.offload = c.host.latency + r.offload_bytes / c.host.bandwidth;
  }
}
}  // namespace detail

}  // namespace trinity::model
