#pragma once
//! \file
//! What one training step of a transformer costs under a hybrid layout:
//! t-way tensor parallelism (with or without sequence parallelism), p pipeline
//! stages of v model chunks each, c-way context parallelism, d-way data
//! parallelism with a ZeRO stage over the d·c ranks that hold the same weights,
//! micro-batches of b sequences, and a recomputation policy. Megatron-LM's
//! mechanisms as Narayanan et al. (SC'21) and Korthikanti et al. (2022)
//! describe them. Per micro-batch, on the stage that binds:
//!  - matrix multiplies at the device's GEMM efficiency for their shape
//!    (model/gemm.hpp): forward, and backward's data and weight gradients;
//!  - the attention core (QKᵀ and the weighted sum of V, full s² as
//!    Narayanan et al. count it) at the efficiency of its batched shape; with
//!    flash_attention, one fused causal kernel (model/fused_attention.hpp):
//!    half the s² work forward, 2.5 times that backward, at the device's
//!    measured kernel curve by sequence and head dimension; a layer with a
//!    sliding window of w does s·w − w²/2 of the pairs, at the curve's rate
//!    for a sequence of 2w;
//!  - memory-bound work (norms, softmax, dropout, activation functions,
//!    residuals): κ bytes of device-memory traffic per byte of activations
//!    the layer keeps, at the memory's bandwidth;
//!  - tensor-parallel all-reduces (or all-gather + reduce-scatter with sequence
//!    parallelism, the same ring time): two per layer forward, two backward;
//!  - context parallelism's ring: each rank passes its K and V chunk c − 1
//!    times forward; backward, K and V go round again with their gradients,
//!    which then take one more hop home (parallel/context_parallel.hpp), the
//!    whole hidden behind the attention core where it is shorter;
//!  - pipeline sends of the activation between stages, split t ways
//!    (Narayanan et al.'s scatter/gather), forward and backward, v times with
//!    interleaving;
//!  - a mixture of experts' layers (every moe_layer_frequency-th) run the experts' block in place of the
//!    MLP (model/moe_layer.hpp): the router, the grouped expert GEMMs at their small per-expert shapes, the
//!    token all-to-alls over the ep ranks, four a layer, at the busiest rank's load, and the memory-bound
//!    copies that put the rows in order for them and back; the routed experts'
//!    weights shard over the expert-parallel ranks and reduce over the expert-data-parallel ones;
//!  - on the last stage, the logits and the cross entropy over them, memory-bound in fp32
//!    (model/cross_entropy.hpp);
//!  - full recomputation runs the forward (its all-reduces and context ring too) again, of every layer, or of the first
//!    recompute_layers of each chunk (Megatron-Core's block method; the chunk's other layers keep their
//!    activations and run once), or of every layer in groups of recompute_layers (its uniform method: a chunk
//!    keeps one input a group, and a group's backward holds the whole group rebuilt);
//!    selective recomputation runs the attention core again, its ring with it (a fused one too, for no memory saved);
//!    single modules (the norms, the experts' activation, latent attention's up-projections:
//!    model/recompute_modules.hpp) run again in place of keeping their outputs.
//! A step is m micro-batches plus the bubble (p − 1)/(m·v) of them, then the
//! data-parallel gradient reduction and ZeRO's parameter all-gathers (exposed
//! whole, or with overlap, bucket by bucket under the last micro-batch's
//! backward and the first one's forward, model/overlap.hpp; through a gradient
//! codec, model/gradient_reduction.hpp, whose coding is never hidden), then the
//! optimizer step (memory-bound: Adam reads and writes its states once).
//! Links: ranks are laid out as Megatron-Core lays them out, tensor-innermost,
//! then context and data, the pipeline outermost (model/parallel_layout.hpp's
//! span); a group whose span fits the fast domain (NVLink, NVL72) uses it,
//! otherwise the slower fabric, each at one direction of one GPU's port.
//! Memory per GPU (the larger of the first and last stage): weights, gradients
//! and optimizer states of the stage, sharded by the ZeRO stage over d·c; the
//! activations of the micro-batches in flight (1F1B keeps min(p, m) on the
//! first stage, times 1 + (p − 1)/(p·v) interleaved; Korthikanti et al. §4.2.3)
//! counted per tensor the layer keeps (below), with a recomputed layer's whole
//! set (or group's) during its backward; the last stage's fp32 logits.

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

