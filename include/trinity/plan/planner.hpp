#pragma once
//! \file
//! The planner: every combination of the space's slots priced by
//! plan/training.hpp, checked against the constraints (the error budget, each
//! tier's capacity, an optional interconnect budget), reduced to its Pareto
//! front over (time, energy, device bytes, interconnect bytes), and the best
//! for the objective chosen, with an explanation: the binding resource before
//! and after, the trades made against the untraded baseline (no codec, DDP, no
//! offload, no recomputation), and for each alternative one slot away, the
//! first constraint or cost that beat it.
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
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/space.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! What the planner minimises: step (or request, or frame) time, energy, or dollars (needs a priced system).
enum class objective { time, energy, cost };

inline const char* to_string(objective o) {
  return o == objective::time ? "time" : o == objective::energy ? "energy" : "cost";
}

struct planner_options {
  plan::objective objective = objective::time;
  std::optional<bytes> link_budget = std::nullopt;  //!< most bytes a rank may send per step
};

struct evaluated {
  training_plan plan;
  training_cost cost;
  std::string violation;  //!< the first constraint it breaks; empty when it fits
  [[nodiscard]] bool fits() const noexcept { return violation.empty(); }
};

struct explanation {
  std::string binding_before, binding_after;
  std::vector<std::string> trades;    //!< what the choice changed against the baseline, and what each cost and saved
  std::vector<std::string> rejected;  //!< alternatives one slot away, and what beat them
};

struct plan_result {
  std::vector<model::compressor_cost> codecs;
  std::vector<evaluated> candidates;  //!< every combination, in enumeration order
  std::vector<std::size_t> pareto;    //!< indices of the feasible, non-dominated candidates
  std::size_t choice = 0;             //!< index of the chosen candidate
  std::size_t baseline = 0;           //!< index of the untraded plan
  plan::explanation explanation;
  [[nodiscard]] const evaluated& chosen() const { return candidates.at(choice); }
};

namespace detail {

inline std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v * 100);
  return b;
}

inline std::string check(const system& s, const training_workload& w, const planner_options& o, const evaluated& e,
                         const std::vector<model::compressor_cost>& codecs) {
  const auto& c = e.cost;
  if (c.error > w.error_budget)
    return "error budget: " + codecs[e.plan.codec].name + " adds relative error " + units::detail::format_number(c.error) +
           ", more than " + units::detail::format_number(w.error_budget);
  for (std::size_t t = 0; t < s.tiers.size(); ++t)
    if (c.tier_bytes[t] > s.tiers[t].capacity)
      return s.tiers[t].name + " capacity: needs " + to_string(c.tier_bytes[t]) + " of " + to_string(s.tiers[t].capacity);
  if (o.link_budget && c.link_bytes > *o.link_budget)
    return "interconnect budget: sends " + to_string(c.link_bytes) + " per step, more than " + to_string(*o.link_budget);
  return {};
}

//! The objective's value, whatever is priced: time in seconds, energy in joules, cost in dollars.
inline double score(seconds time, joules energy, double dollars, objective o) {
  return o == objective::time ? time.value() : o == objective::energy ? energy.value() : dollars;
}
inline double score(const training_cost& c, objective o) { return score(c.total.time, c.total.energy, c.dollars, o); }
//! What breaks a tie on the objective: energy after time, time after energy or cost.
inline objective runner_up(objective o) { return o == objective::time ? objective::energy : objective::time; }

//! "step time 1.2 s vs 1.1 s": the objective's figures of an alternative and of the choice.
inline std::string versus(seconds t1, joules e1, double d1, seconds t2, joules e2, double d2, objective o,
                          const char* time_word) {
  switch (o) {
    case objective::time: return std::string(time_word) + " " + to_string(t1) + " vs " + to_string(t2);
    case objective::energy: return "energy " + to_string(e1) + " vs " + to_string(e2);
    default: return "cost " + format_dollars(d1) + " vs " + format_dollars(d2);
  }
}

