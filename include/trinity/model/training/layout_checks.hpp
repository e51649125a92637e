#pragma once
//! \file
//! Which layouts a job can run: the first rule a layout breaks for a job (check_layout, a typed layout_violation), the
//! expert groups, pipeline flushes and stated stages it checks, and the ZeRO stage a job needs. One seam of the
//! training step model; model/parallel_training.hpp includes them all and says what a step costs.

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
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>
#include <trinity/model/training/step_cost.hpp>

namespace trinity::model {

//! Ranks that hold the same routed experts' weights: a stage's tp·cp·dp ranks over the ep·etp that split them.
inline std::size_t expert_data_parallel(const parallel_layout& l) { return l.tp * l.cp * l.dp / (l.ep * l.etp); }

namespace detail {
inline layout_violation broken(std::string field, std::string value, std::string what, std::string fix = {}) {
  return {std::move(field), std::move(value), std::move(what), std::move(fix)};
}
inline std::string count(std::size_t n) { return std::to_string(n); }

inline layout_verdict check_experts(const training_job& j, const parallel_layout& l) {
  const auto& m = j.shape;
  if (!m.moe() && l.dispatcher == token_dispatcher::by_node)
    return broken("dispatcher", "deepep",
                  "the model has no experts; the dispatcher sends a mixture's tokens to its experts");
  if (!m.moe())
    return l.ep > 1 || l.etp > 1 ? layout_verdict(broken("ep", count(l.ep),
                                                         "the model has no experts; ep and etp split a mixture of "
                                                         "experts' experts"))
                                 : std::nullopt;
  if (m.experts % l.ep != 0)
    return broken("ep", count(l.ep), count(l.ep) + " does not divide the " + count(m.experts) + " experts");
  const auto width = static_cast<std::size_t>(m.expert_ffn());
  if (width % l.etp != 0)
    return broken("etp", count(l.etp), count(l.etp) + " does not divide the experts' width, " + count(width));
  if ((l.tp * l.cp * l.dp) % (l.ep * l.etp) != 0)
    return broken("ep", count(l.ep),
                  "ep·etp = " + count(l.ep * l.etp) + " must divide a pipeline stage's tp·cp·dp = " +
                      count(l.tp * l.cp * l.dp) + " ranks, which the expert groups regroup (Megatron-Core's folding)");
  if (l.dispatcher == token_dispatcher::by_node && l.etp > 1)
    return broken("dispatcher", "deepep", "deepep sends a token once a node and once a rank with etp=1",
                  "give etp=1 or dispatcher=alltoall");
  if (l.tp > 1 && !l.sequence_parallel)
    return broken("sp", "off",
                  "a mixture of experts with tp > 1 needs sequence parallelism (Megatron-Core requires it)",
                  "add sp=on");
  return std::nullopt;
}

//! Whether `flushes` splits the layout's `mb` micro-batches a step.
inline layout_verdict check_flushes(const parallel_layout& l, std::size_t mb) {
  const std::string given = count(l.flushes);
  if (l.flushes == 0) return broken("flushes", given, "a step runs at least one pipeline flush");
  if (l.flushes > 1 && l.pp == 1)
    return broken("flushes", given,
                  "a flush is a pipeline schedule's, and the layout has no pipeline stages (pp=1): its " + count(mb) +
                      " micro-batches accumulate in one pass already",
                  "drop flushes, or give pp > 1");
  if (mb % l.flushes != 0)
    return broken("flushes", given,
                  "the " + count(mb) + " micro-batches a step do not split into " + given + " flushes",
                  "give a flushes that divides " + count(mb));
  return std::nullopt;
}

//! A stated pipeline_layout against the model: stated once, read, its chunks fitting pp, vpp and the layers.
inline layout_verdict check_stated_chunks(const training_job& j, const parallel_layout& l) {
  if (auto twice = check_stated_once(l)) return twice;
  try {
    auto v = check_pipeline_layout(parse_pipeline_layout(l.pipeline_layout), l.pp, l.vpp, j.shape.layers,
                                   j.shape.mtp_layers);
    if (v) v->value = l.pipeline_layout;
    return v;
  } catch (const invalid_input& e) {
    return broken("pipeline_layout", l.pipeline_layout, e.problem());
  }
}

//! Megatron-Core's rules for a stated first or last stage (get_num_layers_to_build): at least one layer each,
//! and the other stages share the rest evenly. Its --decoder-first-pipeline-num-layers also wants a multiple of
//! vpp where --pipeline-model-parallel-layout does not (DeepSeek-V3's Et|(tt|)*30mL puts 7 on the first of 8
//! stages of 4 chunks); a stage is priced by its layers either way, so that is not asked here.
inline layout_verdict check_stage_split(const training_job& j, const parallel_layout& l) {
  if (!l.pipeline_layout.empty()) return check_stated_chunks(j, l);
  if (stated_stages(l) == 0) return std::nullopt;
  if (l.first_stage_layers == std::size_t{0} || l.last_stage_layers == std::size_t{0})
    return broken(l.first_stage_layers == std::size_t{0} ? "first_stage_layers" : "last_stage_layers", "0",
                  "a stage must hold at least one layer");
  const bool first_given = l.first_stage_layers.has_value();
  const auto stated = [&](std::string what, std::string fix = {}) {
    return broken(first_given ? "first_stage_layers" : "last_stage_layers",
                  count(first_given ? *l.first_stage_layers : *l.last_stage_layers), std::move(what), std::move(fix));
  };
  if (l.pp == 1)
    return stated("a layout without pipeline stages (pp=1) has no first or last stage to size",
                  "drop it, or give pp > 1");
  const std::size_t layers = j.shape.layers, first = l.first_stage_layers.value_or(0),
                    last = l.last_stage_layers.value_or(0);
  const std::size_t left = l.pp - stated_stages(l);
  const std::string others = left == 1 ? "the other stage" : "the other " + count(left) + " stages";
  const std::string counts = count(first + last) + " layers on the stated stages";
  if (first + last > layers) return stated(counts + " are more than the model's " + count(layers));
  const std::size_t rest = layers - first - last;
  if (left == 0 && rest != 0)
    return stated(
        "with pp=2 the first and last stages are all of them, and hold " + counts + " of the model's " + count(layers),
        "make them add up to " + count(layers));
  if (left > 0 && rest == 0) return stated(counts + " leave " + others + " none");
  if (left > 0 && rest % left != 0)
    return stated(others + " cannot share the " + count(rest) + " layers left evenly (Megatron-Core requires it)",
                  "state counts that leave a multiple of " + count(left));
  return std::nullopt;
}
}  // namespace detail

//! The least ZeRO stage the job runs at: 1 where its weights are kept in fp8 alone (fp8_params), which the
//! distributed optimizer's fp32 master weights update (Megatron-Core's --fp8-param-gather requires it); else 0.
//! check_layout refuses less, and the planners start their search there.
inline int least_zero_stage(const training_job& j) noexcept { return j.fp8_params ? 1 : 0; }

//! The parameter all-gathers a step runs over the ranks that share weights, for `micro_batches` a step: ZeRO-1 and
//! 2 gather the updated shards once; ZeRO-3 gathers the weights again for each micro-batch's forward and backward.
inline double parameter_gathers(const parallel_layout& l, double micro_batches) noexcept {
  return parameter_gathers(l.zero_stage, micro_batches);
}

//! What one GPU of the pipeline's first or last stage sends a step keeping the word embedding in step between the
//! two (Megatron-Core's embedding group): where both hold it, tied to the output layer (the last stage keeps a
//! copy) or read again by multi-token prediction modules, finalize_model_grads sums its gradient over the two
//! (_allreduce_word_embedding_grads) once a step, after the data-parallel reduction and before the update: an
//! all-reduce of the V·h/t values of this rank's slice over two ranks, which sends each of them the whole slice.
//! Zero where the stages do not both hold it (one stage, or untied without prediction modules).
inline bytes embedding_all_reduce_bytes(const training_job& j, const parallel_layout& l) noexcept {
  const auto& m = j.shape;
  if (l.pp == 1 || !(m.tied_embeddings || m.mtp_layers > 0)) return bytes{};
  return bytes{static_cast<double>(m.vocabulary) * static_cast<double>(m.hidden) / static_cast<double>(l.tp) *
               j.precision.gradient};
}

//! Whether tp tensor-parallel ranks split the model's heads, KV heads and MLP width (the layout search skips a tp
//! this refuses before it builds a layout).
inline layout_verdict check_tensor_split(const transformer_shape& m, std::size_t tp) {
  const std::string given = std::to_string(tp);
  if (m.heads % tp != 0)
    return layout_violation{"tp", given, given + " does not divide the " + std::to_string(m.heads) + " heads", {}};
  if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
    return layout_violation{
        "tp", given, given + " and the " + std::to_string(m.kv_heads) + " KV heads do not divide each other", {}};
  if (m.ffn_hidden % tp != 0) return layout_violation{"tp", given, given + " does not divide ffn_hidden", {}};
  return std::nullopt;
}

namespace detail {
//! The degrees against the model's heads, widths and layers, the sequence and the batch.
inline layout_verdict check_degrees(const training_job& j, const parallel_layout& l) {
  const auto& m = j.shape;
  if (l.tp == 0 || l.pp == 0 || l.vpp == 0 || l.cp == 0 || l.dp == 0 || l.micro_batch == 0 || l.ep == 0 || l.etp == 0)
    return broken("parallelism", to_string(l), "every degree and the micro-batch must be at least 1");
  if (auto split = check_tensor_split(m, l.tp)) return split;
  if (l.pp * l.vpp > m.layers && l.pipeline_layout.empty())  // a stated layout may leave a chunk empty
    return broken("pp", count(l.pp), count(l.pp * l.vpp) + " model chunks for " + count(m.layers) + " layers");
  if (l.vpp > 1 && l.pp == 1) return broken("vpp", count(l.vpp), "interleaving needs pipeline stages (pp > 1)");
  if (j.sequence % l.cp != 0)
    return broken("cp", count(l.cp), count(l.cp) + " does not divide the sequence of " + count(j.sequence));
  if (j.global_batch % (l.dp * l.micro_batch) != 0)
    return broken("global_batch", count(j.global_batch),
                  count(j.global_batch) + " sequences do not split into dp=" + count(l.dp) +
                      " replicas of micro-batches of " + count(l.micro_batch));
  const std::size_t mb = j.global_batch / (l.dp * l.micro_batch);
  if (auto flushes = check_flushes(l, mb)) return flushes;
  if (l.vpp > 1 && mb / l.flushes % l.pp != 0)
    return broken("vpp", count(l.vpp),
                  "the interleaved schedule needs the " + count(mb / l.flushes) + " micro-batches" +
                      (l.flushes > 1 ? " a flush" : "") + " to be a multiple of pp=" + count(l.pp));
  return std::nullopt;
}

//! The ZeRO stage against the precision and the pipeline, and sequence parallelism against tp.
inline layout_verdict check_sharding(const training_job& j, const parallel_layout& l) {
  const std::string zero = std::to_string(l.zero_stage);
  if (l.zero_stage < 0 || l.zero_stage > 3) return broken("zero", zero, "ZeRO has stages 0 to 3");
  if (j.fp8_params && !j.fp8)
    return broken("fp8_params", "true", "keeps the GEMM weights in fp8, and the layers' GEMMs run in 16 bits",
                  "train in fp8 (\"precision\": \"fp8\"), or drop fp8_params");
  if (l.zero_stage < least_zero_stage(j))
    return broken("zero", zero,
                  "weights kept in fp8 alone (fp8_params) are updated from a sharded optimizer's fp32 master weights "
                  "(Megatron-Core's --fp8-param-gather requires the distributed optimizer)",
                  "give zero=1 or more");
  if (l.zero_stage == 3 && l.pp > 1)
    return broken("zero", zero, "stage 3 re-gathers every stage's weights for every micro-batch",
                  "with pipeline stages use stage 1 or 2 (FSDP2 under PyTorch's pipeline schedules gathers once a "
                  "flush and reduces once: zero=1 with flushes=N)");
  if (l.sequence_parallel && l.tp == 1)
    return broken("sp", "on", "sequence parallelism splits along tensor-parallel ranks; it needs tp > 1");
  return std::nullopt;
}

//! Recomputation's policy, method and layer count against each other.
inline layout_verdict check_recompute(const parallel_layout& l) {
  const std::string layers = l.recompute_layers ? count(*l.recompute_layers) : std::string();
  if (l.recompute_layers && l.recompute != recomputation::full)
    return broken("recompute_layers", layers,
                  "recomputes that many layers of each model chunk in full (Megatron-Core's --recompute-method "
                  "block), or every layer in groups of that many (recompute_method=uniform)",
                  "give recompute=full beside it, or drop it");
  if (l.recompute_method == recompute_method::uniform && !l.recompute_layers)
    return broken("recompute_method", "uniform", "uniform checkpoints every layer in groups of recompute_layers",
                  "give recompute_layers=N beside it, or drop it (recompute=full alone recomputes each layer by "
                  "itself)");
  if (l.recompute_layers == std::size_t{0})
    return broken("recompute_layers", "0", "0 layers recomputed is recompute=none", "give at least 1, or drop it");
  return std::nullopt;
}

//! The single modules recomputed against the policy and the model's blocks.
inline layout_verdict check_recompute_modules(const training_job& j, const parallel_layout& l) {
  if (l.modules.empty()) return std::nullopt;
  const auto& m = j.shape;
  const auto broken_by = [&](std::string what, std::string fix = {}) {
    return broken("recompute_modules", to_string(l.modules), std::move(what), std::move(fix));
  };
  if (l.recompute == recomputation::full)
    return broken_by("full recomputation already runs every module again",
                     "drop recompute_modules, or use recompute=selective or none");
  if (l.modules.has(recompute_module::moe_act) && !m.moe())
    return broken_by("moe_act recomputes the experts' activation function, and the model has no experts");
  if (l.modules.has(recompute_module::mla_up_proj) && !m.mla())
    return broken_by(
        "mla_up_proj recomputes latent attention's up-projections, and the model's attention is not latent (give "
        "kv_lora_rank)");
  if (l.modules.has(recompute_module::mlp) && m.moe() && moe_layer_count(m) == m.layers)
    return broken_by("mlp recomputes the dense layers' MLPs, and every layer of the model is a mixture of experts",
                     "use moe (the whole block) or moe_act");
  if (l.modules.has(recompute_module::moe) && !m.moe())
    return broken_by("moe recomputes the mixture-of-experts blocks, and the model has no experts", "use mlp");
  if (l.modules.has(recompute_module::shared_experts) && m.shared_experts == 0)
    return broken_by("shared_experts recomputes the shared experts, and the model has none (give shared_experts)");
  if (l.modules.has(recompute_module::moe) &&
      (l.modules.has(recompute_module::moe_act) || l.modules.has(recompute_module::shared_experts)))
    return broken_by("moe recomputes the whole block, the experts' activation and the shared experts with it",
                     "drop moe_act and shared_experts");
  return std::nullopt;
}
}  // namespace detail

//! The first rule the layout breaks for this job, typed (layout_violation: the field, the value, what is wrong,
//! the fix), or none. Every caller asks here: the step model, the planners, the published runs and verify.
inline layout_verdict check_layout(const training_job& j, const parallel_layout& l) {
  for (const auto& check : {detail::check_degrees, detail::check_sharding})
    if (auto v = check(j, l)) return v;
  if (auto v = detail::check_recompute(l)) return v;
  if (auto v = detail::check_recompute_modules(j, l)) return v;
  if (auto v = detail::check_stage_split(j, l)) return v;
  if (auto v = check_schedule(l)) return v;
  return detail::check_experts(j, l);
}

//! check_layout's verdict as 0.1 gave it: "field: what; fix", or empty.
[[deprecated(
    "use check_layout, which returns the field, the value, what is wrong and the fix apart (CHANGELOG.md, "
    "0.2.0)")]] inline std::string
layout_problem(const training_job& j, const parallel_layout& l) {
  return message_of(check_layout(j, l));
}

}  // namespace trinity::model
