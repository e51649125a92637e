#pragma once
// The training loop of trinity-train, generic over the communicator and the
// shard scheme: per step, forward layer by layer (acquire, compute, release),
// backward in reverse (acquire, compute, gradient_ready, release), then the
// sharded optimizer step. Rank 0 prints one JSON line per step.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <trinity/comm/agreed.hpp>
#include <trinity/comm/collectives.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard.hpp>
#include <trinity/train/any_reduction.hpp>
#include <trinity/train/attention_block.hpp>
#include <trinity/train/checkpoint.hpp>
#include <trinity/train/checkpoint_layout.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/data_parallel_pass.hpp>
#include <trinity/train/moe_block.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/step_vote.hpp>
#include <trinity/train/teacher_task.hpp>

namespace trinity::train {

namespace detail {

// Every rank's part in a step's line; rank 0 prints it: `fields`, the step's number, its loss a token, whether it
// was skipped and by whom, and the slowest rank's seconds (from every rank's `ns`), which step_seconds keeps. The
// printed line becomes `last`.
template <class Comm>
void emit_step(Comm& c, nlohmann::json fields, long step, double loss, const shard::step_report& report,
               std::uint64_t ns, std::vector<double>& step_seconds, nlohmann::json& last, std::ostream& out) {
  const auto all = per_rank(c, ns);
  if (c.rank() != 0) return;
  step_seconds.push_back(static_cast<double>(*std::max_element(all.begin(), all.end())) * 1e-9);
  fields["step"] = step;
  fields["loss"] = loss;
  fields["skipped"] = report.skipped;
  fields["nonfinite_ranks"] = report.nonfinite_ranks;
  fields["step_seconds"] = step_seconds.back();
  out << fields.dump() << '\n' << std::flush;
  last = std::move(fields);
}

// The experts' figures of a step, every rank's (a collective; `moe` null on a rank without the block): bytes
// sent over the expert groups, the exchange's count of them, bytes sent over the block's data-parallel groups
// (the experts' gradient reductions and ZeRO's gathers, and the router's), and assignments dropped at an
// expert's capacity.
template <class Comm, class Moe>
nlohmann::json expert_step(Comm& c, const Moe* moe, std::uint64_t sent, std::uint64_t data_sent) {
  return {{"expert_parallel_bytes", per_rank(c, sent)},
          {"expert_data_parallel_bytes", per_rank(c, data_sent)},
          {"expert_parallel_counted", per_rank(c, moe ? moe->counted() : 0)},
          {"dropped_assignments", per_rank(c, moe ? moe->dropped() : 0)}};
}

// The summary's experts (a collective; `moe` null on a rank without the block): the block's shape and, under
// balanced routing, the step model's count of each rank's bytes over its expert groups a step, `passes` passes of
// `rows` tokens each (the block sits in the first recomputed pair, so --recompute-layers runs its forward again, as
// --recompute-experts does alone).
template <class Comm, class Moe>
nlohmann::json expert_summary(Comm& c, const config& cfg, const Moe* moe, std::size_t rows, std::size_t passes) {
  const bool again = cfg.recompute_layers > 0 || cfg.recompute_experts;
  // Every rank runs the same dispatcher: the model's count is there for all, or for none (train::model_counts).
  const bool counted = cfg.moe.balanced && model_counts(cfg.moe.dispatch);
  const auto mine = moe ? moe->modelled(rows, again) : std::optional<double>(0.0);
  const auto modelled =
      per_rank(c, static_cast<std::uint64_t>(std::llround(static_cast<double>(passes) * mine.value_or(0.0))));
  const auto params = per_rank(c, moe ? moe->parameters_per_rank() : 0);
  const auto shared = per_rank(c, moe ? moe->shared_parameters_per_rank() : 0);
  nlohmann::json per = nlohmann::json::array();
  for (const auto m : modelled) per.push_back(counted ? nlohmann::json(m) : nlohmann::json());
  nlohmann::json out = {{"experts", cfg.moe.experts},
                        {"top_k", cfg.moe.top_k},
                        {"ep", cfg.moe.ep},
                        {"etp", cfg.moe.etp},
                        {"balanced", cfg.moe.balanced},
                        {"parameters_per_rank", *std::max_element(params.begin(), params.end())},
                        {"shared_experts", cfg.moe.shared_experts},
                        {"shared_parameters_per_rank", *std::max_element(shared.begin(), shared.end())},
                        {"modelled_bytes_per_step", per}};
  if (const auto* by_node = std::get_if<node_dispatch>(&cfg.moe.dispatch))
    out["dispatcher"] = {{"name", "deepep"}, {"node_ranks", by_node->node_ranks}};
  return out;
}

}  // namespace detail

namespace detail {

// The layers ZeRO-3 holds gathered at once in the data-parallel loop: one, a recomputed pair's two (three where
// the experts after the first pair run it again before the third layer's backward), or a group's.
inline double gathered_at_once(const config& cfg, std::size_t layers) {
  if (cfg.recompute_layers == 0) return 1.0;
  if (cfg.group_layers() == 2) return cfg.experts() ? 3.0 : 2.0;
  return static_cast<double>(std::min(cfg.group_layers(), cfg.recomputed_layers(layers)));
}

// The run's summary: what the step model predicts of the states and the traffic beside the run's steps.
inline nlohmann::json summary_of(const config& cfg, const mlp_shape& shape, int ranks, int stage,
                                 const model::state_bytes& sb, const model::memory_per_rank& predicted_memory,
                                 double predicted_traffic, std::size_t largest_layer,
                                 const std::vector<double>& step_seconds, const nlohmann::json& last) {
  const double psi = static_cast<double>(shape.parameters());
  const auto n = static_cast<std::size_t>(ranks);
  return nlohmann::json{
      {"summary",
       {{"parameters", shape.parameters()},
        {"ranks", ranks},
        {"stage", stage},
        {"offload", cfg.offload},
        {"state_bytes", {{"parameter", sb.parameter}, {"gradient", sb.gradient}, {"optimizer", sb.optimizer}}},
        {"model",
         {{"parameters", predicted_memory.parameters.value()},
          {"gradients", predicted_memory.gradients.value()},
          {"optimizer_states", predicted_memory.optimizer_states.value()},
          {"offloaded", predicted_memory.offloaded.value()},
          {"sent_bytes_per_step", cfg.compress.empty() ? nlohmann::json(predicted_traffic) : nlohmann::json(nullptr)},
          {"offload_bytes_per_step",
           model::offload_traffic_per_step(psi, n, stage, model::fp32_adam, cfg.offload).value()}}},
        // The peak above the formula, activations aside, one layer at a time: stage 1 reduce-scatters into a
        // shard-sized buffer, stage 2 stages a layer's full gradient, stage 3 also gathers a layer's parameters
        // (a recomputed pair's two at once, three where the experts after the first pair run again before the
        // third layer's backward; a recomputed group's layers at once).
        {"fixed_overhead_bytes",
         stage == 1 ? static_cast<double>(comm::partition(largest_layer, ranks).largest()) * 4.0
                    : (stage >= 2 ? 1 : 0) * largest_layer * 4.0 +
                          (stage >= 3 ? gathered_at_once(cfg, shape.layers()) : 0) * largest_layer * 4.0},
        {"samples_per_rank", static_cast<double>(cfg.batch) / static_cast<double>(ranks)},
        {"step_seconds", step_seconds},
        {"last_step", last}}}};
}

}  // namespace detail

template <class Scheme, class Comm>
int run(Comm& c, const config& cfg, std::ostream& out, any_reduction<Comm> reduction,
        const group_reductions<Comm>& expert_reductions) {
  using namespace trinity::shard;
  const mlp_shape shape = cfg.shape();
  const teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
  const adam opt{.learning_rate = cfg.learning_rate};
  memory_ledger ledger;
  data_parallel<Scheme, Comm, any_reduction<Comm>> dp(
      c, ledger, shape.layer_sizes(), initial_parameters(shape, cfg.seed + 1), opt, std::move(reduction));

  // Sequences over the ranks; a sequence's tokens, sequence-major, are the rows the MLP takes.
  const comm::partition samples(cfg.batch, c.size());
  comm::group self(c, {c.rank()});  // the attention block's context group: this rank alone
  const double psi = static_cast<double>(shape.parameters());
  const int stage = Scheme::shards.zero_stage();
  const auto n = static_cast<std::size_t>(c.size());
  const model::state_bytes sb = cfg.offload ? model::state_bytes{4, 4, 12} : model::fp32_adam;
  const auto predicted_memory = model::zero_memory_per_rank(psi, n, stage, sb, cfg.offload);
  // DDP's gradient all-reduce is the communicator's own where it has one. MPI's shared-memory window stages
  // each rank's gradient once (its own chunk after the reduction, the rest before): 4Ψ per rank and step,
  // where the ring sends 2(n − 1)/n · 4Ψ. The other stages reduce-scatter and gather by ring on every backend.
  bool window = false;
  if constexpr (requires { c.shared_memory(); }) window = c.shared_memory() && stage == 0 && n > 1;
  const double predicted_traffic =
      window ? psi * 4.0 : model::zero_traffic_per_step(psi, n, stage, model::fp32_adam).value();
  std::size_t largest_layer = 0;
  for (auto s : shape.layer_sizes()) largest_layer = std::max(largest_layer, s);

  // The mixture-of-experts block (--experts): its router over the world, its experts over the expert groups
  // (the world one pipeline stage of data-parallel ranks).
  std::optional<moe_block<Scheme, Comm>> moe;
  if (cfg.experts())
    emplace_experts(moe, c, data_parallel_expert_groups(c.size(), c.rank(), cfg.moe), 0, n, ledger, cfg.moe,
                    shape.out(1), cfg.seed + 1, opt, expert_reductions);
  std::vector<std::size_t> all_layers(shape.layers());
  std::iota(all_layers.begin(), all_layers.end(), std::size_t{0});
  const long step0 = cfg.load_checkpoint.empty() ? 0 : resume_from(c, cfg.load_checkpoint, [&] {
    return load_checkpoint(cfg.load_checkpoint, dp, c.rank(), all_layers, shape, 1, 0, cfg.experts(), moe);
  });

  nlohmann::json last;
  std::vector<double> step_seconds;  // rank 0's list of the slowest rank's time per step
  for (long t = step0; t < step0 + cfg.steps; ++t) {
    const auto started = std::chrono::steady_clock::now();
    ledger.reset_peaks();
    const std::uint64_t sent_before = c.bytes_sent(), experts_before = moe ? moe->sent() : 0,
                        expert_data_before = moe ? moe->data_sent() : 0;
    mlp_pass pass(shape, samples.size(c.rank()) * cfg.sequence, ledger, cfg.recomputed_layers(shape.layers()),
                  cfg.group_layers());
    double loss = moe ? forward_backward(dp, c, self, cfg, shape, task, pass, samples, t, &*moe)
                      : forward_backward(dp, c, self, cfg, shape, task, pass, samples, t);
    // What the formula counts is resident now: states, no gathered layer, no staging buffer.
    const std::uint64_t res_p = ledger.resident(state_kind::parameters), res_g = ledger.resident(state_kind::gradients),
                        res_o = ledger.resident(state_kind::optimizer_states),
                        res_off = ledger.resident(state_kind::optimizer_states, placement::offload);
    const step_report report = step_all(dp, moe, c, opt);
    const std::uint64_t experts_sent = moe ? moe->sent() - experts_before : 0;
    const auto elapsed_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
    const std::uint64_t sent = c.bytes_sent() - sent_before;
    // Statistics travel after the step's own traffic has been counted.
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    const auto sent_all = per_rank(c, sent), p_all = per_rank(c, res_p), g_all = per_rank(c, res_g),
               o_all = per_rank(c, res_o), off_all = per_rank(c, res_off),
               act_all = per_rank(c, ledger.peak(state_kind::activations)),
               peak_all = per_rank(c, ledger.peak(placement::device)), moved_all = per_rank(c, report.offload_bytes);
    nlohmann::json line;
    if (c.rank() == 0)
      line = {{"ranks", c.size()},
              {"stage", stage},
              {"offload", cfg.offload},
              {"compress", cfg.compress.empty() ? nlohmann::json(nullptr) : nlohmann::json(cfg.compress)},
              {"resident_bytes",
               {{"parameters", p_all}, {"gradients", g_all}, {"optimizer_states", o_all}, {"offloaded", off_all}}},
              {"peak_bytes", {{"device", peak_all}, {"activations", act_all}}},
              {"sent_bytes", sent_all},
              {"offload_bytes", moved_all}};
    const auto experts =
        moe ? detail::expert_step(c, &*moe, experts_sent, moe->data_sent() - expert_data_before) : nlohmann::json();
    if (moe && c.rank() == 0) line.update(experts);
    detail::emit_step(c, std::move(line), t + 1, loss / static_cast<double>(cfg.tokens()), report, elapsed_ns,
                      step_seconds, last, out);
  }
  if (!cfg.save_checkpoint.empty())
    save_checkpoint(cfg.save_checkpoint, {}, dp, c, moe, c, step0 + cfg.steps, layout_word(cfg, c.size()));
  const auto expert_totals =
      moe ? detail::expert_summary(c, cfg, &*moe, samples.size(c.rank()) * cfg.sequence, 1) : nlohmann::json();
  // The activations each rank's pass holds at most: its layers' inputs and output, a recomputed pair rebuilt.
  const auto activation_peak =
      per_rank(c, sizeof(float) * mlp_pass::peak_floats(shape, samples.size(c.rank()) * cfg.sequence,
                                                        cfg.recomputed_layers(shape.layers()), cfg.group_layers()));
  if (c.rank() == 0) {
    auto summary = detail::summary_of(cfg, shape, c.size(), stage, sb, predicted_memory, predicted_traffic,
                                      largest_layer, step_seconds, last);
    summary["summary"]["model"]["activation_peak_bytes"] = activation_peak;
    summary["summary"]["model"]["recompute_layers"] = cfg.recompute_layers;
    summary["summary"]["model"]["recompute_method"] = model::to_string(cfg.recompute_method);
    summary["summary"]["model"]["recompute_attention"] = cfg.recompute_attention;
    summary["summary"]["model"]["recompute_experts"] = cfg.recompute_experts;
    summary["summary"]["model"]["recompute_shared_experts"] = cfg.recompute_shared;
    summary["summary"]["widths"] = shape.widths;
    if (moe) summary["summary"]["experts"] = expert_totals;
    out << summary.dump() << '\n' << std::flush;
  }
  return 0;
}

}  // namespace trinity::train