//! The cost objective on a system without prices would pick at random among zeros: refuse it.
inline void require_prices(const system& s, objective o) {
  trinity::detail::require(o != objective::cost || priced(s), "objective",
                           "cost needs prices, and " + s.name + " has none. Fix: set device.price_per_hour, "
                           "interconnect.price_per_gb or a tier's price_per_gb_hour, or choose time or energy");
}

// Lexicographic: the objective, then the runner-up, then device bytes, then bytes sent.
inline bool better(const evaluated& a, const evaluated& b, objective o) {
  const auto key = [o](const evaluated& e) {
    return std::array<double, 4>{score(e.cost, o), score(e.cost, runner_up(o)), e.cost.total.memory.value(),
                                 e.cost.link_bytes.value()};
  };
  return key(a) < key(b);
}

//! a is no worse than b in every key and better in one (keys: lower is better).
template <std::size_t N>
bool dominates_on(const std::array<double, N>& a, const std::array<double, N>& b) {
  bool strictly = false;
  for (std::size_t i = 0; i < N; ++i) {
    if (a[i] > b[i]) return false;
    strictly |= a[i] < b[i];
  }
  return strictly;
}

//! Among the feasible candidates (those whose fits() holds): the index of the best by `better`, if any, and
//! the Pareto front over `keys` (an array per candidate, lower is better), appended to `front`.
template <class Candidates, class Better, class Keys>
std::optional<std::size_t> choose_on_front(const Candidates& c, Better better, Keys keys, std::vector<std::size_t>& front) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].fits()) continue;
    if (!best || better(c[i], c[*best])) best = i;
    const auto mine = keys(c[i]);
    bool dominated = false;
    for (std::size_t j = 0; j < c.size() && !dominated; ++j) dominated = j != i && c[j].fits() && dominates_on(keys(c[j]), mine);
    if (!dominated) front.push_back(i);
  }
  return best;
}

//! A training plan's Pareto keys: time, energy, device bytes, bytes sent and dollars.
inline std::array<double, 5> pareto_keys(const training_cost& c) {
  return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.link_bytes.value(), c.dollars};
}
inline bool pareto_dominates(const training_cost& a, const training_cost& b) {
  return dominates_on(pareto_keys(a), pareto_keys(b));
}

inline std::string describe(const training_plan& p, const system& s, const std::vector<model::compressor_cost>& codecs) {
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
  return top.second + " (" + pct(top.first / c.total.time.value()) + " of a " + to_string(c.total.time) +
         " step); " + s.tiers[0].name + " " + pct(c.tier_bytes[0] / s.tiers[0].capacity) + " full";
}

}  // namespace detail

