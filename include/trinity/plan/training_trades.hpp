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
#include <string_view>

#include <trinity/concepts/tradeoff_policy.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>

namespace trinity::plan {

//! The slots of a training plan, as plan/slots.hpp describes a slot: what moving it spends and saves, and where a
//! plan keeps it. The training planner lists them (plan/planner.hpp) in this order.
namespace training_slots {
struct zero_stage {
  using spends = resources::bandwidth;
  using saves = resources::memory;
  static constexpr std::string_view name = "ZeRO stage";
  static auto& of(training_plan& p) { return p.stage; }
};
struct offload {
  using spends = resources::time;
  using saves = resources::memory;
  static constexpr std::string_view name = "offload tier";
  static auto& of(training_plan& p) { return p.offload_tier; }
};
struct recompute {
  using spends = resources::compute;
  using saves = resources::memory;
  static constexpr std::string_view name = "recomputation";
  static auto& of(training_plan& p) { return p.recompute; }
};
struct codec {
  using spends = resources::time;
  using saves = resources::bandwidth;
  static constexpr std::string_view name = "gradient codec";
  static auto& of(training_plan& p) { return p.codec; }
};
}  // namespace training_slots

//! One slot of a training plan, moved: what the step costs each rank at `from` and at `to`.
template <class Slot>
struct training_slot_trade {
  using policy_concept = tradeoff_policy_tag;
  using spends = typename Slot::spends;
  using saves = typename Slot::saves;
  struct input {
    training_plan from, to;
  };

  const system& s;
  const training_workload& w;
  std::span<const model::compressor_cost> codecs;  //!< what the plans' codec indices name

  [[nodiscard]] priced_trade<spends, saves> price(const input& in) const {
    return {plan::price(s, w, codecs[in.from.codec], in.from).total,
            plan::price(s, w, codecs[in.to.codec], in.to).total};
  }
};

using zero_stage_trade = training_slot_trade<training_slots::zero_stage>;
using offload_trade = training_slot_trade<training_slots::offload>;
using recompute_trade = training_slot_trade<training_slots::recompute>;
using codec_trade = training_slot_trade<training_slots::codec>;

static_assert(diagnose_tradeoff_policy<zero_stage_trade>() && diagnose_tradeoff_policy<offload_trade>() &&
              diagnose_tradeoff_policy<recompute_trade>() && diagnose_tradeoff_policy<codec_trade>());

}  // namespace trinity::plan