namespace trinity::model {

//! Activation bytes one layer keeps for the backward pass, per micro-batch of b sequences whose s_local tokens
//! attend to s_full positions, under t-way tensor parallelism, counted tensor by tensor as Korthikanti et al.
//! 2022 §4.1 count them (16-bit tensors, 1-byte dropout masks) and generalised to grouped KV heads and gated
//! MLPs. For GPT's shape this is their s·b·h·(10 + 24/t + 5·a·s/(h·t)) (34/t with sequence parallelism),
//! plus the two LayerNorms' fp32 mean and reciprocal deviation (16 bytes a token), which they leave out.
inline double layer_activation_bytes(const training_job& j, double s_local, double s_full, double b, double t, bool sp,
                                     recomputation r) {
  const auto& m = j.shape;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double a = static_cast<double>(m.heads);
  // The attention core's queries, keys and values a token (every head's, latent attention's up-projected).
  const double kv = m.mla() ? 0.0 : static_cast<double>(m.kv_heads) * m.head_dim();
  const double q = a * m.query_key_dim(), k = m.mla() ? q : kv, v = m.mla() ? a * m.value_dim() : kv;
  const double sb = s_local * b;
  const double split = sp ? t : 1.0;  // what sequence parallelism splits: the norms, dropouts and their inputs
  if (r == recomputation::full) return 2.0 * sb * h / split;
  const double masks = j.dropout ? 2.0 * h : 0.0;  // after the projection and after the MLP
  const double linear_in = j.fp8 ? 1.0 : 2.0;      // a GEMM's input as kept: its fp8 cast under fp8
  // The two norms' inputs, QKV's (or the down-projections') and fc1's inputs.
  const double replicated = 2.0 * h + linear_in * h + 2.0 * h + linear_in * h + masks;
  const double act_in = m.up_width(f);  // the activation function's input(s)
  // Q, K, V (the attention core's, 16-bit); the projection's input; the activation's; fc2's input.
  const double divided = 2.0 * (q + k + v) + linear_in * a * m.value_dim() + 2.0 * act_in + linear_in * f;
  // Latent attention's latents, which every tensor-parallel rank computes whole: their norms' inputs and the
  // up-projections' inputs.
  const double latents = static_cast<double>(m.q_lora_rank + m.kv_lora_rank) * (2.0 + linear_in);
  const double norm_stats = m.mla() ? 24.0 : 16.0;  // two more norms' mean and variance under latent attention
  double bytes = sb * (replicated / split + divided / t + latents + norm_stats / split);
  if (r == recomputation::none && !j.flash_attention) {
    const double heads = static_cast<double>(m.heads);
    // The softmax's output (2 bytes), and with dropout its mask (1) and the dropped probabilities (2).
    bytes += (j.dropout ? 5.0 : 2.0) * heads * s_local * s_full * b / t;
  }
  return bytes;
}

//! Key-and-value blocks a rank sends around a c-rank context ring per attention layer and micro-batch,
//! forward and backward: c − 1 hops of K and V, c − 1 of K, V, dK and dV, then dK and dV home
//! (parallel/context_parallel.hpp's ring), 3(c − 1) + 1; none without context parallelism. `again`: the attention's
//! forward runs a second time, under full or selective recomputation, and sends its c − 1 hops again (Transformer
//! Engine's context-parallel attention is what Megatron-Core's checkpoint reruns).
inline double context_ring_blocks(std::size_t c, bool again = false) {
  const double hops = c > 1 ? static_cast<double>(c) - 1.0 : 0.0;
  return c > 1 ? (again ? 4.0 : 3.0) * hops + 1.0 : 0.0;
}

//! Activations (or their gradients) the busiest rank of a p-stage pipeline, v model chunks a rank, sends per
//! micro-batch, and as many as it receives: one each way per chunk boundary it feeds. With p > 2 a middle
//! rank feeds 2v; with p = 2 both ranks hold an end of the pipeline, which sends one fewer
//! (parallel/pipeline.hpp's counts).
inline double pipeline_transfers(std::size_t p, std::size_t v) {
  if (p <= 1) return 0.0;
  return p > 2 ? 2.0 * static_cast<double>(v) : 2.0 * static_cast<double>(v) - 1.0;
}

//! Micro-batches' activations the first stage keeps at its peak (Korthikanti et al. 2022): min(p, m), and
//! interleaved p + (p − 1)/v, that is p·v + p − 1 chunks of 1/v of the layers, but never more than the m·v
//! chunks a step has: with m = p the first stage's warm-up runs every forward before a backward (Megatron's
//! interleaved schedule caps its warm-up at the step's chunks), so it keeps all p·v of them.
inline double pipeline_in_flight(std::size_t p, std::size_t m, std::size_t v) {
  if (p <= 1) return 1.0;
  const double pp = static_cast<double>(p), vv = static_cast<double>(v), mm = static_cast<double>(m);
  return v > 1 ? std::min(mm, pp + (pp - 1.0) / vv) : std::min(pp, mm);
}

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

//! Why the layout states its stages twice, or empty: pipeline_layout places every stage's layers, and
//! first_stage_layers or last_stage_layers beside it would say it again.
inline std::string stated_twice(const parallel_layout& l) {
  if (l.pipeline_layout.empty() || stated_stages(l) == 0) return {};
  return std::string(l.first_stage_layers ? "first_stage_layers" : "last_stage_layers") +
         ": pipeline_layout places every stage's layers already; give one or the other";
}

//! The layers each stage holds under the layout: where it states every chunk's (pipeline_layout), each stage's
//! sum; where it states its first or last stage's (Megatron-Core's get_num_layers_to_build), those, and the
//! other stages split the rest evenly; otherwise the split above. layout_problem has checked the statement.
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

//! The cost of one step, per GPU of the binding stage. Its times, gemm to codec, are the step's parts: they add up
//! to `step`, each second in one of them (a recomputed forward's collectives in `recompute`, not `tp_comm`).
struct parallel_step_cost {
  double micro_batches = 0;
  std::size_t flushes = 1;  //!< the pipeline flushes they ran in (parallel_layout::flushes)
  seconds gemm{}, attention{}, elementwise{}, recompute{};  //!< per step, summed over micro-batches
  seconds tp_comm{}, cp_comm{}, pp_comm{};                  //!< per step, on the critical path
  seconds ep_comm{};  //!< a mixture's all-to-alls (and expert tensor-parallel collectives), on the critical path
  seconds bubble{}, dp_comm{}, optimizer{};
  seconds offload{};  //!< gradient shard down, parameter shard up, per step
  seconds codec{};    //!< encoding and decoding the gradient, per step
  //! The word embedding's gradient summed between the pipeline's first and last stages, once a step
  //! (embedding_all_reduce); zero where they do not both hold it.
  seconds embedding_sync{};
  seconds step{};
  bytes tp_bytes{}, cp_bytes{}, pp_bytes{}, dp_bytes{};  //!< sent per GPU per step
  bytes ep_bytes{};                                      //!< the all-to-alls', sent per GPU per step
  bytes embedding_bytes{};  //!< the embedding all-reduce's, sent per GPU of the first or last stage per step
  bytes parameters{}, gradients{}, optimizer_states{}, activations{};  //!< per GPU, the fuller stage
  bytes offloaded{}, offload_bytes{};  //!< optimizer states held in the host tier; bytes moved to and from it a step
  bytes gradient_frame{};  //!< the fuller stage's gradient as its reduction sends it: bf16, or the codec's frame
  //! What one parameter all-gather assembles on a GPU, for the dense weights and the routed experts' (under ZeRO
  //! 1-3; the GEMM weights at a byte where fp8_params keeps them); zero where nothing is gathered.
  bytes gathered_dense{}, gathered_experts{};
  bytes device_bytes{};
  flops model_flops{};  //!< per step, all GPUs: 3 passes, full s² (Narayanan et al.'s count without recomputation)
  double mfu = 0;       //!< model FLOPs over the step time and every GPU's peak
  std::size_t layers_per_stage = 0;  //!< the binding stage's
  std::size_t pipeline_stages = 1;
  stage_layers stages{};      //!< the layers the first, middle and last stages hold (pipeline_stage_layers)
  stage_layers recomputed{};  //!< of those, the layers recomputed in full (recomputed_stage_layers)
  //! The inputs those keep a micro-batch (checkpointed_stage_inputs), and the layers one backward rebuilds at once
  //! (rebuilt_group_layers): a recomputed layer's own, or under the uniform method one a group and its group.
  stage_layers checkpointed{};
  std::size_t rebuilt_group = 1;
  std::size_t prediction_modules = 0;  //!< multi-token prediction modules, on the last stage after its layers
  bool last_binds = true;       //!< whether the binding stage is the last, its layers and the logits (else the fullest)
  double stage_parameters = 0;  //!< Ψ: the fuller stage's parameters on one GPU, before ZeRO shards them
  double expert_parameters = 0;  //!< of Ψ, the routed experts', sharded over the expert-data-parallel ranks
  seconds dp_collectives{};      //!< the data-parallel collectives' whole time, before backward hides any of it
  bool overlap = false;          //!< whether they ran bucket by bucket under the passes (model/overlap.hpp)
  double buckets = 0;            //!< how many buckets, when they did
};

//! Ranks that hold the same routed experts' weights: a stage's tp·cp·dp ranks over the ep·etp that split them.
inline std::size_t expert_data_parallel(const parallel_layout& l) { return l.tp * l.cp * l.dp / (l.ep * l.etp); }

namespace detail {
inline std::string expert_problem(const training_job& j, const parallel_layout& l) {
  const auto& m = j.shape;
  if (!m.moe() && l.dispatcher == token_dispatcher::by_node)
    return "dispatcher: the model has no experts; the dispatcher sends a mixture's tokens to its experts";
  if (!m.moe())
    return l.ep > 1 || l.etp > 1 ? "ep: the model has no experts; ep and etp split a mixture of experts' experts"
                                 : std::string();
  if (m.experts % l.ep != 0)
    return "ep: " + std::to_string(l.ep) + " does not divide the " + std::to_string(m.experts) + " experts";
  if (static_cast<std::size_t>(m.expert_ffn()) % l.etp != 0)
    return "etp: " + std::to_string(l.etp) + " does not divide the experts' width, " +
           std::to_string(static_cast<std::size_t>(m.expert_ffn()));
  if ((l.tp * l.cp * l.dp) % (l.ep * l.etp) != 0)
    return "ep: ep·etp = " + std::to_string(l.ep * l.etp) +
           " must divide a pipeline stage's tp·cp·dp = " + std::to_string(l.tp * l.cp * l.dp) +
           " ranks, which the expert groups regroup (Megatron-Core's folding)";
  if (l.dispatcher == token_dispatcher::by_node && l.etp > 1)
    return "dispatcher: deepep sends a token once a node and once a rank with etp=1; give etp=1 or "
           "dispatcher=alltoall";
  if (l.tp > 1 && !l.sequence_parallel)
    return "sp: a mixture of experts with tp > 1 needs sequence parallelism (Megatron-Core requires it); add sp=on";
  return {};
}

//! Why `flushes` cannot split the layout's `mb` micro-batches a step, or empty.
inline std::string flush_problem(const parallel_layout& l, std::size_t mb) {
  if (l.flushes == 0) return "flushes: a step runs at least one pipeline flush";
  if (l.flushes > 1 && l.pp == 1)
    return "flushes: a flush is a pipeline schedule's, and the layout has no pipeline stages (pp=1): its " +
           std::to_string(mb) + " micro-batches accumulate in one pass already; drop flushes, or give pp > 1";
  if (mb % l.flushes != 0)
    return "flushes: the " + std::to_string(mb) + " micro-batches a step do not split into " +
           std::to_string(l.flushes) + " flushes; give a flushes that divides " + std::to_string(mb);
  return {};
}

//! Megatron-Core's rules for a stated first or last stage (get_num_layers_to_build): at least one layer each,
//! and the other stages share the rest evenly. Its --decoder-first-pipeline-num-layers also wants a multiple of
//! vpp where --pipeline-model-parallel-layout does not (DeepSeek-V3's Et|(tt|)*30mL puts 7 on the first of 8
//! stages of 4 chunks); a stage is priced by its layers either way, so that is not asked here.
inline std::string stage_split_problem(const training_job& j, const parallel_layout& l) {
  if (!l.pipeline_layout.empty()) {
    if (auto why = stated_twice(l); !why.empty()) return why;
    try {
      return pipeline_layout_problem(parse_pipeline_layout(l.pipeline_layout), l.pp, l.vpp, j.shape.layers,
                                     j.shape.mtp_layers);
    } catch (const invalid_input& e) {
      return "pipeline_layout: " + e.problem();
    }
  }
  if (stated_stages(l) == 0) return {};
  const std::string field = l.first_stage_layers ? "first_stage_layers" : "last_stage_layers";
  if (l.first_stage_layers == std::size_t{0} || l.last_stage_layers == std::size_t{0})
    return (l.first_stage_layers == std::size_t{0} ? "first_stage_layers" : "last_stage_layers") +
           std::string(": a stage must hold at least one layer");
  if (l.pp == 1)
    return field +
           ": a layout without pipeline stages (pp=1) has no first or last stage to size; drop it, or give "
           "pp > 1";
  const std::size_t layers = j.shape.layers, first = l.first_stage_layers.value_or(0),
                    last = l.last_stage_layers.value_or(0);
  const std::size_t left = l.pp - stated_stages(l);
  const std::string others = left == 1 ? "the other stage" : "the other " + std::to_string(left) + " stages";
  const std::string counts = std::to_string(first + last) + " layers on the stated stages";
  if (first + last > layers) return field + ": " + counts + " are more than the model's " + std::to_string(layers);
  const std::size_t rest = layers - first - last;
  if (left == 0 && rest != 0)
    return field + ": with pp=2 the first and last stages are all of them, and hold " + counts + " of the model's " +
           std::to_string(layers) + "; make them add up to " + std::to_string(layers);
  if (left > 0 && rest == 0) return field + ": " + counts + " leave " + others + " none";
  if (left > 0 && rest % left != 0)
    return field + ": " + others + " cannot share the " + std::to_string(rest) +
           " layers left evenly (Megatron-Core requires it); state counts that leave a multiple of " +
           std::to_string(left);
  return {};
}
}  // namespace detail

//! The least ZeRO stage the job runs at: 1 where its weights are kept in fp8 alone (fp8_params), which the
//! distributed optimizer's fp32 master weights update (Megatron-Core's --fp8-param-gather requires it); else 0.
//! layout_problem refuses less, and the planners start their search there.
inline int least_zero_stage(const training_job& j) noexcept { return j.fp8_params ? 1 : 0; }

//! The parameter all-gathers a step runs over the ranks that share weights, for `micro_batches` a step: ZeRO-1 and
//! 2 gather the updated shards once; ZeRO-3 gathers the weights again for each micro-batch's forward and backward.
inline double parameter_gathers(const parallel_layout& l, double micro_batches) noexcept {
  return l.zero_stage == 3 ? 2.0 * micro_batches : l.zero_stage >= 1 ? 1.0 : 0.0;
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

//! The first rule the layout breaks for this job and cluster, or empty.
inline std::string layout_problem(const training_job& j, const parallel_layout& l) {
  const auto& m = j.shape;
  if (l.tp == 0 || l.pp == 0 || l.vpp == 0 || l.cp == 0 || l.dp == 0 || l.micro_batch == 0 || l.ep == 0 || l.etp == 0)
    return "parallelism: every degree and the micro-batch must be at least 1";
  if (m.heads % l.tp != 0)
    return "tp: " + std::to_string(l.tp) + " does not divide the " + std::to_string(m.heads) + " heads";
  if (m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)
    return "tp: " + std::to_string(l.tp) + " and the " + std::to_string(m.kv_heads) +
           " KV heads do not divide each other";
  if (m.ffn_hidden % l.tp != 0) return "tp: " + std::to_string(l.tp) + " does not divide ffn_hidden";
  if (l.pp * l.vpp > m.layers && l.pipeline_layout.empty())  // a stated layout may leave a chunk empty
    return "pp: " + std::to_string(l.pp * l.vpp) + " model chunks for " + std::to_string(m.layers) + " layers";
  if (l.vpp > 1 && l.pp == 1) return "vpp: interleaving needs pipeline stages (pp > 1)";
  if (j.sequence % l.cp != 0)
    return "cp: " + std::to_string(l.cp) + " does not divide the sequence of " + std::to_string(j.sequence);
  if (j.global_batch % (l.dp * l.micro_batch) != 0)
    return "global_batch: " + std::to_string(j.global_batch) +
           " sequences do not split into dp=" + std::to_string(l.dp) + " replicas of micro-batches of " +
           std::to_string(l.micro_batch);
  const std::size_t mb = j.global_batch / (l.dp * l.micro_batch);
  if (const auto why = detail::flush_problem(l, mb); !why.empty()) return why;
  if (l.vpp > 1 && mb / l.flushes % l.pp != 0)
    return "vpp: the interleaved schedule needs the " + std::to_string(mb / l.flushes) + " micro-batches" +
           (l.flushes > 1 ? " a flush" : "") + " to be a multiple of pp=" + std::to_string(l.pp);
  if (l.zero_stage < 0 || l.zero_stage > 3) return "zero: ZeRO has stages 0 to 3";
  if (j.fp8_params && !j.fp8)
    return "fp8_params: keeps the GEMM weights in fp8, and the layers' GEMMs run in 16 bits; train in fp8 "
           "(\"precision\": \"fp8\"), or drop fp8_params";
  if (l.zero_stage < least_zero_stage(j))
    return "zero: weights kept in fp8 alone (fp8_params) are updated from a sharded optimizer's fp32 master "
           "weights (Megatron-Core's --fp8-param-gather requires the distributed optimizer); give zero=1 or more";
  if (l.zero_stage == 3 && l.pp > 1)
    return "zero: stage 3 re-gathers every stage's weights for every micro-batch; with pipeline stages use stage 1 or "
           "2 (FSDP2 under PyTorch's pipeline schedules gathers once a flush and reduces once: zero=1 with flushes=N)";
  if (l.sequence_parallel && l.tp == 1)
    return "sp: sequence parallelism splits along tensor-parallel ranks; it needs tp > 1";
  if (l.recompute_layers && l.recompute != recomputation::full)
    return "recompute_layers: recomputes that many layers of each model chunk in full (Megatron-Core's "
           "--recompute-method block), or every layer in groups of that many (recompute_method=uniform); give "
           "recompute=full beside it, or drop it";
  if (l.recompute_method == recompute_method::uniform && !l.recompute_layers)
    return "recompute_method: uniform checkpoints every layer in groups of recompute_layers; give recompute_layers=N "
           "beside it, or drop it (recompute=full alone recomputes each layer by itself)";
  if (l.recompute_layers == std::size_t{0})
    return "recompute_layers: 0 layers recomputed is recompute=none; give at least 1, or drop it";
  if (!l.modules.empty() && l.recompute == recomputation::full)
    return "recompute_modules: full recomputation already runs every module again; drop recompute_modules, or use "
           "recompute=selective or none";
  if (l.modules.has(recompute_module::moe_act) && !m.moe())
    return "recompute_modules: moe_act recomputes the experts' activation function, and the model has no experts";
  if (l.modules.has(recompute_module::mla_up_proj) && !m.mla())
    return "recompute_modules: mla_up_proj recomputes latent attention's up-projections, and the model's attention "
           "is not latent (give kv_lora_rank)";
  if (l.modules.has(recompute_module::mlp) && m.moe() && moe_layer_count(m) == m.layers)
    return "recompute_modules: mlp recomputes the dense layers' MLPs, and every layer of the model is a mixture of "
           "experts; use moe (the whole block) or moe_act";
  if (l.modules.has(recompute_module::moe) && !m.moe())
    return "recompute_modules: moe recomputes the mixture-of-experts blocks, and the model has no experts; use mlp";
  if (l.modules.has(recompute_module::shared_experts) && m.shared_experts == 0)
    return "recompute_modules: shared_experts recomputes the shared experts, and the model has none (give "
           "shared_experts)";
  if (l.modules.has(recompute_module::moe) &&
      (l.modules.has(recompute_module::moe_act) || l.modules.has(recompute_module::shared_experts)))
    return "recompute_modules: moe recomputes the whole block, the experts' activation and the shared experts with "
           "it; drop moe_act and shared_experts";
  if (auto why = detail::stage_split_problem(j, l); !why.empty()) return why;
  return detail::expert_problem(j, l);
}

//! One layer's share of a micro-batch on one GPU: forward, backward and what recomputation adds.
struct layer_cost {
  seconds gemm_f{}, gemm_b{}, attn_f{}, attn_b{}, elem_f{}, elem_b{};
  seconds all_reduce{};         //!< one tensor-parallel all-reduce of the activation
  bytes all_reduce_bytes{};     //!< what it sends per GPU
  double pass_all_reduces = 2;  //!< per pass: attention's and the MLP's (an MoE block's shared experts' only)
  double all_reduces = 4;       //!< per layer: both passes', and the forward's again with full recomputation
  seconds exchange{};           //!< per pass, an MoE block's dispatch and combine (model/moe_layer.hpp)
  bytes exchange_bytes{};       //!< what they send per GPU per pass
  double exchanges = expert_exchange_passes(false);  //!< passes that exchange, a recomputed forward's too
  seconds cp_f{}, cp_b{};                            //!< the context ring's exposed time
  bytes kv_chunk{};                                  //!< what one hop of the ring sends
  double ring_blocks = 0;  //!< hops a micro-batch's passes send (context_ring_blocks), recomputed ones too
  seconds recompute{};
  double kept = 0, scores = 0;  //!< activation bytes without recomputation, and the attention scores' share
  double stored = 0;            //!< activation bytes kept under the layout's recomputation policy
  double modules = 0;           //!< what its single recomputed modules no longer keep (and rebuild backward)
  [[nodiscard]] seconds forward() const {
    return gemm_f + attn_f + elem_f + pass_all_reduces * all_reduce + cp_f + exchange;
  }
  [[nodiscard]] seconds backward() const {
    return gemm_b + attn_b + elem_b + pass_all_reduces * all_reduce + cp_b + exchange;
  }
};

namespace detail {
//! Bytes Transformer Engine's fp8 cast of a GEMM operand moves an element in training: the 16-bit value read
//! (2), its cast and the cast's transpose, which the weight-gradient GEMM takes, written (1 each). Its Linear
//! runs fp8_cast_transpose_fused on the input forward and on the output's gradient backward
//! (transformer_engine/pytorch/module/linear.py). Under sequence parallelism it casts the rank's rows before
//! the gather and transposes the gathered ones in the backward pass instead, which this count approximates.
inline constexpr double fp8_cast_bytes = 4.0;

//! What a dense MLP keeps of layer_activation_bytes: fc1's input, the activation's input(s) and fc2's input.
inline double dense_mlp_activation_bytes(const training_job& j, double T, double t, bool sp) {
  const auto& m = j.shape;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double linear_in = j.fp8 ? 1.0 : 2.0;
  return T * (linear_in * h / (sp ? t : 1.0) + (2.0 * m.up_width(f) + linear_in * f) / t);
}

//! An MoE layer: its block in place of the dense MLP (model/moe_layer.hpp). Returns the block's cost.
inline moe_block_cost replace_mlp(layer_cost& x, const training_job& j, const training_cluster& c,
                                  const parallel_layout& l, double T, double& traffic) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), etp = static_cast<double>(l.etp);
  const auto e = moe_block(j, c, l, T);
  x.gemm_f += e.gemm_f;
  x.gemm_b += e.gemm_b;
  x.pass_all_reduces = 1.0 + shared_expert_all_reduces(m);  // attention's, and the shared experts'
  x.all_reduces = 2.0 * x.pass_all_reduces;
  x.exchange = e.exchange();
  x.exchange_bytes = 2.0 * (e.all_to_all_bytes + e.etp_bytes);  // expert_exchange_bytes, or the node-deduplicated
  x.elem_f += e.copied / c.memory_bandwidth;
  x.elem_b += e.copied / c.memory_bandwidth;
  const double mlp = dense_mlp_activation_bytes(j, T, t, l.sequence_parallel);
  const double rows = j.expert_load() * e.rows;
  x.kept += e.kept - mlp;
  if (l.recompute != recomputation::full) x.stored += e.kept - mlp;
  training_job bf16 = j;
  bf16.fp8 = false;
  traffic +=
      j.fp8 ? moe_kept_bytes(bf16, l, T) - dense_mlp_activation_bytes(bf16, T, t, l.sequence_parallel) : e.kept - mlp;
  if (j.fp8) {
    // The experts' casts instead of the dense MLP's: each row's input and fc2's input forward; the gradients
    // of fc1's and fc2's outputs backward.
    const double fe = m.expert_ffn(), up = m.up_width(fe), f = static_cast<double>(m.ffn_hidden);
    x.elem_f += seconds{fp8_cast_bytes * (rows * (h + fe / etp) - T * (h + f / t)) / c.memory_bandwidth.value()};
    x.elem_b +=
        seconds{fp8_cast_bytes * (rows * (up / etp + h) - T * (m.up_width(f) / t + h)) / c.memory_bandwidth.value()};
  }
  return e;
}
}  // namespace detail

