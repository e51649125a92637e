#pragma once
//! \file
//! Pipeline parallelism over any Communicator that holds one pipeline group:
//! rank r of p holds model chunks r, r + p, … (v of them, virtual stages), runs
//! its passes in the schedule's order (model/pipeline_schedule.hpp: 1F1B by
//! default, Megatron-LM's interleaved one when v > 1), and sends each
//! chunk's output activation to the next virtual stage's rank and each input
//! gradient to the previous one, point to point.
//!
//! The stage is the caller's:
//!   struct my_stage {
//!     std::size_t input_size(std::size_t stage) const;    // floats virtual stage `stage` takes in (its input gradient
//!     too) std::vector<float> forward(std::size_t chunk, std::size_t mb, std::span<const float> in);  // in: empty on
//!     virtual stage 0 std::vector<float> backward(std::size_t chunk, std::size_t mb, std::span<const float> grad);  //
//!     grad: empty on the last
//!   };
//!   auto stats = parallel::run_pipeline(pp, m, v, stage);   // stats.peak_stashed, stats.bytes_sent
//!   parallel::run_pipeline(pp, "1f1b", m, v, stage);        // a schedule by name
//!
//! forward keeps what its backward needs; the last virtual stage's backward
//! starts from the loss it computes itself. Transfers run in one order every
//! rank derives alike (global_order), so blocking sends cannot deadlock; a
//! rank computes while the others do until a transfer joins them. It is a
//! reference for what a pipeline computes, sends and keeps, not a fast one:
//! a GPU pipeline overlaps its sends with compute.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/parallel/pipeline_schedule.hpp>

namespace trinity::parallel {

template <class S>
concept pipeline_stage = requires(S& s, const S& cs, std::size_t chunk, std::span<const float> in) {
  { cs.input_size(chunk) } -> std::convertible_to<std::size_t>;  // by virtual stage
  { s.forward(chunk, chunk, in) } -> std::same_as<std::vector<float>>;
  { s.backward(chunk, chunk, in) } -> std::same_as<std::vector<float>>;
};

//! A stage that keeps its weights in a shard::data_parallel says so, `using weights = MyDataParallel;` (or names
//! the scheme, `using shard_scheme = ...;`): a pipeline of more than one stage refuses ZeRO-3 weights, which
//! would be gathered again for every micro-batch, as parallel::scheme refuses them at compile time. (The stage
//! count is the communicator's, known only at run time, so this refusal is a run-time one.)
template <class Stage>
struct stage_shard_scheme {};
template <class Stage>
requires requires { typename Stage::shard_scheme; }
struct stage_shard_scheme<Stage> {
  using type = typename Stage::shard_scheme;
};
template <class Stage>
requires(
    !requires { typename Stage::shard_scheme; } &&
    requires { typename Stage::weights::shard_scheme; }) struct stage_shard_scheme<Stage> {
  using type = typename Stage::weights::shard_scheme;
};
template <class Stage>
concept names_its_shard_scheme = requires {
  typename stage_shard_scheme<Stage>::type;
};

struct pipeline_stats {
  std::size_t peak_stashed = 0;  //!< most chunks' activations kept at once (forwards run, backwards not yet)
  std::uint64_t bytes_sent = 0;  //!< activations and gradients this rank sent
};

//! Runs this rank's passes of `micro_batches` micro-batches through its `virtual_stages` chunks under `schedule`
//! (model/pipeline_schedule.hpp; empty: 1F1B, interleaved with v > 1), sending each activation to the next virtual
//! stage and each gradient to the one before.
template <Communicator C, class Stage>
pipeline_stats run_pipeline(C& pp, std::string_view schedule, std::size_t micro_batches, std::size_t virtual_stages,
                            Stage& stage) {
  static_assert(
      pipeline_stage<Stage>,
      "trinity::parallel::run_pipeline: the stage must give input_size(virtual_stage), forward(chunk, mb, in) and "
      "backward(chunk, mb, grad), each pass returning a std::vector<float> (parallel/pipeline.hpp)");
  const std::size_t p = static_cast<std::size_t>(pp.size()), me = static_cast<std::size_t>(pp.rank());
  if constexpr (names_its_shard_scheme<Stage>)
    trinity::detail::require(
        p == 1 || !stage_shard_scheme<Stage>::type::shards.parameters, "shard_scheme",
        "a pipeline of " + std::to_string(p) +
            " stages with ZeRO-3 weights gathers every "
            "stage's weights again for every micro-batch. Fix: use shard::zero<1> or shard::zero<2> "
            "under a pipeline, or zero<3> without one");
  const std::size_t v = virtual_stages, stages = p * v;
  const auto order = global_order(schedule, p, micro_batches, v);
  // Inputs waiting for their pass: (forward?, chunk, micro-batch) -> activation or gradient.
  std::map<std::tuple<bool, std::size_t, std::size_t>, std::vector<float>> inbox;
  pipeline_stats stats;
  std::size_t stashed = 0;
  const std::uint64_t sent_before = pp.bytes_sent();
  for (const auto& [rank, x] : order) {
    const std::size_t stage_of = x.chunk * p + rank;
    // A forward's output goes to the next virtual stage; a backward's input gradient to the previous one.
    const bool sends = x.forward ? stage_of + 1 < stages : stage_of > 0;
    const std::size_t to_stage = x.forward ? stage_of + 1 : stage_of - 1;
    const std::size_t to = to_stage % p, to_chunk = to_stage / p;
    // The activation entering the later of the two stages, either way.
    const std::size_t size = sends ? stage.input_size(x.forward ? to_stage : stage_of) : 0;
    if (rank == me) {
      std::vector<float> out;
      auto in = inbox.find({x.forward, x.chunk, x.micro_batch});
      const std::span<const float> arg =
          in == inbox.end() ? std::span<const float>{} : std::span<const float>(in->second);
      if (x.forward) {
        out = stage.forward(x.chunk, x.micro_batch, arg);
        stats.peak_stashed = std::max(stats.peak_stashed, ++stashed);
      } else {
        out = stage.backward(x.chunk, x.micro_batch, arg);
        --stashed;
      }
      if (in != inbox.end()) inbox.erase(in);
      if (!sends) continue;
      trinity::detail::require(out.size() == size, "stage",
                               "a pass returned " + std::to_string(out.size()) +
                                   " values where the activation between "
                                   "virtual stages holds " +
                                   std::to_string(size) + " (input_size)");
      if (to == me)
        inbox[{x.forward, to_chunk, x.micro_batch}] = std::move(out);
      else
        pp.send(std::as_bytes(std::span<const float>(out)), static_cast<int>(to));
    } else if (sends && to == me) {
      std::vector<float> in(size);
      pp.recv(std::as_writable_bytes(std::span<float>(in)), static_cast<int>(rank));
      inbox[{x.forward, to_chunk, x.micro_batch}] = std::move(in);
    }
  }
  stats.bytes_sent = pp.bytes_sent() - sent_before;
  return stats;
}
//! Under 1F1B (interleaved with v > 1).
template <Communicator C, class Stage>
pipeline_stats run_pipeline(C& pp, std::size_t micro_batches, std::size_t virtual_stages, Stage& stage) {
  return run_pipeline(pp, std::string_view{}, micro_batches, virtual_stages, stage);
}

}  // namespace trinity::parallel
