#pragma once
// trinity-train with pipeline parallelism (--pp, --vpp): the MLP's layers split into pp·vpp chunks, rank r of
// each pipeline holding chunks r, r + pp, …; the world's pp-rank pipelines are data-parallel replicas, each
// taking its share of the global batch in --micro-batches micro-batches through parallel::run_pipeline (1F1B,
// or interleaved), its layers' states in a shard::data_parallel under the ZeRO stage over its data-parallel
// group (parallel::groups_of). Same task, same initial parameters, same loss as the data-parallel loop, so
// the losses are DDP's up to the order fp32 sums run in. Rank 0 prints one JSON line per step and a summary
// with the pipeline's bytes and kept activations as the mechanism's model says them.

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include <trinity/train/attention_block.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/shard.hpp>

#include <trinity/train/mlp.hpp>
#include <trinity/train/teacher_task.hpp>
#include <trinity/train/tensor_slices.hpp>
#include <trinity/train/pipeline_chunks.hpp>
#include <trinity/train/pipeline_prediction.hpp>
#include <trinity/train/placement.hpp>

#include "train.hpp"

namespace trinity::train {

namespace detail {

// What the summary predicts of ZeRO and offload for this rank's Ψ over its data-parallel group, per rank.
template <class Comm>
nlohmann::json predicted_states(Comm& c, const config& cfg, std::size_t psi, std::size_t group, int stage,
                                const model::state_bytes& sb) {
  // ZeRO's traffic (model/sharding.hpp), in whole bytes. Stage 3 gathers each layer for every micro-batch's
  // forward and backward: 2m gathers and a reduce-scatter where one micro-batch has three
  // (model/parallel_training.hpp counts the same).
  const double zero_units = stage == 3 ? (1.0 + 2.0 * static_cast<double>(cfg.micro_batches)) / 3.0 : 1.0;
  const auto dp =
      per_rank(c, static_cast<std::uint64_t>(std::llround(
                      zero_units *
                      model::zero_traffic_per_step(static_cast<double>(psi), group, stage, model::fp32_adam).value())));
  // Offloaded, the states and master copy leave the device, and a step moves the gradient shard down and the
  // parameter shard up.
  const auto offloaded = per_rank(
      c, static_cast<std::uint64_t>(std::llround(
             model::zero_memory_per_rank(static_cast<double>(psi), group, stage, sb, cfg.offload).offloaded.value())));
  const auto moved = per_rank(
      c, static_cast<std::uint64_t>(std::llround(
             model::offload_traffic_per_step(static_cast<double>(psi), group, stage, model::fp32_adam, cfg.offload)
                 .value())));
  // a codec's frames are not counted here: verify prices them with the planner's model
  return {{"data_parallel_bytes_per_step", cfg.compress.empty() ? nlohmann::json(dp) : nlohmann::json(nullptr)},
          {"offloaded_bytes_per_rank", offloaded},
          {"offload_bytes_per_step", moved}};
}

// A pipelined step's end: the passes left every gradient to the step, so each layer is marked ready here (with
// --inject-nan, after a NaN is put in this rank's first layer's at its step), and the world votes before the
// dense states and the experts step (train::detail::step_voted): every stage skips where one saw a NaN.
template <class Comm, class States, class Moe>
shard::step_report finish_step(Comm& c, const config& cfg, long t, States& states, Moe* moe, const shard::adam& opt,
                               std::uint64_t& dense_moved) {
  if (t == cfg.inject_nan_step && c.rank() == cfg.inject_nan_rank)
    states.gradient(0)[0] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t l = 0; l < states.layers(); ++l) states.gradient_ready(l);
  if (moe) moe->finish_gradients();
  return step_voted(c, states, moe, opt, &dense_moved);
}

// Bytes each group sent, gathered per rank, and the ledger's residency, for one step's JSON line.
struct step_counts {
  std::uint64_t pipeline = 0, data = 0, tensor = 0, context = 0, experts = 0, expert_data = 0;
  std::uint64_t parameters = 0, gradients = 0, optimizer = 0, offloaded = 0, moved = 0, stashed = 0, peak = 0, ns = 0;
  std::uint64_t activations = 0, forwards = 0;  // the layers' activation bytes at most, and their forwards run
  // What the ledger holds between the passes and the optimizer step: what ZeRO's formulas count.
  static step_counts resident_in(const shard::memory_ledger& ledger) {
    using shard::state_kind;
    step_counts k;
    k.parameters = ledger.resident(state_kind::parameters);
    k.gradients = ledger.resident(state_kind::gradients);
    k.optimizer = ledger.resident(state_kind::optimizer_states);
    k.offloaded = ledger.resident(state_kind::optimizer_states, shard::placement::offload);
    return k;
  }
};
template <class Comm>
nlohmann::json step_line(Comm& c, const config& cfg, const model::parallel_layout& layout, const step_counts& k) {
  const auto all = [&](std::uint64_t x) { return per_rank(c, x); };
  return {{"ranks", c.size()},
          {"tp", layout.tp},
          {"sp", cfg.sequence_parallel},
          {"pp", layout.pp},
          {"vpp", layout.vpp},
          {"cp", layout.cp},
          {"dp", layout.dp},
          {"micro_batches", cfg.micro_batches},
          {"stage", layout.zero_stage},
          {"offload", cfg.offload},
          {"compress", cfg.compress.empty() ? nlohmann::json(nullptr) : nlohmann::json(cfg.compress)},
          {"resident_bytes",
           {{"parameters", all(k.parameters)},
            {"gradients", all(k.gradients)},
            {"optimizer_states", all(k.optimizer)},
            {"offloaded", all(k.offloaded)}}},
          {"peak_bytes", {{"device", all(k.peak)}, {"activations", all(k.activations)}}},
          {"layer_forwards", all(k.forwards)},
          {"sent_bytes", all(k.pipeline + k.data + k.tensor + k.context + k.experts + k.expert_data)},
          {"offload_bytes", all(k.moved)},
          {"pipeline_bytes", all(k.pipeline)},
          {"data_parallel_bytes", all(k.data)},
          {"tensor_parallel_bytes", all(k.tensor)},
          {"context_parallel_bytes", all(k.context)},
          {"peak_stashed_chunks", all(k.stashed)}};
}

// The run's last line: its layout and states beside what the counting formulas predict per rank.
template <class Comm>
void pipelined_summary(Comm& c, const config& cfg, const mlp_shape& shape, const model::parallel_layout& layout,
                       const auto& local, const auto& predicted, int zero, const std::vector<double>& step_seconds,
                       const nlohmann::json& last, const nlohmann::json& experts, std::ostream& out) {
  const std::size_t cps = cfg.context;
  const model::state_bytes sb = cfg.offload ? model::state_bytes{4, 4, 12} : model::fp32_adam;
  auto pipeline = predicted_states(c, cfg, local.psi, layout.dp * cps, zero, sb);
  pipeline["bytes_per_step"] = per_rank(c, predicted.pipeline);
  pipeline["peak_stashed_chunks_rank0"] = predicted.peak_rank0;
  pipeline["tensor_parallel_bytes_per_step"] = per_rank(c, predicted.tensor);
  pipeline["context_parallel_bytes_per_step"] = per_rank(c, predicted.context);
  pipeline["peak_activation_bytes"] = per_rank(c, predicted.activation_peak);
  pipeline["layer_forwards_per_step"] = per_rank(c, predicted.layer_forwards);
  pipeline["recompute_layers"] = cfg.recompute_layers;
  pipeline["recompute_method"] = model::to_string(cfg.recompute_method);
  pipeline["recompute_attention"] = cfg.recompute_attention;
  pipeline["recompute_experts"] = cfg.recompute_experts;
  pipeline["recompute_shared_experts"] = cfg.recompute_shared;
  const auto psi_all = per_rank(c, local.psi);
  if (c.rank() != 0) return;
  nlohmann::json summary{
      {"summary",
       {{"parameters", shape.parameters()},
        {"ranks", c.size()},
        {"layout", model::to_string(layout)},
        {"parameters_per_rank", psi_all},
        {"state_bytes", {{"parameter", sb.parameter}, {"gradient", sb.gradient}, {"optimizer", sb.optimizer}}},
        {"offload", cfg.offload},
        {"pipeline", pipeline},
        {"step_seconds", step_seconds},
        {"last_step", last}}}};
  if (!experts.is_null()) summary["summary"]["experts"] = experts;
  out << summary.dump() << '\n' << std::flush;
}

}  // namespace detail

