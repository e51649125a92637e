#pragma once
//! \file
//! The parts every workload's printed plan shares: plain tables, the "Assumed" line, the plan JSON of
//! docs/plan.schema.json (system, workload, objective, assumed, candidates, choice, predicted, baseline, pareto,
//! explanation, and the workload's own keys under one object named for its kind), and the simulated-against-
//! predicted table of `trinity simulate`.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include <trinity/plan/assumed.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>
#include <trinity/workloads/request.hpp>

namespace trinity::workloads {

using json = nlohmann::json;

using reports::table;

//! What the plan took by default (plan/assumed.hpp): {"workload": {field: value}, "system": {...}} and, for a
//! parallel layout, the layout keys and flags it defaulted.
inline json assumed_json(const plan::system& s, const plan::assumptions& workload,
                         const plan::assumptions& layout = {}) {
  const auto object_of = [](const plan::assumptions& v) {
    json o = json::object();
    for (const auto& x : v) o[x.field] = json::parse(x.value);
    return o;
  };
  json out{{"workload", object_of(workload)}, {"system", object_of(s.assumed)}};
  if (!layout.empty()) out["layout"] = object_of(layout);
  return out;
}

//! The same as one line of the text plan.
inline void print_assumed(std::ostream& out, const plan::system& s, const plan::assumptions& workload,
                          const plan::assumptions& layout = {}) {
  out << "\nAssumed (defaults, not given): workload: " << plan::describe(workload)
      << "; system: " << plan::describe(s.assumed);
  if (!layout.empty()) out << "; layout: " << plan::describe(layout);
  out << '\n';
}

//! A parallel plan's own defaults beside its layout's: the memory headroom no flag set.
inline plan::assumptions layout_assumed(const request& a, plan::assumptions layout = {}) {
  if (a.memory_headroom == 0) plan::assume(layout, "memory_headroom", a.memory_headroom);
  return layout;
}

//! The explanation's keys of the plan JSON.
template <class Explanation>
json explanation_json(const Explanation& x) {
  return {{"binding_before", x.binding_before},
          {"binding_after", x.binding_after},
          {"trades", x.trades},
          {"rejected", x.rejected}};
}

//! Why, and the alternatives: the text plan's closing paragraphs. `before` names the baseline.
template <class Explanation>
void print_explanation(std::ostream& out, const Explanation& x, const std::string& before,
                       const std::string& alternatives) {
  out << "\nWhy:\n  before (" << before << "): " << x.binding_before << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) out << "  trade: " << tr << '\n';
  out << '\n' << alternatives << ":\n";
  for (const auto& rj : x.rejected) out << "  " << rj << '\n';
}

//! Any planner's result as JSON, in docs/plan.schema.json's shape: what the command was asked, the choice (also
//! as "predicted"), the untraded baseline, the Pareto front, the explanation and what was assumed, each candidate
//! as `one` writes it; the workload's own keys under one object named for its kind.
template <class Workload, class Result, class One>
void print_result_json(std::ostream& out, const request& a, const plan::system& s, const Workload& w, const char* kind,
                       json own, const Result& r, One one) {
  json j{{"system", s.name},
         {"workload", w.name},
         {"assumed", assumed_json(s, w.assumed)},
         {"objective", a.planning.objective},
         {"candidates", r.candidates.size()},
         {"choice", one(r.chosen())},
         {"predicted", one(r.chosen())},
         {"baseline", one(r.candidates[r.baseline])},
         {"pareto", json::array()},
         {"explanation", explanation_json(r.explanation)}};
  for (const auto i : r.pareto) j["pareto"].push_back(one(r.candidates[i]));
  j[kind] = own.is_object() ? std::move(own) : json::object();
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

//! A plan not picked from a front of its own, in the plan JSON's shape (docs/plan.schema.json): a stated layout or
//! configuration (the one candidate, its own baseline) or a dynamic plan (against the best single layout). Its
//! front is the choice alone; nothing is traded or rejected; what is its own sits under `kind`.
struct lone_plan {
  json choice, predicted, baseline;
  std::size_t candidates = 1;
  std::string binding_before, binding_after;
};

inline json lone_plan_json(const std::string& system, const std::string& workload, const std::string& objective,
                           json assumed, const lone_plan& p, const char* kind, json own) {
  return {{"system", system},
          {"workload", workload},
          {"objective", objective},
          {"assumed", std::move(assumed)},
          {"candidates", p.candidates},
          {"choice", p.choice},
          {"predicted", p.predicted},
          {"baseline", p.baseline},
          {"pareto", json::array({p.choice})},
          {"explanation",
           {{"binding_before", p.binding_before},
            {"binding_after", p.binding_after},
            {"trades", json::array()},
            {"rejected", json::array()}}},
          {kind, std::move(own)}};
}

//! A stated plan priced alone: the one candidate, its own choice, baseline and front.
inline json stated_plan_json(const std::string& system, const std::string& workload, const std::string& objective,
                             json assumed, const json& one, json predicted, const std::string& binding,
                             const char* kind, json own) {
  return lone_plan_json(system, workload, objective, std::move(assumed),
                        {one, std::move(predicted), one, 1, binding, binding}, kind, std::move(own));
}

//! Bytes per device in each of the system's tiers, by name.
inline json tier_bytes_json(const plan::system& s, const std::vector<bytes>& held) {
  json tiers = json::object();
  for (std::size_t t = 0; t < s.tiers.size(); ++t) tiers[s.tiers[t].name] = held[t].value();
  return tiers;
}

//! `trinity simulate`'s rows: each transfer the plan priced, beside its simulated time.
inline json simulated_json(const std::vector<plan::simulated_pair>& v) {
  json out = json::array();
  for (const auto& x : v)
    out.push_back({{"what", x.what},
                   {"predicted_s", x.predicted.value()},
                   {"simulated_s", x.simulated.value()},
                   {"simulated_over_predicted", x.ratio()},
                   {"events", x.events}});
  return out;
}

inline void print_simulated(std::ostream& out, const std::vector<plan::simulated_pair>& v, const std::string& fabric) {
  if (v.empty()) {
    out << "Nothing of this plan crosses the " << fabric << " fabric: it holds its state in device or host memory.\n";
    return;
  }
  table t({"on the " + fabric + " fabric", "predicted", "simulated", "simulated / predicted", "events"});
  for (const auto& x : v)
    t.add({x.what, to_string(x.predicted), to_string(x.simulated), units::detail::format_number(x.ratio()),
           std::to_string(x.events)});
  t.print(out);
}

//! A plan simulated as the command prints it: the choice, the fabric and the rows.
inline void print_simulation(std::ostream& out, const request& a, const plan::system& s, const std::string& choice,
                             const std::string& fabric, const std::vector<plan::simulated_pair>& sim) {
  if (a.json) {
    out << json{{"system", s.name}, {"choice", choice}, {"fabric", fabric}, {"simulated", simulated_json(sim)}}.dump(
               2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Plan: " << choice << "\n\n";
  print_simulated(out, sim, fabric);
}

}  // namespace trinity::workloads
