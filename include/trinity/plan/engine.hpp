#pragma once
//! \file
//! The planning engine every workload plugs into. A workload says what a plan
//! is (its slots), how to enumerate and price plans, which constraints a plan
//! breaks, how two plans compare on the objective, its Pareto keys, which plan
//! is the untraded baseline and how to tell a reader what was traded; the
//! engine does the rest, the same way for every workload:
//!  - every plan priced and checked, kept in enumeration order;
//!  - the Pareto front of the feasible plans over the workload's keys;
//!  - the best feasible plan for the objective (or the workload's own account
//!    of why none fits);
//!  - the explanation: the binding resource before and after, the trades the
//!    workload names, and for each neighbour of the choice the constraint or
//!    the figure that beat it.
//!
//!   struct my_workload { using plan_type = ...; using cost_type = ...; ... };   // see planning_problem
//!   auto r = plan::solve(my_workload{...}, {.objective = plan::objective::energy});
//!
//! Training (plan/planner.hpp), the diffusion cache (plan/diffusion.hpp) and
//! the edge stream (plan/edge.hpp) are three such workloads.

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <tuple>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/slots.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! What the planner minimises: step (or request, or frame) time, energy, or dollars (needs a priced system).
enum class objective { time, energy, cost };

inline const char* to_string(objective o) {
  return o == objective::time ? "time" : o == objective::energy ? "energy" : "cost";
}

struct planner_options {
  plan::objective objective = objective::time;
  std::optional<bytes> link_budget = std::nullopt;  //!< most bytes a rank may send per step (or per frame)
};

struct explanation {
  std::string binding_before, binding_after;
  std::vector<std::string> trades;    //!< what the choice changed against the baseline, and what each cost and saved
  std::vector<std::string> rejected;  //!< neighbours of the choice, and what beat them
  std::vector<priced_step> priced;    //!< the same steps as TradeoffPolicy trades, slot by slot (plan/slots.hpp)
};

//! One plan, its price and the first constraint it breaks (empty when it fits).
template <class Plan, class Cost>
struct candidate {
  Plan plan;
  Cost cost;
  std::string violation;
  [[nodiscard]] bool fits() const noexcept { return violation.empty(); }
};

//! Every plan the engine priced, the Pareto front, the choice, the baseline and why.
template <class Plan, class Cost>
struct result {
  std::vector<model::compressor_cost> codecs;     //!< the codecs the plans index
  std::vector<candidate<Plan, Cost>> candidates;  //!< every plan, in enumeration order
  std::vector<std::size_t> pareto;                //!< indices of the feasible, non-dominated candidates
  std::size_t choice = 0;                         //!< index of the chosen candidate
  std::size_t baseline = 0;                       //!< index of the untraded plan
  plan::explanation explanation;
  [[nodiscard]] const candidate<Plan, Cost>& chosen() const { return candidates.at(choice); }
};

namespace detail {

inline std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v * 100);
  return b;
}

//! The objective's value, whatever is priced: time in seconds, energy in joules, cost in dollars.
inline double score(seconds time, joules energy, double dollars, objective o) {
  return o == objective::time ? time.value() : o == objective::energy ? energy.value() : dollars;
}
//! The same for any cost with a total (time, energy) and dollars.
template <class Cost>
requires requires(const Cost& c) {
  c.total.time;
  c.total.energy;
  c.dollars;
}
double score(const Cost& c, objective o) { return score(c.total.time, c.total.energy, c.dollars, o); }
//! What breaks a tie on the objective: energy after time, time after energy or cost.
inline objective runner_up(objective o) { return o == objective::time ? objective::energy : objective::time; }

//! "as fast": how a plan that ties the choice on the objective compares, before what decided the tie.
inline std::string as_good(objective o) {
  return o == objective::time ? "as fast" : o == objective::energy ? "as frugal" : "as cheap";
}

//! "step time 1.2 s vs 1.1 s": the objective's figures of an alternative and of the choice.
inline std::string versus(seconds t1, joules e1, double d1, seconds t2, joules e2, double d2, objective o,
                          const char* time_word) {
  switch (o) {
    case objective::time:
      return std::string(time_word) + " " + to_string(t1) + " vs " + to_string(t2);
    case objective::energy:
      return "energy " + to_string(e1) + " vs " + to_string(e2);
    default:
      return "cost " + format_dollars(d1) + " vs " + format_dollars(d2);
  }
}

