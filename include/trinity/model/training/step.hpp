#pragma once
//! \file
//! The price of one training step under a layout (price()): the binding stage's layers, pipeline, collectives,
//! update and memory put together.
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
#include <trinity/model/training/memory.hpp>

namespace trinity::model {

//! Throws invalid_input naming the field when the layout cannot run the job. `codec` is the cost of the
//! gradient codec the layout names (l.codec), uncoded_gradient() when it names none.
inline parallel_step_cost price(const training_job& j, const training_cluster& c, const parallel_layout& l,
                                const compressor_cost& codec) {
  validate(j.shape);
  validate(c.gemm);
  validate(c.stack);
  if (l.codec.empty() ? !is_uncoded(codec) : codec.name != l.codec)
    throw invalid_input("codec",
                        "the layout names " + (l.codec.empty() ? std::string("no codec") : "\"" + l.codec + "\"") +
                            " and is priced with \"" + codec.name + "\"'s cost. Fix: price it with its own codec's");
  if (j.fp8 && !(c.fp8_peak > flops_per_second{}))
    throw invalid_input("precision",
                        "fp8: the device has no fp8 rate. Fix: train in 16 bits (\"precision\": \"mixed\"), or on "
                        "a device with one (H100, H200, GB200)");
  if (const auto broken = check_layout(j, l)) throw broken->error();
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
  r.bubble = flushes * pipeline_bubble(l.schedule, l.pp, static_cast<std::size_t>(mb_flush), l.vpp) * mb_flush * per_mb;
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
  // What the stack's allocator holds beyond the tensors counted (model/training_stack.hpp; none by default).
  r.allocator = r.device_bytes * (c.stack.memory_factor - 1.0) + c.stack.memory_overhead;
  r.device_bytes += r.allocator;

  r.model_flops = training_flops(m, static_cast<double>(j.global_batch), s, recomputation::none);
  r.mfu = r.model_flops.value() / (r.step.value() * static_cast<double>(l.gpus()) * c.peak.value());
  return r;
}

//! A layout whose gradient goes uncoded.
inline parallel_step_cost price(const training_job& j, const training_cluster& c, const parallel_layout& l) {
  return price(j, c, l, uncoded_gradient());
}

}  // namespace trinity::model
