#pragma once
//! \file
//! The reference trainer's optimizer step, decided once over the world: each shard::data_parallel votes on
//! non-finite gradients over its own ranks only (a pipeline stage's data-parallel group, an expert-data-parallel
//! group), so a NaN or Inf on any rank in any part skips every part on every rank, and the report names the world's
//! ranks that saw one.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <trinity/comm/ring.hpp>
#include <trinity/shard/adam.hpp>
#include <trinity/shard/data_parallel.hpp>
#include <trinity/train/moe_parameters.hpp>

namespace trinity::train {

//! Every rank's values of one statistic, on every rank (a ring all-gather of one word each): a collective.
template <class Comm>
std::vector<std::uint64_t> per_rank(Comm& c, std::uint64_t mine) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(c.size()));
  comm::ring::all_gather<Comm, std::uint64_t>(c, std::span<const std::uint64_t>(&mine, 1),
                                              std::span<std::uint64_t>(all));
  return all;
}

//! The optimizer step of a rank's dense states and, where it holds them, the experts' block's (`moe` null
//! elsewhere), voted over the world `c`. Every layer of both must be marked ready first. `dense_moved`: the dense
//! states' offload bytes, what ZeRO's offload formula counts.
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

//! The data-parallel loop's step: its dense states span the world and vote over it themselves; with experts the
//! world votes over both (step_voted).
template <class DP, class Moe, class Comm>
shard::step_report step_all(DP& dp, std::optional<Moe>& moe, Comm& c, const shard::adam& opt) {
  return moe ? step_voted(c, dp, &*moe, opt) : dp.step(opt);
}

}  // namespace trinity::train
