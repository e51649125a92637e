#pragma once
//! \file
//! Pipeline schedules merged over the ranks. Each schedule (model/pipeline_schedule.hpp: 1F1B, interleaved with v
//! chunks a rank, and the others pipeline_schedules lists) gives the order in which one rank runs its passes;
//! global_order merges every rank's into one sequence consistent with the passes' dependencies (a chunk's forward
//! after the previous virtual stage's, its backward after the next's): the order parallel/pipeline.hpp runs
//! transfers in, so that blocking sends cannot deadlock.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/pipeline_schedule.hpp>

namespace trinity::parallel {

// The pass orders are the schedules' (model/pipeline_schedule.hpp), which the step model prices too.
using model::interleaved;
using model::one_f_one_b;
using model::pipeline_pass;

//! One rank's pass in the merged order.
struct scheduled_pass {
  std::size_t rank = 0;
  pipeline_pass pass;
};

//! Every rank's passes under `schedule` (model::schedule_passes; empty: 1F1B) merged in rounds: in each round every
//! rank whose next pass has its input (made in an earlier round) runs it. Throws if the schedules cannot all finish.
inline std::vector<scheduled_pass> global_order(std::string_view schedule, std::size_t p, std::size_t m,
                                                std::size_t v) {
  const std::size_t stages = p * v;
  std::vector<std::vector<pipeline_pass>> s(p);
  for (std::size_t r = 0; r < p; ++r) s[r] = model::schedule_passes(schedule, p, r, m, v);
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
//! 1F1B's (interleaved with v > 1).
inline std::vector<scheduled_pass> global_order(std::size_t p, std::size_t m, std::size_t v) {
  return global_order({}, p, m, v);
}

}  // namespace trinity::parallel
