#pragma once
//! \file
//! The slots a planner varies, each a TradeoffPolicy. A planning problem lists its slots in the order a reader
//! takes them (`using slots = plan::slot_list<...>`); a slot names itself, says what moving it spends and what it
//! saves, and reads its value from a plan:
//!
//!   struct kv_precision {
//!     using spends = resources::compute;  using saves = resources::memory;
//!     static constexpr std::string_view name = "KV precision";
//!     static auto& of(serving_plan& p) { return p.codec; }
//!   };
//!
//! slot_trade<Problem, Slot> prices moving the slot between two plans as the problem prices them: the plans'
//! resource vectors before and after (a priced_trade). The engine (plan/engine.hpp) walks from the untraded
//! baseline to the choice a slot at a time and keeps each step's priced trade in explanation.priced.

#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <trinity/concepts/resource.hpp>
#include <trinity/concepts/tradeoff_policy.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/resources/resource_vector.hpp>

namespace trinity::plan {

template <class... Slots>
struct slot_list {};

//! A slot of Plan: names itself and what it trades, and reads its value from a plan.
template <class S, class Plan>
concept plan_slot = Resource<typename S::spends> && Resource<typename S::saves> && requires(Plan& p) {
  { S::name } -> std::convertible_to<std::string_view>;
  S::of(p);
};

//! A cost's resource vector: cost.total, or its time and energy where that is all a workload prices.
template <class Total>
[[nodiscard]] constexpr resource_vector resources_of(const Total& t) {
  if constexpr (std::same_as<Total, resource_vector>) {
    return t;
  } else {
    resource_vector v{};
    v.time = t.time;
    v.energy = t.energy;
    return v;
  }
}

//! Moving one slot of Problem's plans from one value to another, as the problem prices the two plans.
template <class Problem, class Slot>
struct slot_trade {
  static_assert(plan_slot<Slot, typename Problem::plan_type>,
                "trinity::plan::slot_trade<Problem, Slot>: Slot is not a slot of the problem's plans. Fix: give it "
                "spends and saves (Resources), a name, and `static auto& of(plan_type&)`");
  using policy_concept = tradeoff_policy_tag;
  using spends = typename Slot::spends;
  using saves = typename Slot::saves;
  struct input {
    typename Problem::plan_type from, to;
  };

  const Problem& problem;

  [[nodiscard]] priced_trade<spends, saves> price(const input& in) const {
    return {resources_of(problem.price(in.from).total), resources_of(problem.price(in.to).total)};
  }
};

//! One step from the baseline towards the choice: the slot moved, what it spends and saves, and the plan's
//! resource vector before and after.
struct priced_step {
  std::string slot;
  std::string_view spends, saves;
  resource_vector before, after;
};

namespace detail {
template <class Problem, class Slot, class Plan>
void step_slot(const Problem& p, Plan& at, const Plan& want, std::vector<priced_step>& out) {
  static_assert(diagnose_tradeoff_policy<slot_trade<Problem, Slot>>());
  auto goal = want;  // `of` reads through a mutable plan
  if (Slot::of(at) == Slot::of(goal)) return;
  auto to = at;
  Slot::of(to) = Slot::of(goal);
  const auto t = slot_trade<Problem, Slot>{p}.price({at, to});
  out.push_back({std::string(Slot::name), Slot::spends::name, Slot::saves::name, t.before, t.after});
  at = to;
}
}  // namespace detail

//! From `from` to `to` one slot at a time, in the problem's order of slots, each step priced.
template <class Problem, class... Slots>
[[nodiscard]] std::vector<priced_step> priced_steps(const Problem& p, typename Problem::plan_type from,
                                                    const typename Problem::plan_type& to, slot_list<Slots...>) {
  std::vector<priced_step> out;
  (detail::step_slot<Problem, Slots>(p, from, to, out), ...);
  return out;
}

}  // namespace trinity::plan
