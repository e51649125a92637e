#pragma once
//! \file
//! The training planner, a workload of the planning engine (plan/engine.hpp):
//! every combination of the space's slots priced by plan/training.hpp, checked against the constraints (the error
//! budget, each tier's capacity, an optional interconnect budget), reduced to its Pareto front over (time, energy,
//! device bytes, interconnect bytes), and the best for the objective chosen, with an explanation: the binding resource
//! before and after, the trades made against the untraded baseline (no codec, DDP, no offload, no recomputation), and
//! for each alternative one slot away, the first constraint or cost that beat it.
//!
//!   const auto s = plan::presets::h100_infiniband();
//!   auto r = plan::plan_training(s, plan::presets::llm_70b(), {.objective = plan::objective::time});
//!   r.chosen().plan; r.explanation.trades; r.explanation.rejected; plan::describe(r, s);
//!
//! Without a codec list it prices the codecs the system's devices run (default_codecs_for), as `trinity
//! plan` does.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/space.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/training_trades.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

using evaluated = candidate<training_plan, training_cost>;
using plan_result = result<training_plan, training_cost>;

namespace detail {

inline std::string check(const system& s, const training_workload& w, const planner_options& o, const training_plan& p,
                         const training_cost& c, const std::vector<model::compressor_cost>& codecs) {
  if (c.error > w.error_budget)
    return "error budget: " + codecs[p.codec].name + " adds relative error " + units::detail::format_number(c.error) +
           ", more than " + units::detail::format_number(w.error_budget);
  for (std::size_t t = 0; t < s.tiers.size(); ++t)
    if (c.tier_bytes[t] > s.tiers[t].capacity)
      return s.tiers[t].name + " capacity: needs " + to_string(c.tier_bytes[t]) + " of " +
             to_string(s.tiers[t].capacity);
  if (o.link_budget && c.link_bytes > *o.link_budget)
    return "interconnect budget: sends " + to_string(c.link_bytes) + " per step, more than " +
           to_string(*o.link_budget);
  return {};
}

// Lexicographic: the objective, then the runner-up, then device bytes, then bytes sent.
inline bool better(const evaluated& a, const evaluated& b, objective o) {
  const auto key = [o](const evaluated& e) {
    return std::array<double, 4>{score(e.cost, o), score(e.cost, runner_up(o)), e.cost.total.memory.value(),
                                 e.cost.link_bytes.value()};
  };
  return key(a) < key(b);
}

//! A training plan's Pareto keys: time, energy, device bytes, bytes sent and dollars.
inline std::array<double, 5> pareto_keys(const training_cost& c) {
  return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.link_bytes.value(), c.dollars};
}
inline bool pareto_dominates(const training_cost& a, const training_cost& b) {
  return dominates_on(pareto_keys(a), pareto_keys(b));
}

inline std::string describe(const training_plan& p, const system& s,
                            const std::vector<model::compressor_cost>& codecs) {
  return codecs[p.codec].name + ", ZeRO " + std::to_string(p.stage) +
         (p.offload_tier ? ", offload to " + s.tiers[p.offload_tier].name : ", no offload") +
         (p.recompute ? ", recompute" : ", store activations");
}

// What dominates a step, or what the plan runs out of.
inline std::string binding(const system& s, const evaluated& e) {
  if (!e.fits()) return e.violation;
  const auto& c = e.cost;
  const std::pair<double, std::string> parts[] = {{c.compute_time.value(), "compute"},
                                                  {c.comm_time.value(), "interconnect"},
                                                  {c.codec_time.value(), "codec"},
                                                  {c.offload_time.value(), "offload traffic"}};
  const auto top = *std::max_element(std::begin(parts), std::end(parts));
  return top.second + " (" + pct(top.first / c.total.time.value()) + " of a " + to_string(c.total.time) + " step); " +
         s.tiers[0].name + " " + pct(c.tier_bytes[0] / s.tiers[0].capacity) + " full";
}

//! Data-parallel training as the engine sees it: codec x ZeRO stage x offload tier x recomputation.
template <class Space>
struct training_problem : codec_workload<training_workload> {
  using plan_type = training_plan;
  using cost_type = training_cost;
  static constexpr const char* time_word = "step time";

  training_plan base;  //!< no codec, the space's lowest stage, no offload, no recomputation

  using slots =
      slot_list<training_slots::zero_stage, training_slots::offload, training_slots::recompute, training_slots::codec>;

  template <class F>
  void for_each_plan(F&& f) const {
    for (std::size_t c = 0; c < ks.size(); ++c)
      for (const int stage : Space::stages)
        for (const bool off : Space::offload)
          for (std::size_t tier = off ? 1 : 0; tier < (off ? s.tiers.size() : 1); ++tier)
            for (const bool rc : Space::recompute) f(training_plan{c, stage, tier, rc});
  }
  [[nodiscard]] training_cost price(const training_plan& p) const { return plan::price(s, w, ks[p.codec], p); }
  [[nodiscard]] std::string check(const training_plan& p, const training_cost& c) const {
    return detail::check(s, w, o, p, c, ks);
  }
  [[nodiscard]] bool is_baseline(const training_plan& p) const { return p == base; }
  [[nodiscard]] bool better(const evaluated& a, const evaluated& b) const { return detail::better(a, b, o.objective); }
  [[nodiscard]] std::array<double, 5> pareto_keys(const training_cost& c) const { return detail::pareto_keys(c); }
  //! Uses less: no offload tier over one, the gradient as it is over a codec (a tie within the tolerance).
  [[nodiscard]] bool leaner(const evaluated& a, const evaluated& b) const {
    const auto key = [&](const evaluated& e) { return std::pair{e.plan.offload_tier != 0, e.plan.codec != identity}; };
    return key(a) < key(b);
  }
  [[nodiscard]] std::string describe(const training_plan& p) const { return detail::describe(p, s, ks); }
  [[nodiscard]] std::string binding(const evaluated& e) const { return detail::binding(s, e); }