namespace detail {
//! One layer's attention core, forward and backward, for queries that see `keys` keys on average (causal: s/2
//! in full), a fused kernel walking `walk` positions (its rate's sequence on the device's measured curve).
inline std::pair<seconds, seconds> attention_core(const training_job& j, const training_cluster& c,
                                                  const parallel_layout& l, double keys, double walk) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), b = static_cast<double>(l.micro_batch);
  const double s = static_cast<double>(j.sequence), s_local = s / static_cast<double>(l.cp);
  // A query-key pair's width and a value's (one under standard attention); the kernel's rate at their mean.
  const double d_qk = m.query_key_dim(), d_v = m.value_dim(), d_head = (d_qk + d_v) / 2.0;
  const double heads = static_cast<double>(m.heads) / t;
  if (j.flash_attention && c.attention.measured()) {
    // One fused kernel: its s_local queries see `keys` keys on average (context parallelism's chunks are
    // balanced so), and the backward pass does 2.5 times the forward's work.
    const double work = attention_core_flops(b, heads, s_local, keys, d_head, false);
    return {seconds{work / (c.peak.value() * c.attention.forward_share(walk, d_head))},
            seconds{attention_backward_ratio * work / (c.peak.value() * c.attention.backward_share(walk, d_head))}};
  }
  // The attention core as batched GEMMs of (s_local × d)·(d × s) and (s_local × s)·(s × d_v), heads/t · b of each:
  // unfused, every score is computed and then masked, window or not; a fused kernel with no measured curve does
  // the share of them its queries attend to (the causal half in full), backward 2.5 times forward.
  seconds f = b * heads * (gemm_time(c, s_local, s, d_qk) + gemm_time(c, s_local, d_v, s));
  if (j.flash_attention) f = (keys / s) * f;
  return {f, (j.flash_attention ? attention_backward_ratio : 2.0) * f};
}