template <class Scheme, class Comm>
int run_pipelined(Comm& c, const config& cfg, std::ostream& out, any_reduction<comm::group<Comm>> reduction,
                  const group_reductions<Comm>& expert_reductions) {
  using namespace trinity::shard;
  const mlp_shape shape = cfg.shape();
  const std::size_t p = cfg.pipeline, v = cfg.virtual_stages, m = cfg.micro_batches, t = cfg.tensor, cps = cfg.context;
  const auto layout = pipelined_layout(cfg, shape, static_cast<std::size_t>(c.size()), Scheme::shards.zero_stage());
  const auto groups = parallel::groups_of(layout, c.size(), c.rank());
  // ZeRO shards, and gradients sum, over the ranks that hold the same weights: data and context.
  comm::group tp(c, groups.tp), pp(c, groups.pp), cp(c, groups.cp), dp(c, groups.weights);
  // Sequences over the replicas; each replica's context ranks hold S/c tokens of every one of its sequences.
  const comm::partition samples(cfg.batch, layout.dp);
  const std::size_t replica = static_cast<std::size_t>(dp.rank()) / cps;
  const std::size_t rows = micro_batch_rows(cfg, samples.size(static_cast<int>(replica)));
  const std::size_t rank = static_cast<std::size_t>(pp.rank());
  const int tr = tp.rank();

  const auto local = local_layers_of(cfg, shape, rank, tr);
  const teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
  const adam opt{.learning_rate = cfg.learning_rate};
  memory_ledger ledger;
  data_parallel<Scheme, comm::group<Comm>, any_reduction<comm::group<Comm>>> states(
      dp, ledger, local.sizes, local.initial, opt, std::move(reduction));
  const auto predicted = predict_pipelined(cfg, shape, rows, rank, tr);
  // The experts on the stage holding layer 1, its tp·cp·dp ranks regrouped into expert groups. Their states
  // are charged to a ledger of their own, so the dense states' residency stays what ZeRO's formulas count.
  using experts_type = moe_block<Scheme, Comm>;
  std::optional<experts_type> moe;
  memory_ledger expert_ledger;
  const auto starts = chunk_starts(cfg, shape.layers());
  const std::size_t stage_ranks = t * cps * layout.dp, owner = chunk_holding(starts, 1) % p;
  if (cfg.experts() && rank == owner)
    emplace_experts(moe, c, groups, owner * stage_ranks, stage_ranks, expert_ledger, cfg.moe, shape.out(1),
                    cfg.seed + 1, opt, expert_reductions);

  // Checkpoints: this rank's piece of the dense layers in its pipeline rank's and slice's directory.
  const saved_stages split{p, v, t};
  const long step0 = cfg.load_checkpoint.empty() ? 0 : resume_from(c, cfg.load_checkpoint, [&] {
    return load_checkpoint(cfg.load_checkpoint, states, dp.rank(), local.ids, shape, t, static_cast<std::size_t>(tr),
                           cfg.experts(), moe);
  });

  nlohmann::json last;
  std::vector<double> step_seconds;
  for (long t_step = step0; t_step < step0 + cfg.steps; ++t_step) {
    const auto started = std::chrono::steady_clock::now();
    ledger.reset_peaks();
    const std::uint64_t pp_before = pp.bytes_sent(), dp_before = dp.bytes_sent(), tp_before = tp.bytes_sent(),
                        cp_before = cp.bytes_sent(), experts_before = moe ? moe->sent() : 0,
                        shared_before = moe ? moe->tensor_sent() : 0, expert_data_before = moe ? moe->data_sent() : 0;
    auto stage = chunks_of(cfg, shape, task, states, tp, cp, moe ? &*moe : nullptr, rank,
                           samples.begin(static_cast<int>(replica)), rows, t_step);
    const auto stats = parallel::run_pipeline(pp, cfg.schedule, m, v, stage);
    auto k = detail::step_counts::resident_in(ledger);
    std::uint64_t dense_moved = 0;
    const step_report report = detail::finish_step(c, cfg, t_step, states, moe ? &*moe : nullptr, opt, dense_moved);
    k.ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
    k.pipeline = pp.bytes_sent() - pp_before, k.data = dp.bytes_sent() - dp_before;
    // The shared experts' collectives are the tensor group's, as the step model counts them.
    k.tensor = tp.bytes_sent() - tp_before + (moe ? moe->tensor_sent() - shared_before : 0);
    k.context = cp.bytes_sent() - cp_before;
    k.experts = moe ? moe->sent() - experts_before : 0;
    k.expert_data = moe ? moe->data_sent() - expert_data_before : 0;
    k.moved = dense_moved, k.stashed = stats.peak_stashed, k.peak = ledger.peak(placement::device);
    k.activations = stage.peak_floats * sizeof(float), k.forwards = stage.layer_forwards;
    double loss = stage.loss;
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    nlohmann::json line = detail::step_line(c, cfg, layout, k);
    if (cfg.experts()) line.update(detail::expert_step(c, moe ? &*moe : nullptr, k.experts, k.expert_data));
    train::detail::emit_step(c, std::move(line), t_step + 1, loss / static_cast<double>(cfg.tokens()), report, k.ns,
                             step_seconds, last, out);
  }
  if (!cfg.save_checkpoint.empty())
    save_checkpoint(cfg.save_checkpoint, stage_path({}, rank, split, static_cast<std::size_t>(tr)), states, dp, moe, c,
                    step0 + cfg.steps, layout_word(cfg, c.size()));
  // Each pass of the experts takes the rows this rank holds of a micro-batch (rows/t with sp).
  const auto experts =
      cfg.experts() ? detail::expert_summary(c, cfg, moe ? &*moe : nullptr, cfg.sequence_parallel ? rows / t : rows, m)
                    : nlohmann::json();
  detail::pipelined_summary(c, cfg, shape, layout, local, predicted, Scheme::shards.zero_stage(), step_seconds, last,
                            experts, out);
  return 0;
}

}  // namespace trinity::train