  // One step per slot the choice moved, from the baseline, in the order a reader would take them: each a trade
  // priced by its slot's TradeoffPolicy (plan/training_trades.hpp).
  [[nodiscard]] std::vector<std::string> trades(const plan_result& r) const {
    std::vector<std::string> out;
    const auto& p = r.chosen().plan;
    if (p == base) out.push_back("none: the untraded plan is already the best that fits");
    auto step = base;
    const auto move = [&]<class Trade>(std::type_identity<Trade>, auto&& change, std::string what) {
      auto to = step;
      change(to);
      const auto t = Trade{s, w, ks}.price({step, to});
      out.push_back(what + ": device memory " + to_string(t.before.memory) + " -> " + to_string(t.after.memory) +
                    ", sent " + to_string(t.before.bandwidth) + " -> " + to_string(t.after.bandwidth) +
                    " per step, step time " + to_string(t.before.time) + " -> " + to_string(t.after.time));
      step = to;
    };
    if (p.stage != base.stage)
      move(
          std::type_identity<zero_stage_trade>{}, [&](training_plan& q) { q.stage = p.stage; },
          "ZeRO stage " + std::to_string(p.stage) + " (bandwidth for memory)");
    if (p.offload_tier)
      move(
          std::type_identity<offload_trade>{}, [&](training_plan& q) { q.offload_tier = p.offload_tier; },
          "optimizer states to " + s.tiers[p.offload_tier].name + " (bandwidth for memory)");
    if (p.recompute)
      move(
          std::type_identity<recompute_trade>{}, [&](training_plan& q) { q.recompute = true; },
          "recompute activations (compute for memory)");
    if (p.codec != base.codec)
      move(
          std::type_identity<codec_trade>{}, [&](training_plan& q) { q.codec = p.codec; },
          ks[p.codec].name + " gradients (compute for bandwidth)");
    return out;
  }
  // The plans one slot away from the choice.
  [[nodiscard]] bool neighbour(const plan_result& r, std::size_t i) const {
    const auto& q = r.candidates[i].plan;
    const auto& p = r.chosen().plan;
    return (q.codec != p.codec) + (q.stage != p.stage) + (q.offload_tier != p.offload_tier) +
               (q.recompute != p.recompute) ==
           1;
  }
  [[nodiscard]] std::string tie_note(const evaluated& e, const evaluated& chosen) const {
    return detail::as_good(o.objective) + ", but " +
           (e.cost.total.memory > chosen.cost.total.memory
                ? "holds " + to_string(e.cost.total.memory) + " on the device vs " + to_string(chosen.cost.total.memory)
                : "sends " + to_string(e.cost.link_bytes) + " per step vs " + to_string(chosen.cost.link_bytes));
  }
  // Why the leanest plan (the fewest bytes on the device) breaks: of those that tie, one that sends gradients as
  // they are, so that a codec's error does not stand for a memory that no plan has.
  [[noreturn]] void none_fits(const plan_result& r) const {
    const evaluated* leanest = &r.candidates[r.baseline];
    for (const auto& e : r.candidates) {
      const double mine = e.cost.tier_bytes[0].value(), least = leanest->cost.tier_bytes[0].value();
      if (mine < least || (mine == least && e.plan.codec == identity && leanest->plan.codec != identity)) leanest = &e;
    }
    // The fix lifts the constraint that binds: the link budget, or the device's memory.
    const bool link = leanest->violation.rfind("interconnect budget", 0) == 0;
    throw invalid_input("workload",
                        "no plan fits " + s.name + ": even the leanest (" + detail::describe(leanest->plan, s, ks) +
                            ") breaks the " + leanest->violation +
                            (link ? ". Fix: a larger --link-budget, a larger batch (ZeRO 3 gathers the "
                                    "weights each micro-batch), or a layout that sends less (--parallelism "
                                    "search)"
                                  : ". Fix: more devices (data_parallel), a smaller batch, or more memory"));
  }
};

}  // namespace detail

template <class Space = training_space<>>
plan_result plan_training(const system& s, const training_workload& w, std::vector<model::compressor_cost> codecs,
                          const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  trinity::detail::require(!codecs.empty(), "codecs",
                           "give at least one codec (\"identity\" sends gradients as they are)");
  const std::size_t identity = detail::identity_codec(codecs, ", the untraded baseline");
  trinity::detail::require(!o.link_budget || o.link_budget->value() >= 0, "link_budget", "must not be negative");
  detail::require_prices(s, o.objective);
  const training_plan base{identity, *std::min_element(Space::stages.begin(), Space::stages.end()), 0, false};
  return solve(detail::training_problem<Space>{{s, w, o, codecs, identity}, base}, o);
}

//! The same, pricing the codecs the system's devices run (default_codecs_for(s)): what `trinity plan` does.
template <class Space = training_space<>>
plan_result plan_training(const system& s, const training_workload& w, const planner_options& o = {}) {
  return plan_training<Space>(s, w, default_codecs_for(s), o);
}

//! The plan in words.
inline std::string describe(const plan_result& r, const system& s) {
  return detail::describe(r.chosen().plan, s, r.codecs);
}

}  // namespace trinity::plan