//! A GEMM of m rows, n outputs and k inputs.
struct gemm_shape {
  double m = 0, n = 0, k = 0;
};

//! A layer's GEMMs, held in place: the layout search prices a layer per candidate, so no allocation.
struct gemm_list {
  std::array<gemm_shape, 7> shapes{};  // latent attention's five projections and the MLP's two
  std::size_t size = 0;
  void push_back(const gemm_shape& g) { shapes[size++] = g; }
};

//! The key and value widths a tensor-parallel rank holds for each token: the KV heads (copied past t =
//! kv_heads) twice, or under latent attention every head's up-projected keys and values.
inline double key_value_width(const transformer_shape& m, double t) {
  if (m.mla()) return static_cast<double>(m.heads) * (m.query_key_dim() + m.value_dim()) / t;
  return 2.0 * static_cast<double>(m.kv_heads) * m.head_dim() / std::min(t, static_cast<double>(m.kv_heads));
}

//! The attention's projections on one of t tensor-parallel ranks, for T tokens: the fused QKV (KV heads copied
//! past t = kv_heads) and the output. Under latent attention: the queries' down- and up-projections (or one
//! from hidden), the keys' and values' down-projection with the shared rotary part, their up-projection, the
//! output; Megatron-Core runs the down-projections whole on every tensor-parallel rank, over its 1/t of the
//! sequence under sequence parallelism (T/split rows), and gathers the latents.
inline gemm_list attention_gemms(const transformer_shape& m, double T, double t, double split) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  gemm_list g;
  if (!m.mla()) {
    const double hq = a * m.head_dim();
    g.push_back({T, hq / t + key_value_width(m, t), h});
    g.push_back({T, h, hq / t});
    return g;
  }
  const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
  if (qr > 0) {
    g.push_back({T / split, qr, h});
    g.push_back({T, a * m.query_key_dim() / t, qr});
  } else {
    g.push_back({T, a * m.query_key_dim() / t, h});
  }
  g.push_back({T / split, kvr + static_cast<double>(m.rope_head_dim), h});
  g.push_back({T, a * (m.head_dim() + m.value_dim()) / t, kvr});
  g.push_back({T, h, a * m.value_dim() / t});
  return g;
}
}  // namespace detail