//! The cost objective on a system without prices would pick at random among zeros: refuse it.
inline void require_prices(const system& s, objective o) {
  trinity::detail::require(o != objective::cost || priced(s), "objective",
                           "cost needs prices, and " + s.name +
                               " has none. Fix: set device.price_per_hour, "
                               "interconnect.price_per_gb or a tier's price_per_gb_hour, or choose time or energy");
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
//! the Pareto front over `keys` (an array per candidate, lower is better), appended to `front` in index order.
//! Sorted by their keys, a candidate can only be dominated by one before it, and then by one on the front
//! before it (dominance is transitive), so each is checked against the front so far: n log n + n·|front|
//! rather than n², which a layout search of 10^5 candidates needs.
template <class Candidates, class Better, class Keys>
std::optional<std::size_t> choose_on_front(const Candidates& c, Better better, Keys keys,
                                           std::vector<std::size_t>& front) {
  std::optional<std::size_t> best;
  using key_t = decltype(keys(c[0]));
  std::vector<std::pair<key_t, std::size_t>> feasible;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].fits()) continue;
    if (!best || better(c[i], c[*best])) best = i;
    feasible.emplace_back(keys(c[i]), i);
  }
  std::sort(feasible.begin(), feasible.end());
  std::vector<std::size_t> mine;  // positions in `feasible` of the front so far
  for (std::size_t k = 0; k < feasible.size(); ++k) {
    bool dominated = false;
    for (std::size_t j = 0; j < mine.size() && !dominated; ++j)
      dominated = dominates_on(feasible[mine[j]].first, feasible[k].first);
    if (!dominated) mine.push_back(k);
  }
  const std::size_t first = front.size();
  for (const auto k : mine) front.push_back(feasible[k].second);
  std::sort(front.begin() + static_cast<std::ptrdiff_t>(first), front.end());
  return best;
}

//! Validates every codec and returns the index of "identity", the untraded choice, which must be there.
inline std::size_t identity_codec(const std::vector<model::compressor_cost>& codecs, const std::string& why) {
  std::size_t identity = codecs.size();
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    model::validate(codecs[i]);
    if (codecs[i].name == "identity") identity = i;
  }
  trinity::detail::require(identity < codecs.size(), "codecs", "must include \"identity\"" + why);
  return identity;
}

//! What a workload that prices codecs plans with: the system, the workload, the options, the codecs and
//! which of them is "identity".
template <class W>
struct codec_workload {
  const system& s;
  const W& w;
  const planner_options& o;
  const std::vector<model::compressor_cost>& ks;
  std::size_t identity;
  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return ks; }
};

template <class T>
inline constexpr bool is_double_array = false;
template <std::size_t N>
inline constexpr bool is_double_array<std::array<double, N>> = true;

}  // namespace detail

//! What a workload gives the engine. P::plan_type is one combination of its slots; P::cost_type carries
//! total.time, total.energy and dollars (what the objectives read).
template <class P>
concept planning_problem = requires(const P& p, const typename P::plan_type& plan, const typename P::cost_type& cost,
                                    const candidate<typename P::plan_type, typename P::cost_type>& e,
                                    const result<typename P::plan_type, typename P::cost_type>& r, std::size_t i) {
  { P::time_word } -> std::convertible_to<const char*>;  // "step time", "request time", "latency"
  { p.codecs() } -> std::convertible_to<std::vector<model::compressor_cost>>;
  p.for_each_plan([](const typename P::plan_type&) {});  // the slots' combinations, in a stable order
  { p.price(plan) } -> std::same_as<typename P::cost_type>;
  { p.check(plan, cost) } -> std::convertible_to<std::string>;      // the first constraint broken, or empty
  { p.is_baseline(plan) } -> std::convertible_to<bool>;             // the untraded plan
  { p.better(e, e) } -> std::convertible_to<bool>;                  // strictly better for the objective, ties broken
  requires detail::is_double_array<decltype(p.pareto_keys(cost))>;  // lower is better in every key
  { p.describe(plan) } -> std::convertible_to<std::string>;
  { p.binding(e) } -> std::convertible_to<std::string>;  // what dominates, or what the plan runs out of
  { p.trades(r) } -> std::convertible_to<std::vector<std::string>>;
  { p.neighbour(r, i) } -> std::convertible_to<bool>;  // worth a line of "rejected"
  p.none_fits(r);                                      // throws: why nothing fits, and the fix
  typename P::slots;  // the slots it varies, each a TradeoffPolicy (plan/slots.hpp), in the order a reader takes them
};

//! Plans this close on the objective (a share of the best's score) are a tie, and a tie goes to the plan that uses
//! less: no cache over a cache, a smaller cache or tier, fewer devices (the workload's `leaner`). A model's
//! figures are not known to 0.1%, so a plan that wins by less does not earn the memory or devices it takes.
inline constexpr double tie_tolerance = 1e-3;

namespace detail {
//! The choice: `best`, or among the feasible plans within tie_tolerance of its score the one `p.leaner` prefers
//! (ties in leanness to the better), for a workload that says which of two plans uses less.
template <class P, class Candidates>
std::size_t leanest_within_tie(const P& p, const Candidates& c, std::size_t best, objective o) {
  if constexpr (requires { p.leaner(c[0], c[0]); }) {
    const double top = score(c[best].cost, o);
    std::size_t pick = best;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (!c[i].fits() || score(c[i].cost, o) > top * (1 + tie_tolerance)) continue;
      if (p.leaner(c[i], c[pick]) || (!p.leaner(c[pick], c[i]) && p.better(c[i], c[pick]))) pick = i;
    }
    return pick;
  } else {
    return best;
  }
}
}  // namespace detail

