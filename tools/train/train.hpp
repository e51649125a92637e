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
#include <trinity/train/checkpoint_layout.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/moe_block.hpp>

#include <trinity/train/mlp.hpp>
#include <trinity/train/teacher_task.hpp>

namespace trinity::train {

namespace detail {

// Every rank's values of one statistic, on every rank (a ring all-gather of one word each).
template <class Comm>
std::vector<std::uint64_t> per_rank(Comm& c, std::uint64_t mine) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(c.size()));
  comm::ring::all_gather<Comm, std::uint64_t>(c, std::span<const std::uint64_t>(&mine, 1),
                                              std::span<std::uint64_t>(all));
  return all;
}

}  // namespace detail

namespace detail {

// The optimizer step of a rank's dense states and, where it holds them, the experts' block's (`moe` null
// elsewhere), decided once over the world: each data_parallel votes on non-finite gradients over its own ranks
// only (a pipeline stage's data-parallel group, an expert-data-parallel group), so a NaN or Inf on any rank in any
// part skips every part on every rank, and the report names the world's ranks that saw one. Every layer of both
// must be marked ready first. `dense_moved`: the dense states' offload bytes, what ZeRO's offload formula counts.
template <class Comm, class States, class Moe>
shard::step_report step_voted(Comm& c, States& dense, Moe* moe, const shard::adam& opt,
                              std::uint64_t* dense_moved = nullptr) {
  const auto seen = per_rank(c, dense.saw_nonfinite() || (moe && moe->saw_nonfinite()) ? 1 : 0);
  shard::step_report report;
  for (std::size_t r = 0; r < seen.size(); ++r)
    if (seen[r] != 0) report.nonfinite_ranks.push_back(static_cast<int>(r));
  const bool skip = !report.nonfinite_ranks.empty();
  const auto d = dense.step(opt, skip);
  if (dense_moved) *dense_moved = d.offload_bytes;
  add_step(report, d);
  if (moe) add_step(report, moe->step(opt, skip));
  return report;
}

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

// The data-parallel loop's step: its dense states span the world and vote over it themselves; with experts the
// world votes over both (step_voted).
template <class DP, class Moe, class Comm>
shard::step_report step_all(DP& dp, std::optional<Moe>& moe, Comm& c, const shard::adam& opt) {
  return moe ? step_voted(c, dp, &*moe, opt) : dp.step(opt);
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
  // Every rank runs the same dispatcher: the model's count is there for all, or for none (the node-deduplicated
  // one's rows the model counts for random routing, which the fixed balanced assignment does not draw).
  const auto* by_node = std::get_if<node_dispatch>(&cfg.moe.dispatch);
  const auto mine = moe ? moe->modelled(rows, again) : std::optional<double>(0.0);
  const auto modelled =
      per_rank(c, static_cast<std::uint64_t>(std::llround(static_cast<double>(passes) * mine.value_or(0.0))));
  const auto params = per_rank(c, moe ? moe->parameters_per_rank() : 0);
  const auto shared = per_rank(c, moe ? moe->shared_parameters_per_rank() : 0);
  nlohmann::json per = nlohmann::json::array();
  for (const auto m : modelled) per.push_back(cfg.moe.balanced && !by_node ? nlohmann::json(m) : nlohmann::json());
  nlohmann::json out = {{"experts", cfg.moe.experts},
                        {"top_k", cfg.moe.top_k},
                        {"ep", cfg.moe.ep},
                        {"etp", cfg.moe.etp},
                        {"balanced", cfg.moe.balanced},
                        {"parameters_per_rank", *std::max_element(params.begin(), params.end())},
                        {"shared_experts", cfg.moe.shared_experts},
                        {"shared_parameters_per_rank", *std::max_element(shared.begin(), shared.end())},
                        {"modelled_bytes_per_step", per}};
  if (by_node) out["dispatcher"] = {{"name", "deepep"}, {"node_ranks", by_node->node_ranks}};
  return out;
}

// How the run split the model, one word for the checkpoint's manifest: the ranks and every parallel size.
inline std::string layout_word(const config& cfg, int ranks) {
  return "ranks=" + std::to_string(ranks) + ",tp=" + std::to_string(cfg.tensor) +
         ",pp=" + std::to_string(cfg.pipeline) + ",vpp=" + std::to_string(cfg.virtual_stages) +
         ",cp=" + std::to_string(cfg.context) + ",experts=" + std::to_string(cfg.moe.experts) +
         ",ep=" + std::to_string(cfg.moe.ep) + ",etp=" + std::to_string(cfg.moe.etp);
}

// Saves the checkpoint in `dir` whole or not at all (shard/checkpoint_directory.hpp): rank 0 readies a staging
// directory beside it; every rank writes its piece of the MLP's states into `piece` under it (the staging
// directory itself for a model in one piece, checkpoint_layout.hpp's stage directory for a split one) over its
// data-parallel group `group`, and the block's experts where it has them; then rank 0 lists every piece in the
// manifest, with the states' steps and the loop's position (`iteration`, which counts skipped steps where the
// states' step count, Adam's for its bias correction, does not), and swaps it into place. A piece may fail on one
// rank alone (its directory, its disk): every rank then stops with that rank's reason (comm::agreed), and the
// previous checkpoint in `dir` stays as it was.
template <class DP, class Group, class Moe, class Comm>
void save_all(const std::filesystem::path& dir, const std::filesystem::path& piece, const DP& dp, const Group& group,
              const std::optional<Moe>& moe, Comm& c, long iteration, const std::string& layout) {
  const auto staging = shard::checkpoint_staging(dir);
  try {
    comm::agreed(c, [&] {
      if (c.rank() == 0) shard::begin_checkpoint(dir);
    });
    comm::agreed(c, [&] {
      shard::write_checkpoint_piece(staging / piece, dp, group);
      if (moe) moe->save(staging);
    });
    comm::agreed(c, [&] {
      if (c.rank() == 0)
        shard::commit_checkpoint(dir, {static_cast<std::uint32_t>(c.size()),
                                       static_cast<std::uint64_t>(dp.steps_taken()),
                                       static_cast<std::uint64_t>(iteration),
                                       layout,
                                       {}});
    });
  } catch (const invalid_input& e) {
    throw invalid_input("--save-checkpoint", e.what());
  } catch (const comm::peer_failed& e) {
    throw comm::peer_failed("writing the checkpoint in " + dir.string() + ", " + e.what());
  }
}

// Restores this rank's MLP states from checkpoint `dir`, saved at any pipeline layout and tensor-parallel size
// (load_stages: `layers` the model's index of each of dp's layers, rank `dp_rank` of its group), and,
// where this rank has them, the block's experts: the steps taken. A checkpoint whose experts this run lacks
// (`experts` false) is refused, not half loaded.
template <class DP, class Moe>
long load_all(const std::filesystem::path& dir, DP& dp, int dp_rank, const std::vector<std::size_t>& layers,
              const mlp_shape& shape, std::size_t tensor, std::size_t tr, bool experts, std::optional<Moe>& moe) {
  const long steps = load_stages(dir, dp, dp_rank, layers, shape, tensor, tr);
  if (!experts) {
    if (const auto saved = experts_saved_in(dir))
      throw invalid_input("--experts", dir.string() + " holds a mixture's experts (--ep " + std::to_string(saved->ep) +
                                           " --etp " + std::to_string(saved->etp) +
                                           "), which this run has no block for. Fix: --experts N as saved");
    return steps;
  }
  if (moe && moe->load(dir) != steps)
    throw invalid_input("checkpoint",
                        "the experts' and the dense layers' files of " + dir.string() + " come from different runs");
  return steps;
}

// Resumes every rank from checkpoint `dir` through `load` (load_all, with this rank's pieces): the iteration the
// loop goes on from, the manifest's. Rank 0 first checks every piece against the manifest (verify_checkpoint:
// none missing, none extra, each of its size and checksum); the others read the manifest alone. Ranks then read
// different pieces (a stage's, a stage's experts), so a refusal may reach only some of them; every rank stops
// with the first refusal's reason (comm::agreed), and none goes on to wait in a step's collectives for one that
// left. Every piece's steps must be the manifest's.
template <class Comm, class Load>
long resume_from(Comm& c, const std::filesystem::path& dir, Load&& load) {
  shard::checkpoint_manifest manifest;
  long steps = 0;
  try {
    manifest = comm::agreed(
        c, [&] { return c.rank() == 0 ? shard::verify_checkpoint(dir) : shard::read_checkpoint_manifest(dir); });
    steps = comm::agreed(c, std::forward<Load>(load));
  } catch (const comm::peer_failed& e) {
    throw comm::peer_failed("reading the checkpoint in " + dir.string() + ", " + e.what());
  }
  const auto all = per_rank(c, static_cast<std::uint64_t>(steps));
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r] != manifest.step)
      throw invalid_input("checkpoint", "the pieces of " + dir.string() + " had taken " + std::to_string(all[r]) +
                                            " steps where its manifest says " + std::to_string(manifest.step) +
                                            ": they come from different runs. Fix: load another checkpoint");
  return static_cast<long>(manifest.iteration);
}