namespace detail {
//! The layout's single modules (model/recompute_modules.hpp), for T tokens a GPU: what each no longer keeps
//! comes off the layer's stored activations (and is held again while its layer's backward runs: `modules`),
//! and its second forward joins the recomputation: GEMMs at the device's curve, memory-bound work at the
//! memory's bandwidth, and the collectives that forward runs.
//!  - layernorm: the two norms' outputs as the next GEMMs keep them (an MoE layer's router takes the second,
//!    16-bit), 1/t of the tokens under sequence parallelism; each norm reads and writes a 16-bit row again
//!    (and casts it under fp8);
//!  - moe_act: fc2's input, a row of fe/etp values per token-expert row at the busiest rank's load; the
//!    activation reads its input(s) and writes its output again;
//!  - mla_up_proj: Q, K and V at their widths, 1/t of the heads; the two up-projections' GEMMs again;
//!  - mlp (a dense layer): all the MLP keeps but its input, which the checkpoint holds in 16 bits; fc1, the
//!    activation, fc2 and their casts again, and the MLP's tensor-parallel collective;
//!  - moe (an MoE layer): all the block keeps but its 16-bit input; the router, the dispatch and combine, the
//!    row copies, the experts' GEMMs, activation and casts, and the shared experts with their collective, again;
//!  - shared_experts: all they keep; their two GEMMs, activation, casts and collective again.
//! `gemms`: the layer's GEMM list, attention's first (`attention` of them), then the dense MLP's two; `block`:
//! an MoE layer's (replace_mlp's), null in a dense layer.
inline void recompute_single_modules(layer_cost& x, const training_job& j, const training_cluster& c,
                                     const parallel_layout& l, double T, std::span<const gemm_shape> gemms,
                                     std::size_t attention, const moe_block_cost* block) {
  const auto& m = j.shape;
  const bool moe = block != nullptr;
  const double t = static_cast<double>(l.tp), h = static_cast<double>(m.hidden), etp = static_cast<double>(l.etp);
  const double split = l.sequence_parallel ? t : 1.0, linear_in = j.fp8 ? 1.0 : 2.0,
               cast = j.fp8 ? fp8_cast_bytes : 0.0;
  const double expert_rows = moe ? j.expert_load() * block->rows : 0.0;
  const double fe = m.expert_ffn(), up_e = m.up_width(fe);
  const auto again = [&](const gemm_shape& p) { x.recompute += gemm_time(c, p.m, p.n, p.k, j.fp8); };
  // A dense MLP of width f over T tokens split t ways: what it keeps past its input (fc1's output, fc2's
  // input), and the traffic its activation and casts (fc1's and fc2's inputs, under fp8) run again.
  const auto mlp_inside = [&](double f) {
    const double up = m.up_width(f);
    return std::pair{T * (2.0 * up + linear_in * f) / t, T * (2.0 * up + 2.0 * f) / t + cast * T * (h + f / t)};
  };
  const auto collective_again = [&] {
    x.recompute += x.all_reduce;
    x.all_reduces += 1.0;
  };
  double saved = 0, traffic = 0;
  if (l.modules.has(recompute_module::layernorm)) {
    saved += T / split * h * (linear_in + (moe ? 2.0 : linear_in));
    traffic += 2.0 * T / split * h * (4.0 + cast);
  }
  if (moe && l.modules.has(recompute_module::moe_act)) {
    saved += expert_rows * linear_in * fe / etp;
    traffic += expert_rows * (2.0 * up_e + 2.0 * fe + cast * fe) / etp;
  }
  if (m.mla() && l.modules.has(recompute_module::mla_up_proj)) {
    const double a = static_cast<double>(m.heads);
    saved += 2.0 * T * a * (2.0 * m.query_key_dim() + m.value_dim()) / t;
    // The up-projections in attention_gemms' list: the keys' and values' (second to last of attention's) and,
    // where the queries have a latent, theirs (second).
    again(gemms[attention - 2]);
    if (m.q_lora_rank > 0) again(gemms[1]);
  }
  if (!moe && l.modules.has(recompute_module::mlp)) {
    const auto [inside, moved] = mlp_inside(static_cast<double>(m.ffn_hidden));
    // fc1's input stays, as the checkpoint's 16-bit copy where fc1 kept an fp8 cast.
    saved += inside + T / split * h * (linear_in - 2.0);
    traffic += moved;
    again(gemms[attention]);
    again(gemms[attention + 1]);
    collective_again();
  }
  if (moe && l.modules.has(recompute_module::moe)) {
    saved += block->kept - block->tokens * 2.0 * h;
    traffic += block->copied.value() + expert_rows * ((2.0 * up_e + 2.0 * fe) / etp + cast * (h + fe / etp));
    x.recompute += block->gemm_f + x.exchange;
    x.exchanges = expert_exchange_passes(true);
    if (m.shared_experts > 0) {
      traffic += mlp_inside(m.shared_ffn()).second;
      collective_again();
    }
  }
  if (moe && l.modules.has(recompute_module::shared_experts)) {
    const double fs = m.shared_ffn(), up_s = m.up_width(fs);
    const auto [inside, moved] = mlp_inside(fs);
    saved += inside;
    traffic += moved;
    again({T, up_s / t, h});
    again({T, h, fs / t});
    collective_again();
  }
  x.stored -= saved;
  x.modules = saved;
  x.recompute += seconds{traffic / c.memory_bandwidth.value()};
}
}  // namespace detail

