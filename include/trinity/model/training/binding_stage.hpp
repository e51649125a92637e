#pragma once
//! \file
//! The stage whose time is the step's: a layer of each kind, how many of each it runs, and the weights it keeps in fp8.
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
#include <trinity/model/training/weights.hpp>

namespace trinity::model {

namespace detail {
//! The stage whose time is the step's (price's binding stage): a layer of each kind, how many layers and
//! prediction modules it runs, and the heads it computes where it is the last stage.
struct binding_stage {
  layer_cost dense, mixture;  //!< a dense layer and a mixture-of-experts layer (the dense one's twin without experts)
  //! The same where the layout recomputes only some layers (recompute_layers): those it leaves, which recompute
  //! nothing. Elsewhere copies of dense and mixture, and no layer is one of them.
  layer_cost dense_kept, mixture_kept;
  double moe_share = 0;            //!< of the model's layers, the mixtures'
  bool module_moe = false;         //!< whether a prediction module's layer is a mixture (the last layer's kind)
  double layers = 0, modules = 0;  //!< the binding stage's layers and prediction modules
  double recomputed = 0;           //!< of its layers, those priced as `dense` and `mixture` (all but the kept)
  seconds logits_f{}, logits_b{};  //!< its heads (the logits, each module's projection and logits), if the last
  seconds loss_f{}, loss_b{};      //!< the cross entropy over each head's logits (model/cross_entropy.hpp), if the last
  bool last = true;                //!< whether it is the last stage
  //! A prediction module's layer. Under block recomputation it is a kept one: Megatron-Core's module skips its
  //! recomputation there ("recompute_method == 'block' is not supported for MTP yet", multi_token_prediction.py)
  //! and recomputes it under the uniform method, every layer's here.
  [[nodiscard]] const layer_cost& module_layer() const { return module_moe ? mixture_kept : dense_kept; }
  //! A part of a layer, averaged over the model's dense and mixture-of-experts layers.
  template <class Part>
  [[nodiscard]] auto each(Part part) const {
    return (1.0 - moe_share) * part(dense) + moe_share * part(mixture);
  }
  //! The same for a layer the layout does not recompute where it recomputes some.
  template <class Part>
  [[nodiscard]] auto each_kept(Part part) const {
    return (1.0 - moe_share) * part(dense_kept) + moe_share * part(mixture_kept);
  }
  //! A part of `held` layers of which `recomputed` are.
  template <class Part>
  [[nodiscard]] auto over(Part part, double held, double recomputed_of_them) const {
    return recomputed_of_them * each(part) + (held - recomputed_of_them) * each_kept(part);
  }
  //! A part of the binding stage's layers per micro-batch, its prediction modules' layers included.
  template <class Part>
  [[nodiscard]] auto binding(Part part) const {
    return over(part, layers, recomputed) + modules * part(module_layer());
  }
};

//! The last stage also computes the logits, and after its layers any multi-token prediction modules: each a
//! layer of the last layer's kind, its 2h → h projection and the logits again. The binding stage is the
//! slowest: the last with them, or the fullest of the others. `recomputed`: of each stage's layers, those
//! recomputed in full (recomputed_stage_layers).
inline binding_stage binding_stage_of(const training_job& j, const training_cluster& c, const parallel_layout& l,
                                      const stage_layers& stages, const stage_layers& recomputed, double T) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), V = static_cast<double>(m.vocabulary);
  const double L_first = static_cast<double>(stages.first), L_mid = static_cast<double>(stages.middle),
               L_last = static_cast<double>(stages.last);
  binding_stage st;
  st.dense = layer(j, c, l);
  st.mixture = m.moe() ? layer(j, c, l, true) : st.dense;
  st.dense_kept = st.dense, st.mixture_kept = st.mixture;
  // Block recomputation: the layers it leaves are priced as a layout that recomputes nothing.
  const bool some = l.recompute_layers.has_value() && l.recompute == recomputation::full && !detail::uniform_groups(l);
  if (some) {
    auto none = l;
    none.recompute = recomputation::none, none.recompute_layers.reset();
    st.dense_kept = layer(j, c, none);
    st.mixture_kept = m.moe() ? layer(j, c, none, true) : st.dense_kept;
  }
  // Without it the layers priced as `dense` are all of a stage's, so the stages compare by their layers.
  const auto R = [&](std::size_t held, std::size_t of_them) { return static_cast<double>(some ? of_them : held); };
  const double R_first = R(stages.first, recomputed.first), R_mid = R(stages.middle, recomputed.middle),
               R_last = R(stages.last, recomputed.last);
  st.moe_share = static_cast<double>(moe_layer_count(m)) / static_cast<double>(m.layers);
  st.module_moe = last_layer_moe(m);
  const double mtp = static_cast<double>(m.mtp_layers);
  const layer_cost& xk = st.module_layer();
  const seconds full_logits_f = gemm_time(c, T, V / t, h), full_logits_b = gemm_bwd(c, T, V / t, h);
  const seconds join_f = mtp > 0 ? gemm_time(c, T, h / t, 2.0 * h) : seconds{},
                join_b = mtp > 0 ? gemm_bwd(c, T, h / t, 2.0 * h) : seconds{};
  const auto pass_time = [](const layer_cost& x) { return x.forward() + x.backward() + x.recompute; };
  const seconds first = st.over(pass_time, L_first, R_first), middle = st.over(pass_time, L_mid, R_mid);
  // The last stage's heads: the logits, and each module's projection and logits again, each with its loss.
  const seconds heads_f = (1.0 + mtp) * full_logits_f + mtp * join_f,
                heads_b = (1.0 + mtp) * full_logits_b + mtp * join_b;
  const auto [loss_f, loss_b] = cross_entropy_time((1.0 + mtp) * T * V / t, c.memory_bandwidth, j.cross_entropy);
  st.last =
      l.pp == 1 || st.over(pass_time, L_last, R_last) + heads_f + heads_b + loss_f + loss_b + mtp * pass_time(xk) >=
                       std::max(first, middle);
  const bool first_binds = first >= middle;
  st.layers = st.last ? L_last : first_binds ? L_first : L_mid;
  st.recomputed = st.last ? R_last : first_binds ? R_first : R_mid;
  st.modules = st.last ? mtp : 0.0;
  st.logits_f = st.last ? heads_f : seconds{};
  st.logits_b = st.last ? heads_b : seconds{};
  st.loss_f = st.last ? loss_f : seconds{};
  st.loss_b = st.last ? loss_b : seconds{};
  return st;
}

//! Of the stage's dense and routed experts' weights, those kept in fp8 alone (fp8_params): its GEMM weights,
//! every routed expert's weight among them.
struct fp8_weights {
  double dense = 0, experts = 0, all = 0;
};
inline fp8_weights kept_in_fp8(const training_job& j, const stage_weights& w) {
  if (!j.fp8_params) return {};
  const double kept = std::min(w.linear, w.dense + w.experts), experts = std::min(kept, w.experts);
  return {kept - experts, experts, kept};
}

}  // namespace detail

}  // namespace trinity::model