// One step's forward and backward through the MLP (and the attention block after its first layer), each
// layer's gradient handed to dp as it is ready: the step's summed loss on this rank. The caller owns `pass`, whose
// activations stay charged to the ledger until the optimizer step is done, as the recorded peaks count them.
template <class DP, class Comm, class Experts = std::nullptr_t>
double forward_backward(DP& dp, Comm& c, comm::group<Comm>& self, const config& cfg, const mlp_shape& shape,
                        const teacher_task& task, mlp_pass& pass, const comm::partition& samples, long t,
                        Experts* moe = nullptr) {
  const std::size_t mine = samples.size(c.rank()), S = cfg.sequence, rows = mine * S;
  std::vector<float> targets(rows * cfg.outputs);
  for (std::size_t s = 0; s < rows;
       ++s)  // row s is token s % S of sequence s / S: task sample (first + s / S)·S + s % S
    task.sample(static_cast<std::uint64_t>(t), samples.begin(c.rank()) * S + s,
                pass.input().subspan(s * cfg.inputs, cfg.inputs),
                std::span<float>(targets).subspan(s * cfg.outputs, cfg.outputs));
  std::optional<attention_block> block;
  if (cfg.attention()) block.emplace(mine, S, shape.out(0), shape.out(0) / cfg.heads);
  std::optional<moe_kept> kept;
  std::vector<std::size_t> ids(rows);  // this rank's rows are the global batch's from its first sample's
  std::iota(ids.begin(), ids.end(), samples.begin(c.rank()) * S);
  for (std::size_t l = 0; l < shape.layers(); ++l) {
    dp.acquire(l);
    pass.forward(l, dp.parameters(l));
    dp.release(l);
    if (pass.rebuilt(l)) pass.forget(l);  // a recomputed pair's middle, rebuilt in the backward
    if (l == 0 && block) {
      block->forward(self, pass.output_of(0));
      if (cfg.recompute_attention) block->forget();  // its core runs again when the backward reaches it
      if (pass.rebuilt(1)) block.reset();            // it runs again with the first pair
    }
    if constexpr (!std::is_null_pointer_v<Experts>)
      if (l == 1 && moe) {
        kept = moe->forward(pass.output_of(1), ids);
        if (pass.rebuilt(1)) kept.reset();              // the experts end the first pair: they run again with it
        if (cfg.recompute_experts) moe->forget(*kept);  // their input alone, the block run again backward
        if (cfg.recompute_shared) moe->forget_shared(*kept);
      }
  }
  // Loss and δ at the output: ½‖ŷ − y‖², averaged over the global batch's tokens.
  double loss = 0;
  std::vector<float> delta(rows * cfg.outputs);
  const auto yhat = pass.output();
  for (std::size_t k = 0; k < delta.size(); ++k) {
    const float d = yhat[k] - targets[k];
    loss += 0.5 * static_cast<double>(d) * d;
    delta[k] = d / static_cast<float>(cfg.tokens());
  }
  // A recomputed group again from its kept input, each layer's weights acquired once for it and their backwards
  // (ZeRO-3 gathers each once, as FSDP does under activation checkpointing), the attention block after layer 0 (a
  // new one, its state the first forward's) and the experts after layer 1 with it.
  std::vector<bool> rebuilt_groups(shape.layers(), false);  // by their first layer
  const auto rebuild_group = [&](std::size_t first) {
    for (std::size_t k = first; k < shape.layers() && pass.recomputed(k) && pass.group_first(k) == first; ++k)
      dp.acquire(k);
    pass.rebuild(
        first, [&](std::size_t k) { return dp.parameters(k); },
        [&](std::size_t k, std::span<float> out) {
          if (k == 0 && cfg.attention()) {
            block.emplace(mine, S, shape.out(0), shape.out(0) / cfg.heads);
            block->forward(self, out);
          }
          if constexpr (!std::is_null_pointer_v<Experts>)
            if (k == 1 && moe) kept = moe->forward(out, ids, /*again=*/true);
        });
    rebuilt_groups[first] = true;
  };
  for (std::size_t l = shape.layers(); l-- > 0;) {
    // The experts follow layer 1 and layer 2's backward carries δ through them: where layer 1's group ends there
    // (layer 2's input is kept), that group runs again, the experts after it, before layer 2's backward.
    if constexpr (!std::is_null_pointer_v<Experts>)
      if (moe && l == 2 && pass.rebuilt(1) && !pass.rebuilt(2)) rebuild_group(0);
    // A recomputed group runs again when the backward reaches its last layer.
    if (pass.recomputed(l) && !rebuilt_groups[pass.group_first(l)])
      rebuild_group(pass.group_first(l));
    else if (!pass.recomputed(l))
      dp.acquire(l);
    auto g = dp.gradient(l);
    if (l == 1 && block)
      pass.backward(l, dp.parameters(l), g, delta, [&](std::vector<float>& d) {
        if (cfg.recompute_attention) block->rebuild(self);
        block->backward(self, d);
        return block->input();
      });
    else if (l == 2 && kept) {
      if constexpr (!std::is_null_pointer_v<Experts>)
        pass.backward(l, dp.parameters(l), g, delta, [&](std::vector<float>& d) {
          if (cfg.recompute_experts) kept = moe->rebuild(*kept, ids);
          if (cfg.recompute_shared) moe->rebuild_shared(*kept);
          return moe->backward(*kept, d, /*ready=*/true);
        });
    } else
      pass.backward(l, dp.parameters(l), g, delta);
    if (t == cfg.inject_nan_step && c.rank() == cfg.inject_nan_rank && l == 0)
      g[0] = std::numeric_limits<float>::quiet_NaN();
    dp.gradient_ready(l);
    dp.release(l);
    pass.rebuilt_done(l);
  }
  return loss;
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
  const long step0 = cfg.load_checkpoint.empty() ? 0 : detail::resume_from(c, cfg.load_checkpoint, [&] {
    return detail::load_all(cfg.load_checkpoint, dp, c.rank(), all_layers, shape, 1, 0, cfg.experts(), moe);
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
    double loss = moe ? detail::forward_backward(dp, c, self, cfg, shape, task, pass, samples, t, &*moe)
                      : detail::forward_backward(dp, c, self, cfg, shape, task, pass, samples, t);
    // What the formula counts is resident now: states, no gathered layer, no staging buffer.
    const std::uint64_t res_p = ledger.resident(state_kind::parameters), res_g = ledger.resident(state_kind::gradients),
                        res_o = ledger.resident(state_kind::optimizer_states),
                        res_off = ledger.resident(state_kind::optimizer_states, placement::offload);
    const step_report report = detail::step_all(dp, moe, c, opt);
    const std::uint64_t experts_sent = moe ? moe->sent() - experts_before : 0;
    const auto elapsed_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
    const std::uint64_t sent = c.bytes_sent() - sent_before;
    // Statistics travel after the step's own traffic has been counted.
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    const auto sent_all = detail::per_rank(c, sent), p_all = detail::per_rank(c, res_p),
               g_all = detail::per_rank(c, res_g), o_all = detail::per_rank(c, res_o),
               off_all = detail::per_rank(c, res_off),
               act_all = detail::per_rank(c, ledger.peak(state_kind::activations)),
               peak_all = detail::per_rank(c, ledger.peak(placement::device)),
               moved_all = detail::per_rank(c, report.offload_bytes);
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
    detail::save_all(cfg.save_checkpoint, {}, dp, c, moe, c, step0 + cfg.steps, detail::layout_word(cfg, c.size()));
  const auto expert_totals =
      moe ? detail::expert_summary(c, cfg, &*moe, samples.size(c.rank()) * cfg.sequence, 1) : nlohmann::json();
  // The activations each rank's pass holds at most: its layers' inputs and output, a recomputed pair rebuilt.
  const auto activation_peak = detail::per_rank(
      c, sizeof(float) * mlp_pass::peak_floats(shape, samples.size(c.rank()) * cfg.sequence,
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