//! The layer's cost for this layout (no check of the layout: price() checks); `moe`: a mixture-of-experts
//! layer, whose MLP is the experts' block.
inline layer_cost layer(const training_job& j, const training_cluster& c, const parallel_layout& l, bool moe = false) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), cp = static_cast<double>(l.cp), b = static_cast<double>(l.micro_batch);
  const double s = static_cast<double>(j.sequence), s_local = s / cp;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double T = b * s_local;
  layer_cost x;
  const double up = m.up_width(f) / t;
  // Attention's GEMMs, then the dense MLP's two (an MoE layer's block replaces them below). Under fp8 each
  // GEMM's input is cast forward, and its output's gradient backward: cast_in and cast_out elements.
  auto gemms = detail::attention_gemms(m, T, t, l.sequence_parallel ? t : 1.0);
  const std::size_t attention = gemms.size;
  gemms.push_back({T, up, h});
  gemms.push_back({T, h, f / t});
  double cast_in = 0, cast_out = 0;
  for (std::size_t i = 0; i < gemms.size; ++i) {
    const auto& g = gemms.shapes[i];
    cast_in += g.m * g.k;
    cast_out += g.m * g.n;
    if (moe && i >= attention) continue;
    x.gemm_f += detail::gemm_time(c, g.m, g.n, g.k, j.fp8);
    x.gemm_b += detail::gemm_bwd(c, g.m, g.n, g.k, j.fp8);
  }
  // The attention core, its layers' average where some attend through a window (model/transformer.hpp).
  const auto [attn_f, attn_b] = detail::attention_core(j, c, l, causal_keys_per_query(s, 0.0), s_local);
  x.attn_f = attn_f;
  x.attn_b = attn_b;
  if (const auto windowed = windowed_layer_count(m); windowed > 0) {
    const double w = static_cast<double>(m.sliding_window),
                 share = static_cast<double>(windowed) / static_cast<double>(m.layers);
    // The kernel walks about 2w positions a query block where a causal one over s walks s: a window's rate is
    // the curve's at a sequence of 2w.
    const auto [win_f, win_b] = detail::attention_core(j, c, l, causal_keys_per_query(s, w), std::min(s_local, 2 * w));
    x.attn_f = (1.0 - share) * attn_f + share * win_f;
    x.attn_b = (1.0 - share) * attn_b + share * win_b;
  }
  x.kept = layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, recomputation::none);
  x.scores = x.kept - layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, recomputation::selective);
  x.stored = layer_activation_bytes(j, s_local, s, b, t, l.sequence_parallel, l.recompute);
  const double kappa = c.elementwise_traffic;
  // The memory-bound kernels' traffic follows the 16-bit activations whatever fp8 keeps of them.
  training_job bf16 = j;
  bf16.fp8 = false;
  double traffic =
      j.fp8 ? layer_activation_bytes(bf16, s_local, s, b, t, l.sequence_parallel, recomputation::none) : x.kept;
  if (j.fp8) {
    // Casts to fp8 with their transposes (detail::fp8_cast_bytes): forward, the GEMMs' inputs; backward, the
    // gradients of their outputs.
    x.elem_f += seconds{detail::fp8_cast_bytes * cast_in / c.memory_bandwidth.value()};
    x.elem_b += seconds{detail::fp8_cast_bytes * cast_out / c.memory_bandwidth.value()};
  }
  std::optional<moe_block_cost> block;
  if (moe) block = detail::replace_mlp(x, j, c, l, T, traffic);
  const seconds elementwise{kappa * traffic / c.memory_bandwidth.value()};
  x.elem_f += elementwise;
  x.elem_b += 2.0 * elementwise;

  // Tensor-parallel collectives: the activation, 16-bit, per pass attention's and the MLP's.
  const bytes activation{T * h * 2.0};
  const auto tp_link = detail::as_collective(detail::level(c, span(l, layout_group::tensor)));
  x.all_reduce = l.tp > 1 ? ring_all_reduce_time(l.tp, activation, tp_link) : seconds{};
  x.all_reduce_bytes = l.tp > 1 ? 2.0 * (t - 1.0) / t * activation : bytes{};
  if (!l.modules.empty())
    detail::recompute_single_modules(x, j, c, l, T,
                                     std::span<const detail::gemm_shape>(gemms.shapes.data(), gemms.size), attention,
                                     block ? &*block : nullptr);
  // Context parallelism: K and V chunks around the ring, c − 1 hops forward; backward c − 1 hops of K, V, dK
  // and dV, then dK and dV home: 2(c − 1) + 1 chunks' worth (parallel/context_parallel.hpp's ring),
  // hidden behind the attention core where shorter.
  x.kv_chunk = bytes{T * detail::key_value_width(m, t) * 2.0};
  const auto& cp_link = detail::level(c, span(l, layout_group::context));
  const seconds hop = cp_link.latency + x.kv_chunk / cp_link.bandwidth;
  const seconds ring_f = l.cp > 1 ? (cp - 1.0) * hop : seconds{};
  const seconds ring_b = l.cp > 1 ? (cp - 1.0) * (hop + hop) + hop : seconds{};
  x.cp_f = ring_f > x.attn_f ? ring_f - x.attn_f : seconds{};
  x.cp_b = ring_b > x.attn_b ? ring_b - x.attn_b : seconds{};
  x.ring_blocks = context_ring_blocks(l.cp, l.recompute != recomputation::none);
  if (l.recompute == recomputation::full) {
    x.recompute = x.forward();
    x.all_reduces += x.pass_all_reduces;
    x.exchanges = expert_exchange_passes(true);
  } else if (l.recompute == recomputation::selective) {
    // The attention core runs forward again during the backward pass, as Megatron-Core checkpoints it
    // (checkpoint_core_attention), fused or not, with its context ring; a fused kernel keeps no scores
    // (x.scores is 0), so all it saves is the kernel's own statistics while its forward costs the same again.
    x.recompute += x.attn_f + x.cp_f + seconds{kappa * x.scores / c.memory_bandwidth.value()};
  }
  return x;
}

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
  const double in_flight = pipeline_in_flight(l.pp, static_cast<std::size_t>(mb), l.vpp);
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

