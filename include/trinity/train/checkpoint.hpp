#pragma once
//! \file
//! The reference trainer's checkpoints, saved whole or not at all and resumed at any layout: save_checkpoint writes
//! every rank's piece into a staging directory and swaps it into place (shard/checkpoint_directory.hpp), and
//! resume_from checks the pieces against the manifest and has every rank load its own (checkpoint_layout.hpp for
//! the dense layers, expert_checkpoint.hpp for a mixture's experts). A piece may fail on one rank alone: every rank
//! then stops with that rank's reason (comm::agreed), and none waits in a collective for one that left.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <trinity/comm/agreed.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/error.hpp>
#include <trinity/shard/checkpoint.hpp>
#include <trinity/shard/checkpoint_directory.hpp>
#include <trinity/shard/checkpoint_manifest.hpp>
#include <trinity/train/checkpoint_layout.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/expert_checkpoint.hpp>
#include <trinity/train/step_vote.hpp>

namespace trinity::train {

//! How the run split the model, one word for the checkpoint's manifest: the ranks and every parallel size.
inline std::string layout_word(const config& cfg, int ranks) {
  return "ranks=" + std::to_string(ranks) + ",tp=" + std::to_string(cfg.tensor) +
         ",pp=" + std::to_string(cfg.pipeline) + ",vpp=" + std::to_string(cfg.virtual_stages) +
         ",cp=" + std::to_string(cfg.context) + ",experts=" + std::to_string(cfg.moe.experts) +
         ",ep=" + std::to_string(cfg.moe.ep) + ",etp=" + std::to_string(cfg.moe.etp);
}

//! Saves the checkpoint in `dir` whole or not at all: rank 0 readies a staging directory beside it; every rank
//! writes its piece of the MLP's states into `piece` under it (the staging directory itself for a model in one
//! piece, checkpoint_layout.hpp's stage directory for a split one) over its data-parallel group `group`, and the
//! block's experts where it has them; then rank 0 lists every piece in the manifest, with the states' steps and the
//! loop's position (`iteration`, which counts skipped steps where the states' step count, Adam's for its bias
//! correction, does not), and swaps it into place. The previous checkpoint in `dir` stays until then.
template <class DP, class Group, class Moe, class Comm>
void save_checkpoint(const std::filesystem::path& dir, const std::filesystem::path& piece, const DP& dp,
                     const Group& group, const std::optional<Moe>& moe, Comm& c, long iteration,
                     const std::string& layout) {
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

//! Restores this rank's MLP states from checkpoint `dir`, saved at any pipeline layout and tensor-parallel size
//! (load_stages: `layers` the model's index of each of dp's layers, rank `dp_rank` of its group), and, where this
//! rank has them, the block's experts: the steps taken. A checkpoint whose experts this run lacks (`experts` false)
//! is refused, not half loaded.
template <class DP, class Moe>
long load_checkpoint(const std::filesystem::path& dir, DP& dp, int dp_rank, const std::vector<std::size_t>& layers,
                     const mlp_shape& shape, std::size_t tensor, std::size_t tr, bool experts,
                     std::optional<Moe>& moe) {
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

//! Resumes every rank from checkpoint `dir` through `load` (load_checkpoint, with this rank's pieces): the iteration
//! the loop goes on from, the manifest's. Rank 0 first checks every piece against the manifest (verify_checkpoint:
//! none missing, none extra, each of its size and checksum); the others read the manifest alone. Every piece's
//! steps must be the manifest's.
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

}  // namespace trinity::train
