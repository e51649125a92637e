#pragma once
//! \file
//! Pipeline schedules as data: the order in which one rank of p runs the
//! forward and backward passes of m micro-batches through its model chunks.
//!  - one_f_one_b (PipeDream-Flush, Narayanan et al. 2021): p − r − 1 forwards
//!    to fill the pipe, then one forward and one backward in turn, then the
//!    backwards left. Rank 0 keeps min(p, m) micro-batches' activations.
//!  - interleaved (Megatron-LM's, Narayanan et al. 2021 §2.2): the rank holds v
//!    chunks, virtual stages r, r + p, …; micro-batches go through in groups of
//!    p, chunk by chunk; warm-up 2(p − r − 1) + (v − 1)p forwards. Rank 0 keeps
//!    p·v + p − 1 chunks' activations, p(1 + (p − 1)/(pv)) stages' worth
//!    (Korthikanti et al. 2022 §4.2.3). Needs m to be a multiple of p.
//! global_order merges every rank's schedule into one sequence consistent with
//! the passes' dependencies (a chunk's forward after the previous virtual
//! stage's, its backward after the next's): the order parallel/pipeline.hpp
//! runs transfers in, so that blocking sends cannot deadlock.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::parallel {

struct pipeline_pass {
  bool forward = true;
  std::size_t chunk = 0;  //!< the rank's model chunk, 0 .. v − 1
  std::size_t micro_batch = 0;
  friend bool operator==(const pipeline_pass&, const pipeline_pass&) = default;
};

inline std::vector<pipeline_pass> one_f_one_b(std::size_t p, std::size_t rank, std::size_t m) {
  trinity::detail::require(p >= 1 && rank < p, "rank", "must be in [0, pipeline stages)");
  trinity::detail::require(m >= 1, "micro_batches", "must be at least 1");
  const std::size_t warmup = std::min(p - rank - 1, m);
  std::vector<pipeline_pass> s;
  for (std::size_t i = 0; i < warmup; ++i) s.push_back({true, 0, i});
  for (std::size_t i = 0; i + warmup < m; ++i) {
    s.push_back({true, 0, warmup + i});
    s.push_back({false, 0, i});
  }
  for (std::size_t i = m - warmup; i < m; ++i) s.push_back({false, 0, i});
  return s;
}

inline std::vector<pipeline_pass> interleaved(std::size_t p, std::size_t rank, std::size_t m, std::size_t v) {
  trinity::detail::require(p >= 1 && rank < p, "rank", "must be in [0, pipeline stages)");
  trinity::detail::require(v >= 1, "virtual_stages", "must be at least 1");
  if (v == 1) return one_f_one_b(p, rank, m);
  trinity::detail::require(
      m >= 1 && m % p == 0, "micro_batches",
      std::to_string(m) + " is not a multiple of the " + std::to_string(p) +
          " stages; the interleaved schedule sends micro-batches in groups of p. Fix: a multiple of p");
  const std::size_t total = m * v, group = p * v;
  // As Megatron-LM: with as many micro-batches as stages every forward is warm-up.
  const std::size_t warmup = m == p ? total : std::min(2 * (p - rank - 1) + (v - 1) * p, total);
  const auto at = [&](std::size_t k, bool forward) {
    const std::size_t in_group = k % group, chunk = in_group / p;
    return pipeline_pass{forward, forward ? chunk : v - 1 - chunk, (k / group) * p + k % p};
  };
  std::vector<pipeline_pass> s;
  for (std::size_t k = 0; k < warmup; ++k) s.push_back(at(k, true));
  for (std::size_t k = 0; k + warmup < total; ++k) {
    s.push_back(at(warmup + k, true));
    s.push_back(at(k, false));
  }
  for (std::size_t k = total - warmup; k < total; ++k) s.push_back(at(k, false));
  return s;
}

//! One rank's pass in the merged order.
struct scheduled_pass {
  std::size_t rank = 0;
  pipeline_pass pass;
};

//! Every rank's schedule (interleaved(p, r, m, v)) merged in rounds: in each round every rank whose next pass
//! has its input (made in an earlier round) runs it. Throws if the schedules cannot all finish.
inline std::vector<scheduled_pass> global_order(std::size_t p, std::size_t m, std::size_t v) {
  const std::size_t stages = p * v;
  std::vector<std::vector<pipeline_pass>> s(p);
  for (std::size_t r = 0; r < p; ++r) s[r] = interleaved(p, r, m, v);
  // done[f][virtual stage][micro-batch]: the round it finished in, plus one (0: not yet).
  std::vector<std::size_t> done(2 * stages * m, 0);
  const auto cell = [&](bool f, std::size_t stage, std::size_t mb) -> std::size_t& {
    return done[((f ? 0 : 1) * stages + stage) * m + mb];
  };
  std::vector<std::size_t> next(p, 0);
  std::vector<scheduled_pass> order;
  for (std::size_t round = 1; order.size() < 2 * stages * m; ++round) {
    bool moved = false;
    for (std::size_t r = 0; r < p; ++r) {
      if (next[r] == s[r].size()) continue;
      const auto& x = s[r][next[r]];
      const std::size_t stage = x.chunk * p + r;
      const bool ready =
          x.forward
              ? stage == 0 || (cell(true, stage - 1, x.micro_batch) && cell(true, stage - 1, x.micro_batch) < round)
              : cell(true, stage, x.micro_batch) &&
                    (stage + 1 == stages ||
                     (cell(false, stage + 1, x.micro_batch) && cell(false, stage + 1, x.micro_batch) < round));
      if (!ready) continue;
      cell(x.forward, stage, x.micro_batch) = round;
      order.push_back({r, x});
      ++next[r];
      moved = true;
    }
    trinity::detail::require(moved, "schedule", "the ranks' schedules wait on each other; no order runs them all");
  }
  return order;
}

}  // namespace trinity::parallel