//! Throws invalid_input naming the field when the layout cannot run the job. `codec` is the cost of the
//! gradient codec the layout names (l.codec), uncoded_gradient() when it names none.
inline parallel_step_cost price(const training_job& j, const training_cluster& c, const parallel_layout& l,
                                const compressor_cost& codec) {
  validate(j.shape);
  validate(c.gemm);
  if (l.codec.empty() ? !is_uncoded(codec) : codec.name != l.codec)
    throw invalid_input("codec",
                        "the layout names " + (l.codec.empty() ? std::string("no codec") : "\"" + l.codec + "\"") +
                            " and is priced with \"" + codec.name + "\"'s cost. Fix: price it with its own codec's");
  if (j.fp8 && !(c.fp8_peak > flops_per_second{}))
    throw invalid_input("precision",
                        "fp8: the device has no fp8 rate. Fix: train in 16 bits (\"precision\": \"mixed\"), or on "
                        "a device with one (H100, H200, GB200)");
  if (const auto why = layout_problem(j, l); !why.empty()) {
    const auto colon = why.find(':');
    throw invalid_input(why.substr(0, colon), why.substr(colon + 2));
  }
  if (l.dispatcher == token_dispatcher::by_node && l.ep > c.domain && l.ep % c.domain != 0)
    throw invalid_input("dispatcher",
                        "deepep sends a token once to each node its experts reach, and ep=" + std::to_string(l.ep) +
                            " fills part of a node of " + std::to_string(c.domain) + "; give an ep that divides " +
                            std::to_string(c.domain) + " or a multiple of it");
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp);
  const double cp = static_cast<double>(l.cp), d = static_cast<double>(l.dp), b = static_cast<double>(l.micro_batch);
  const double s = static_cast<double>(j.sequence), s_local = s / cp;
  const double h = static_cast<double>(m.hidden);
  const double T = b * s_local;  // tokens per GPU per micro-batch
  const double mb = static_cast<double>(j.global_batch) / (d * b);
  const auto stages = pipeline_stage_layers(m.layers, l);

  parallel_step_cost r;
  r.micro_batches = mb;
  const bytes activation{T * h * 2.0};
  r.recomputed = recomputed_stage_layers(l, stages);
  r.checkpointed = checkpointed_stage_inputs(l, stages), r.rebuilt_group = rebuilt_group_layers(l, stages);
  const auto st = detail::binding_stage_of(j, c, l, stages, r.recomputed, T);
  r.layers_per_stage = static_cast<std::size_t>(st.layers);
  r.pipeline_stages = l.pp, r.stages = stages, r.last_binds = st.last, r.prediction_modules = m.mtp_layers;

  // Pipeline sends: the activation split t ways, forward and backward, once per model chunk boundary. Without
  // sequence parallelism each rank holds the whole activation: it sends its 1/t and the next stage all-gathers
  // the rest over the tensor group (Narayanan et al. 2021's scatter/gather; trinity-train runs the same).
  const auto& pp_link = detail::level(c, span(l, layout_group::pipeline));
  const bytes p2p = activation / t;
  const bool regather = l.pp > 1 && l.tp > 1 && !l.sequence_parallel;
  const double transfers = pipeline_transfers(l.pp, l.vpp);
  const seconds gather_mb =
      regather ? transfers * ring_all_gather_time(l.tp, activation, detail::as_collective(detail::level(c, l.tp)))
               : seconds{};
  const seconds pp_mb = l.pp > 1 ? transfers * (pp_link.latency + p2p / pp_link.bandwidth) + gather_mb : seconds{};

  const seconds per_mb = st.binding([](const layer_cost& x) { return x.forward() + x.backward() + x.recompute; }) +
                         st.logits_f + st.logits_b + st.loss_f + st.loss_b + pp_mb;
  r.gemm = mb * (st.binding([](const layer_cost& x) { return x.gemm_f + x.gemm_b; }) + st.logits_f + st.logits_b);
  r.attention = mb * st.binding([](const layer_cost& x) { return x.attn_f + x.attn_b; });
  // Under fp8 the stage's GEMM weights are cast once a step, with the transpose the backward pass multiplies by
  // (detail::fp8_cast_bytes), and kept cast beside their 16-bit copies. Kept in fp8 alone (fp8_params), the
  // optimizer writes them cast and only the transpose is made (1 byte read, 1 written).
  const auto weights = detail::stage_weights_of(j, l, stages);
  const double cast_bytes = j.fp8_params ? 2.0 : detail::fp8_cast_bytes;
  const seconds weight_cast = j.fp8 ? seconds{cast_bytes * weights.linear / c.memory_bandwidth.value()} : seconds{};
  r.elementwise =
      mb * (st.binding([](const layer_cost& x) { return x.elem_f + x.elem_b; }) + st.loss_f + st.loss_b) + weight_cast;
  r.recompute = mb * st.binding([](const layer_cost& x) { return x.recompute; });
  // The two passes' own collectives: those a recomputed forward runs again are in `recompute` already (the
  // counts all_reduces and exchanges include them, for the bytes sent).
  r.tp_comm = mb * st.binding([](const layer_cost& x) { return 2.0 * x.pass_all_reduces * x.all_reduce; });
  r.ep_comm = mb * st.binding([](const layer_cost& x) { return 2.0 * x.exchange; });
  r.cp_comm = mb * st.binding([](const layer_cost& x) { return x.cp_f + x.cp_b; });
  r.pp_comm = mb * pp_mb;
  // Each flush fills and drains the pipeline: F bubbles of (p − 1)/v micro-batches' time.
  const double flushes = static_cast<double>(l.flushes), mb_flush = mb / flushes;
  r.flushes = l.flushes;
  r.bubble = flushes * pipeline_bubble(l.pp, static_cast<std::size_t>(mb_flush), l.vpp) * mb_flush * per_mb;
  r.tp_bytes = mb * st.binding([](const layer_cost& x) { return x.all_reduces * x.all_reduce_bytes; }) +
               (regather ? mb * transfers * (t - 1.0) / t * activation : bytes{});
  r.ep_bytes = mb * st.binding([](const layer_cost& x) { return x.exchanges * x.exchange_bytes; });
  r.cp_bytes = mb * st.binding([](const layer_cost& x) { return x.ring_blocks * x.kv_chunk; });
  r.pp_bytes = mb * transfers * p2p;

  const auto fp8 = detail::kept_in_fp8(j, weights);
  detail::price_data_parallel(r, j, c, l, codec, weights, fp8, st, mb);
  // The embedding group's all-reduce runs once between the last backward and the update, under nothing; its two
  // ranks are the pipeline's ends, as far apart as its span.
  r.embedding_bytes = embedding_all_reduce_bytes(j, l);
  r.embedding_sync = r.embedding_bytes > bytes{}
                         ? ring_all_reduce_time(2, r.embedding_bytes, detail::as_collective(pp_link))
                         : seconds{};
  // Coding runs on the device between the last backward and the update, never under either.
  r.step = mb * per_mb + weight_cast + r.bubble + r.dp_comm + r.codec + r.embedding_sync + r.optimizer + r.offload;
  detail::price_memory(r, j, l, weights, fp8, st, stages, mb_flush, T);

  r.model_flops = training_flops(m, static_cast<double>(j.global_batch), s, recomputation::none);
  r.mfu = r.model_flops.value() / (r.step.value() * static_cast<double>(l.gpus()) * c.peak.value());
  return r;
}

//! A layout whose gradient goes uncoded.
inline parallel_step_cost price(const training_job& j, const training_cluster& c, const parallel_layout& l) {
  return price(j, c, l, uncoded_gradient());
}

}  // namespace trinity::model
