#pragma once
//! \file
//! The binding stage's weights on one GPU, dense and routed experts', and the ranks and bytes that keep them in step.
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
#include <trinity/model/training/layer_cost.hpp>

namespace trinity::model {

namespace detail {
//! The fuller stage's weights on one GPU, before ZeRO shards them: the dense ones (attention, norms, shared
//! experts, routers, dense MLPs, embeddings), shared by the dp·cp ranks, and the routed experts', shared by the
//! expert-data-parallel ranks; and the GEMM weights of the fullest stage's layers (what fp8 casts).
struct stage_weights {
  double dense = 0, experts = 0, linear = 0;
};
inline stage_weights stage_weights_of(const training_job& j, const parallel_layout& l, const stage_layers& st) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), V = static_cast<double>(m.vocabulary);
  const double L_first = static_cast<double>(st.first), L_mid = static_cast<double>(st.middle),
               L_last = static_cast<double>(st.last);
  stage_weights w;
  // Prediction modules sit on the last stage after its layers, their own weights (the layer's dense and routed
  // parts, the projection, the norms) and the embedding again: Megatron-Core builds one wherever a module runs,
  // beside an untied output layer (tied, the output layer holds no weight and reads that one).
  const double mtp = static_cast<double>(m.mtp_layers);
  const bool mtp_moe = last_layer_moe(m);
  const double mtp_experts =  // the routed experts' weights on this GPU, as a mixture layer's
      mtp_moe ? mtp * static_cast<double>(m.experts / l.ep) * expert_parameters(m) / static_cast<double>(l.etp) : 0.0;
  const double mtp_dense =
      mtp * (mtp_module_parameters(m) - (mtp_moe ? static_cast<double>(m.experts) * expert_parameters(m) : 0.0)) / t;
  const double mtp_embed = mtp > 0 && l.pp > 1 && !m.tied_embeddings ? V * h / t : 0.0;
  // What fp8 casts of them: the GEMM weights, less the norms and a router (which runs in 16 bits).
  const double mtp_linear =
      mtp_dense - mtp * (5.0 * h + (mtp_moe ? h * static_cast<double>(m.experts) : 0.0)) / t + mtp_experts;
  // The GEMM weights of the stage with the most: the fullest's layers, or the last's and its modules.
  const auto most_linear = [&](double per_layer) {
    return std::max(std::max(L_first, L_mid) * per_layer, L_last * per_layer + mtp_linear);
  };
  if (!m.moe()) {
    const double layer_params = layer_parameters(m) / t;  // the norms are replicated; a rounding error here
    const double embed = V * h / t;
    // The first stage holds the embedding; the last the final norm and the output layer's weight, tied or not
    // (tied, its copy of the embedding, which embedding_all_reduce keeps in step).
    const double first = L_first * layer_params + embed, middle = L_mid * layer_params,
                 last = L_last * layer_params + embed + h + mtp_dense + mtp_embed;
    w.dense = l.pp == 1 ? L_first * layer_params + embed * (m.tied_embeddings ? 1.0 : 2.0) + h + mtp_dense
                        : std::max({first, middle, last});
    w.linear = most_linear((layer_parameters(m) - 2.0 * h) / t);
    return w;
  }
  // Per layer, the stage's share of MoE layers taken as the model's.
  const double phi = static_cast<double>(moe_layer_count(m)) / static_cast<double>(m.layers);
  const double local = static_cast<double>(m.experts / l.ep), etp = static_cast<double>(l.etp);
  const double dense = (1.0 - phi) * layer_parameters(m) / t + phi * moe_layer_parameters(m, 0) / t;
  const double experts = phi * local * expert_parameters(m) / etp;
  const double shared = static_cast<double>(m.shared_experts) * expert_parameters(m);
  w.linear = most_linear((1.0 - phi) * (layer_parameters(m) - 2.0 * h) / t +
                         phi * ((attention_parameters(m) + shared) / t + local * expert_parameters(m) / etp));
  const double embed = V * h / t;
  if (l.pp == 1) {
    w.dense = L_first * dense + embed * (m.tied_embeddings ? 1.0 : 2.0) + h + mtp_dense;
    w.experts = L_first * experts + mtp_experts;
    return w;
  }
  const std::pair<double, double> stages[] = {
      {L_first * dense + embed, L_first * experts},
      {L_mid * dense, L_mid * experts},
      {L_last * dense + embed + h + mtp_dense + mtp_embed, L_last * experts + mtp_experts}};
  const auto& fullest = *std::max_element(std::begin(stages), std::end(stages), [](const auto& a, const auto& b) {
    return a.first + a.second < b.first + b.second;
  });
  w.dense = fullest.first;
  w.experts = fullest.second;
  return w;
}

//! The data-parallel collectives of one group of weights: the gradient's reduction over `ranks` (through the
//! codec: plan/training.hpp's count), and one all-gather of the parameters under ZeRO.
struct weight_sync {
  seconds reduce{}, gather{}, coding{};
  bytes reduce_bytes{};  //!< per GPU
  bytes params{};        //!< what one gather assembles
  double ranks = 1;
  //! Bytes a GPU sends in `gathers` all-gathers.
  [[nodiscard]] bytes gathered(double gathers) const {
    return params > bytes{} ? gathers * (ranks - 1.0) / ranks * params : bytes{};
  }
};
//! `in_fp8` of the ψ weights are kept in fp8 alone (fp8_params) and gathered at 1 byte, the rest at the
//! parameter's bytes.
inline weight_sync sync_weights(double psi, std::size_t ranks, const training_job& j, const parallel_layout& l,
                                const compressor_cost& codec, const collective_link& link, double in_fp8 = 0) {
  weight_sync w;
  if (ranks <= 1 || psi <= 0) return w;
  const auto g = gradient_reduction(ranks, psi, j.precision.gradient, l.zero_stage, codec, link);
  w.reduce = g.comm;
  w.reduce_bytes = g.sent;
  w.coding = g.coding;
  if (l.zero_stage >= 1) {
    w.params = bytes{(psi - in_fp8) * j.precision.parameter + in_fp8};
    w.ranks = static_cast<double>(ranks);
    w.gather = ring_all_gather_time(ranks, w.params, link);
  }
  return w;
}
}  // namespace detail

}  // namespace trinity::model