template <class Space = training_space<>>
plan_result plan_training(const system& s, const training_workload& w, std::vector<model::compressor_cost> codecs,
                          const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  trinity::detail::require(!codecs.empty(), "codecs", "give at least one codec (\"identity\" sends gradients as they are)");
  std::size_t identity = codecs.size();
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    model::validate(codecs[i]);
    if (codecs[i].name == "identity") identity = i;
  }
  trinity::detail::require(identity < codecs.size(), "codecs", "must include \"identity\", the untraded baseline");
  trinity::detail::require(!o.link_budget || o.link_budget->value() >= 0, "link_budget", "must not be negative");
  detail::require_prices(s, o.objective);

  plan_result r;
  r.codecs = codecs;
  const auto offload_tiers = [&](bool offload) {
    std::vector<std::size_t> t;
    if (!offload) t.push_back(0);
    else
      for (std::size_t i = 1; i < s.tiers.size(); ++i) t.push_back(i);
    return t;
  };
  for (std::size_t c = 0; c < codecs.size(); ++c)
    for (const int stage : Space::stages)
      for (const bool off : Space::offload)
        for (const std::size_t tier : offload_tiers(off))
          for (const bool rc : Space::recompute) {
            evaluated e{{c, stage, tier, rc}, price(s, w, codecs[c], {c, stage, tier, rc}), {}};
            e.violation = detail::check(s, w, o, e, codecs);
            r.candidates.push_back(std::move(e));
          }

  // The baseline: no codec, the space's lowest stage, no offload, no recomputation (or the space's first choices).
  const training_plan base{identity, *std::min_element(Space::stages.begin(), Space::stages.end()), 0, false};
  r.baseline = 0;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].plan == base) r.baseline = i;

  const auto best = detail::choose_on_front(
      r.candidates, [&](const evaluated& a, const evaluated& b) { return detail::better(a, b, o.objective); },
      [](const evaluated& e) { return detail::pareto_keys(e.cost); }, r.pareto);
  if (!best) {
    std::string why = r.candidates[r.baseline].violation;
    for (const auto& e : r.candidates)
      if (e.cost.tier_bytes[0] < r.candidates[r.baseline].cost.tier_bytes[0]) why = e.violation;
    throw invalid_input("workload", "no plan fits " + s.name + ": even the leanest breaks the " + why +
                                        ". Fix: more devices (data_parallel), a smaller batch, or more memory");
  }
  r.choice = *best;

  // The explanation.
  const auto& chosen = r.chosen();
  const auto& baseline = r.candidates[r.baseline];
  auto& x = r.explanation;
  x.binding_before = detail::binding(s, baseline);
  x.binding_after = detail::binding(s, chosen);
  const auto& p = chosen.plan;
  const auto delta = [&](const training_cost& from, const training_cost& to) {
    return "device memory " + to_string(from.tier_bytes[0]) + " -> " + to_string(to.tier_bytes[0]) + ", sent " +
           to_string(from.link_bytes) + " -> " + to_string(to.link_bytes) + " per step, step time " +
           to_string(from.total.time) + " -> " + to_string(to.total.time);
  };
  if (p == base) x.trades.push_back("none: the untraded plan is already the best that fits");
  auto step = base;
  const auto move = [&](auto&& change, std::string what) {
    const auto from = price(s, w, codecs[step.codec], step);
    change(step);
    const auto to = price(s, w, codecs[step.codec], step);
    x.trades.push_back(what + ": " + delta(from, to));
  };
  if (p.stage != base.stage) move([&](training_plan& q) { q.stage = p.stage; }, "ZeRO stage " + std::to_string(p.stage) + " (bandwidth for memory)");
  if (p.offload_tier) move([&](training_plan& q) { q.offload_tier = p.offload_tier; }, "optimizer states to " + s.tiers[p.offload_tier].name + " (bandwidth for memory)");
  if (p.recompute) move([&](training_plan& q) { q.recompute = true; }, "recompute activations (compute for memory)");
  if (p.codec != base.codec) move([&](training_plan& q) { q.codec = p.codec; }, codecs[p.codec].name + " gradients (compute for bandwidth)");

  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& e = r.candidates[i];
    const auto& q = e.plan;
    const int differs = (q.codec != p.codec) + (q.stage != p.stage) + (q.offload_tier != p.offload_tier) + (q.recompute != p.recompute);
    if (differs != 1) continue;
    const std::string name = detail::describe(q, s, codecs);
    if (!e.fits()) {
      x.rejected.push_back(name + ": breaks the " + e.violation);
      continue;
    }
    const double mine = detail::score(chosen.cost, o.objective), theirs = detail::score(e.cost, o.objective);
    if (theirs > mine * (1 + 1e-9))
      x.rejected.push_back(name + ": " + detail::versus(e.cost.total.time, e.cost.total.energy, e.cost.dollars,
                                                        chosen.cost.total.time, chosen.cost.total.energy,
                                                        chosen.cost.dollars, o.objective, "step time"));
    else  // as good on the objective: the tie-break decided
      x.rejected.push_back(name + ": as " +
                           (o.objective == objective::time ? "fast" : o.objective == objective::energy ? "frugal" : "cheap") +
                           ", but " +
                           (e.cost.total.memory > chosen.cost.total.memory
                                ? "holds " + to_string(e.cost.total.memory) + " on the device vs " + to_string(chosen.cost.total.memory)
                                : "sends " + to_string(e.cost.link_bytes) + " per step vs " + to_string(chosen.cost.link_bytes)));
  }
  return r;
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
