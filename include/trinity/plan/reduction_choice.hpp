#pragma once
//! \file
//! Compress or send? For a training workload's data-parallel gradient reduction: each codec's reduction priced
//! over the link the ranks span (plan::collective_link_for) by model::gradient_reduction, the one both planners
//! price it with, and the fastest within the workload's error budget. Every codec adds the same compute to a
//! step, so this is the codec the data-parallel planner chooses at that ZeRO stage, and the one the layout
//! search chooses for a pure data-parallel layout without overlap: `trinity choose --system --workload` asks
//! it, and a test holds the three to one answer.
//!
//!   const auto c = plan::choose_reduction_codec(s, w, 0, plan::default_codecs_for(s));
//!   c.codecs[c.chosen].name;   // "identity" when sending the gradient as it is wins

#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>

namespace trinity::plan {

//! One codec's reduction, or why it may not be chosen.
struct reduction_verdict {
  model::gradient_reduction_cost cost;
  std::string rejected;  //!< empty: admissible
  [[nodiscard]] seconds time() const noexcept { return cost.comm + cost.coding; }
};

struct reduction_choice {
  std::vector<model::compressor_cost> codecs;
  std::vector<reduction_verdict> verdicts;  //!< one per codec, in its order
  std::size_t chosen = 0;                   //!< into codecs: the fastest admissible, the uncoded gradient on a tie
  std::size_t ranks = 0;
  std::string link;  //!< the link the reduction crosses
  [[nodiscard]] bool compressed() const { return !model::is_uncoded(codecs[chosen]); }
};

//! The codec the gradient reduction of `w` at ZeRO stage `stage` is fastest with, over `ranks` ranks (0: the
//! workload's); `codecs` must hold the uncoded gradient ("identity").
inline reduction_choice choose_reduction_codec(const system& s, const training_workload& w, int stage,
                                               std::vector<model::compressor_cost> codecs, std::size_t ranks = 0) {
  trinity::detail::require(stage >= 0 && stage <= 3, "zero_stage", "is 0 to 3");
  reduction_choice r{std::move(codecs), {}, 0, ranks ? ranks : w.ranks(s), {}};
  const auto& over = collective_link_for(s, r.ranks);
  r.link = over.name;
  const model::collective_link link{over.latency, over.collective_rate(), {}};
  bool found = false;
  for (std::size_t i = 0; i < r.codecs.size(); ++i) {
    const auto& c = r.codecs[i];
    reduction_verdict v{model::gradient_reduction(r.ranks, w.parameters, w.precision.gradient, stage, c, link), {}};
    if (c.relative_error > w.error_budget)
      v.rejected = "adds relative error " + std::to_string(c.relative_error) + ", more than the error budget";
    const bool better = !found || v.time() < r.verdicts[r.chosen].time() ||
                        (v.time() == r.verdicts[r.chosen].time() && model::is_uncoded(c));
    if (v.rejected.empty() && better) r.chosen = i, found = true;
    r.verdicts.push_back(std::move(v));
  }
  trinity::detail::require(found, "codecs", "none within the error budget; give \"identity\", the gradient as it is");
  return r;
}

}  // namespace trinity::plan
