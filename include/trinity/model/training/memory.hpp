#pragma once
//! \file
//! Device memory on the binding stage's GPU: weights, gradients, optimizer states (or what is offloaded),
//! activations.
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
#include <trinity/model/training/data_parallel_cost.hpp>

namespace trinity::model {

namespace detail {

//! Device memory on the binding stage's GPU (the fuller stage's weights, the first or last stage's
//! activations): fills r's weights, gradients, optimizer states (or what is offloaded), activations and total.
inline void price_memory(parallel_step_cost& r, const training_job& j, const parallel_layout& l,
                         const stage_weights& weights, const fp8_weights& fp8, const binding_stage& st,
                         const stage_layers& stages, double mb, double T) {
  const auto& m = j.shape;
  const auto& pb = j.precision;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), V = static_cast<double>(m.vocabulary),
               mtp = static_cast<double>(m.mtp_layers);
  const double L_first = static_cast<double>(stages.first), L_mid = static_cast<double>(stages.middle),
               L_last = static_cast<double>(stages.last);
  const std::size_t shard_ranks = l.dp * l.cp, expert_ranks = expert_data_parallel(l);
  const double n = static_cast<double>(shard_ranks), n_e = static_cast<double>(expert_ranks);
  // The 16-bit weights (ZeRO-3 shards them), and under fp8 the cast GEMM weights with their transposes: beside
  // the 16-bit copies, or in their place (fp8_params), where ZeRO-3 shards the fp8 ones and builds each
  // transpose as it gathers.
  const double shard = l.zero_stage >= 3 ? n : 1.0, shard_e = l.zero_stage >= 3 ? n_e : 1.0;
  const double cast_kept = !j.fp8              ? 0.0
                           : !j.fp8_params     ? 2.0 * weights.linear
                           : l.zero_stage >= 3 ? fp8.dense / n + fp8.experts / n_e
                                               : 2.0 * fp8.all;
  r.parameters = bytes{(weights.dense - fp8.dense) * pb.parameter / shard +
                       (weights.experts - fp8.experts) * pb.parameter / shard_e + cast_kept};
  // Over several micro-batches each layer's whole gradient accumulates until the last (peak_gradient_bytes).
  r.gradients = peak_gradient_bytes(weights.dense, shard_ranks, l.zero_stage, pb, static_cast<std::size_t>(mb)) +
                (weights.experts > 0 ? peak_gradient_bytes(weights.experts, expert_ranks, l.zero_stage, pb,
                                                           static_cast<std::size_t>(mb))
                                     : bytes{});
  (l.offload ? r.offloaded : r.optimizer_states) =
      bytes{weights.dense * pb.optimizer / (l.zero_stage >= 1 ? n : 1.0) +
            weights.experts * pb.optimizer / (l.zero_stage >= 1 ? n_e : 1.0)};
  // Each stage's layers keep their sets as the layout recomputes them: some of them, under block recomputation.
  const auto stored_of = [](const layer_cost& x) { return x.stored; };
  // Under the uniform method only each group's input: a recomputed layer's, one a group.
  const auto& inputs = r.checkpointed;
  const auto stored_at = [&](double held, std::size_t recomputed, std::size_t checkpointed) {
    return detail::uniform_groups(l) ? static_cast<double>(checkpointed) * st.each(stored_of)
                                     : st.over(stored_of, held, static_cast<double>(recomputed));
  };
  const double stored_first = stored_at(L_first, r.recomputed.first, inputs.first),
               stored_mid = stored_at(L_mid, r.recomputed.middle, inputs.middle),
               stored_last = stored_at(L_last, r.recomputed.last, inputs.last);
  const double in_flight = pipeline_in_flight(l.schedule, l.pp, static_cast<std::size_t>(mb), l.vpp);
  // A recomputed layer's backward holds what recomputation rebuilt: the whole layer's set (under the uniform
  // method its group's, every layer's set but the input it kept), or the scores.
  const double group = static_cast<double>(r.rebuilt_group);
  const auto rebuilt_of = [&](const layer_cost& x) {
    return (l.recompute == recomputation::full        ? group * x.kept - x.stored
            : l.recompute == recomputation::selective ? x.scores
                                                      : 0.0) +
           x.modules;
  };
  const double rebuilt = std::max(rebuilt_of(st.dense), rebuilt_of(st.mixture));
  // A middle stage keeps fewer micro-batches than the first; counted as many, an upper bound.
  const double act_first = std::max(stored_first, stored_mid) * in_flight + rebuilt;
  // The last stage holds one micro-batch and the softmax its loss keeps (model/cross_entropy.hpp); each
  // prediction module its layer's set, the projection's 16-bit input (2h a token) and its own loss's softmax.
  const double heads_kept =
      (1.0 + mtp) * bytes_of(j.cross_entropy).kept * T * V / t + mtp * (st.module_layer().stored + 4.0 * T * h);
  const double act_last = stored_last + heads_kept + rebuilt;
  r.activations = bytes{l.pp == 1 ? act_first + heads_kept : std::max(act_first, act_last)};
  r.device_bytes = r.parameters + r.gradients + r.optimizer_states + r.activations;
}
}  // namespace detail

}  // namespace trinity::model
