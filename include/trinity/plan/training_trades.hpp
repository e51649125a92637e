#pragma once
//! \file
//! The slots of a data-parallel training plan as TradeoffPolicy models: moving one slot from one choice to
//! another is a trade, priced as the step's resource vector before and after (plan::price), and named for what it
//! spends and what it saves:
//!   zero_stage_trade  bandwidth -> memory  (a higher ZeRO stage: gathers sent instead of states held)
//!   offload_trade     time -> memory       (optimizer states in a slower tier, moved every step)
//!   recompute_trade   compute -> memory    (activations recomputed instead of stored)
//!   codec_trade       time -> bandwidth    (time coding gradients instead of bytes sent)
//! The training planner (plan/planner.hpp) explains its choice as these trades, taken one slot at a time from the
//! untraded baseline.
//!
//!   const plan::recompute_trade t{s, w, codecs};
//!   const auto trade = t.price({.from = base, .to = with_recomputation});   // trade.saved(): device bytes

#include <span>

#include <trinity/concepts/tradeoff_policy.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>

namespace trinity::plan {

//! One slot of a training plan, moved: what the step costs each rank at `from` and at `to`.
template <class Spends, class Saves>
struct training_slot_trade {
  using policy_concept = tradeoff_policy_tag;
  using spends = Spends;
  using saves = Saves;
  struct input {
    training_plan from, to;
  };

  const system& s;
  const training_workload& w;
  std::span<const model::compressor_cost> codecs;  //!< what the plans' codec indices name

  [[nodiscard]] priced_trade<Spends, Saves> price(const input& in) const {
    return {plan::price(s, w, codecs[in.from.codec], in.from).total,
            plan::price(s, w, codecs[in.to.codec], in.to).total};
  }
};

using zero_stage_trade = training_slot_trade<resources::bandwidth, resources::memory>;
using offload_trade = training_slot_trade<resources::time, resources::memory>;
using recompute_trade = training_slot_trade<resources::compute, resources::memory>;
using codec_trade = training_slot_trade<resources::time, resources::bandwidth>;

static_assert(diagnose_tradeoff_policy<zero_stage_trade>() && diagnose_tradeoff_policy<offload_trade>() &&
              diagnose_tradeoff_policy<recompute_trade>() && diagnose_tradeoff_policy<codec_trade>());

}  // namespace trinity::plan