namespace detail {
//! Where a violation stands in a workload's order of checks (`order`: a phrase each check's violation holds):
//! the index of the last phrase it holds, 0 where none.
template <std::size_t N>
int check_stage(std::string_view violation, const std::string_view (&order)[N]) {
  for (int i = static_cast<int>(N) - 1; i > 0; --i)
    if (violation.find(order[i]) != std::string_view::npos) return i;
  return 0;
}

//! When nothing fits, the plan that came nearest: the furthest through the workload's checks (`stage`), then the
//! least past the constraint it breaks (`overshoot`: what it needs over what is allowed), then the best on the
//! objective. A refusal names its binding constraint and the fix that would lift it.
template <class Candidate, class Stage, class Overshoot>
const Candidate& nearest_to_fitting(const std::vector<Candidate>& c, objective o, Stage stage, Overshoot overshoot) {
  const auto key = [&](const Candidate& e) { return std::tuple{-stage(e), overshoot(e), score(e.cost, o)}; };
  const Candidate* nearest = &c.front();
  for (const auto& e : c)
    if (key(e) < key(*nearest)) nearest = &e;
  return *nearest;
}
}  // namespace detail

namespace detail {
//! Why each plan one choice away from the chosen one was not chosen: the constraint it breaks, the tie it lost
//! and to what, or its figure on the objective beside the choice's.
template <class P, class Result>
std::vector<std::string> rejected_neighbours(const P& p, const Result& r, objective o) {
  std::vector<std::string> out;
  const auto& chosen = r.chosen();
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (i == r.choice || !p.neighbour(r, i)) continue;
    const auto& e = r.candidates[i];
    const std::string name = p.describe(e.plan);
    if (!e.fits()) {
      out.push_back(name + ": breaks the " + e.violation);
      continue;
    }
    if (detail::score(e.cost, o) < detail::score(chosen.cost, o)) {
      // Better on the objective by less than the tie tolerance: the leaner choice won the tie.
      out.push_back(name + ": within " + units::detail::format_number(tie_tolerance * 100) + "%" +
                    " of it on the objective (" +
                    detail::versus(e.cost.total.time, e.cost.total.energy, e.cost.dollars, chosen.cost.total.time,
                                   chosen.cost.total.energy, chosen.cost.dollars, o, P::time_word) +
                    "), and a tie goes to the plan that uses less");
      continue;
    }
    if constexpr (requires { p.tie_note(e, chosen); }) {
      // A workload that breaks ties by something besides the objective says what decided.
      if (detail::score(e.cost, o) <= detail::score(chosen.cost, o) * (1 + 1e-9)) {
        out.push_back(name + ": " + p.tie_note(e, chosen));
        continue;
      }
    }
    out.push_back(name + ": " +
                  detail::versus(e.cost.total.time, e.cost.total.energy, e.cost.dollars, chosen.cost.total.time,
                                 chosen.cost.total.energy, chosen.cost.dollars, o, P::time_word));
  }
  return out;
}
}  // namespace detail

//! Prices every plan of `p`, picks the best that fits for `o.objective` and explains it.
template <class P>
result<typename P::plan_type, typename P::cost_type> solve(const P& p, const planner_options& o) {
  static_assert(planning_problem<P>,
                "trinity::plan::solve: this workload does not give the engine what it needs. Fix: define "
                "plan_type, cost_type, time_word, codecs(), for_each_plan(f), price(plan), check(plan, cost), "
                "is_baseline(plan), better(a, b), pareto_keys(cost), describe(plan), binding(candidate), "
                "trades(result), neighbour(result, i), none_fits(result) and slots (plan/engine.hpp, "
                "planning_problem)");
  using plan_t = typename P::plan_type;
  result<plan_t, typename P::cost_type> r;
  r.codecs = p.codecs();
  p.for_each_plan([&](const plan_t& plan) {
    auto cost = p.price(plan);
    std::string violation = p.check(plan, cost);
    r.candidates.push_back({plan, std::move(cost), std::move(violation)});
  });
  if (r.candidates.empty()) {
    // A problem that knows why it enumerated nothing says so, with the fix (it returns where it does not know).
    if constexpr (requires { p.no_plans(); }) p.no_plans();
    throw invalid_input("workload", "offers no plan to price");
  }
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (p.is_baseline(r.candidates[i].plan)) r.baseline = i;

  const auto best = detail::choose_on_front(
      r.candidates, [&](const auto& a, const auto& b) { return p.better(a, b); },
      [&](const auto& e) { return p.pareto_keys(e.cost); }, r.pareto);
  if (!best) {
    p.none_fits(r);
    throw invalid_input("workload", "no plan fits");  // for a none_fits that returns
  }
  r.choice = detail::leanest_within_tie(p, r.candidates, *best, o.objective);

  const auto& chosen = r.chosen();
  auto& x = r.explanation;
  x.binding_before = p.binding(r.candidates[r.baseline]);
  x.binding_after = p.binding(chosen);
  x.trades = p.trades(r);
  x.priced = priced_steps(p, r.candidates[r.baseline].plan, chosen.plan, typename P::slots{});
  x.rejected = detail::rejected_neighbours(p, r, o.objective);
  return r;
}

}  // namespace trinity::plan
