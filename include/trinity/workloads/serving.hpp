#pragma once
//! \file
//! LLM serving as a workload (workloads/workload.hpp): its JSON reader (`"type": "llm-serve"`: the model, the
//! prompt and output lengths, the latency objectives, the prefix cache's hit-rate curve), its preset, its plan
//! (with the best plan for each tier the prefix cache may live in) and its simulation on a fabric.

#include <cmath>
#include <optional>
#include <algorithm>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/block_trace.hpp>
#include <trinity/error.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/serving_configuration.hpp>
#include <trinity/plan/serving_interval.hpp>
#include <trinity/plan/serving_replay.hpp>
#include <trinity/plan/simulate_serving.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/reports/serving_time.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/training_interval.hpp>
#include <trinity/workloads/verify.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key serving_keys[] = {{"name", required},
                                       {"type", required},
                                       {"model"},
                                       {"layers"},
                                       {"hidden"},
                                       {"ffn_hidden"},
                                       {"heads"},
                                       {"kv_heads"},
                                       {"vocabulary"},
                                       {"gated_mlp"},
                                       {"tied_embeddings"},
                                       {"head_dim"},
                                       {"prompt_tokens", required},
                                       {"output_tokens", required},
                                       {"ttft_slo"},
                                       {"tpot_slo"},
                                       {"hit_rate"},
                                       {"hit_rate_bound"},
                                       {"prefill_efficiency"},
                                       {"error_budget"},
                                       {"precision"},
                                       {"stack"}};

//! The built-in serving stack a workload names; a stack of the user's own comes from a file, with --stack.
inline plan::serving_stack named_serving_stack(const object& o) {
  const std::string name = o.text("stack");
  if (auto s = plan::serving_stacks::find(name)) return *s;
  fail(o.path("stack"), "\"" + name + "\" is no built-in serving stack" +
                            trinity::detail::suggestion(name, plan::serving_stacks::names()) +
                            "; a stack of your own is a file `trinity fit` writes from your serving runs, given "
                            "with --stack FILE");
}

//! The prefix cache's hit rate, or none: without hit_rate no prefix is reused, and no prefix cache is planned
//! (its bound means nothing then).
inline void read_prefix_reuse(const object& o, plan::serving_workload& w) {
  if (o.has("hit_rate")) {
    w.hit_rate = read_power_law(o,
                                "the prefix cache's power-law hit rate against bytes of 16-bit KV (trinity cache "
                                "replay --format mooncake fits it)");
    o.get("hit_rate_bound", w.hit_rate_bound, w.assumed);
    return;
  }
  if (o.has("hit_rate_bound")) fail("hit_rate_bound", "bounds a hit_rate curve; give hit_rate, or drop it");
  w.hit_rate = plan::no_prefix_reuse();
  w.hit_rate_bound = 0;
  plan::assume(w.assumed, "hit_rate", "none (no prefix reuse)");
}

inline plan::serving_workload read_serving(const json& j, const plan::system& s) {
  const object o(j, "", serving_keys, "an llm-serve workload");
  plan::serving_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  each([&] {
    w.shape = read_shape(o, &w.assumed);
    if (w.shape.moe())
      fail("model",
           "is a mixture of experts; the serving model prices dense models only (its decode streams every "
           "weight). Fix: a dense model");
  });
  each([&] { w.prompt_tokens = o.number("prompt_tokens"); });
  each([&] { w.output_tokens = o.number("output_tokens"); });
  // An objective left out is none: the plan judges what it was given and lists what it took.
  read_objectives(o, {{"ttft_slo", &w.ttft_slo}, {"tpot_slo", &w.tpot_slo}}, w.assumed, each);
  each([&] { read_prefix_reuse(o, w); });
  // Left out, prefill runs at the device's calibrated GEMM curve: a measurement, not an assumption.
  if (o.has("prefill_efficiency")) each([&] { w.prefill_efficiency = o.positive_number("prefill_efficiency", 1); });
  each([&] { o.get("error_budget", w.error_budget, w.assumed); });
  if (o.has("precision"))
    each([&] { w.precision = precision_name(o, "precision"); });
  else
    plan::assume(w.assumed, "precision", w.precision);
  if (o.has("stack"))
    each([&] { w.stack = named_serving_stack(o); });
  else
    plan::assume(w.assumed, "stack", w.stack.name);
  // A refused field kept its default, which is valid: what the plan's checks refuse is another field.
  each([&] { (void)validated(w, s); });
  each.raise();
  return w;
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

// The system as a serving plan states it: a device with no serving calibration (the data sheet's ideal) is an
// assumption of the plan's, listed with the system's.
inline plan::system as_serving_states(plan::system s) {
  if (s.device.serving == model::serving_calibration{})
    plan::assume(s.assumed, "device.serving", "uncalibrated (the full HBM bandwidth, no overheads)");
  return s;
}

//! How sure a serving prediction is (plan/serving_interval.hpp), as predicted.interval.
inline json serving_interval_json(const plan::system& s, const plan::serving_workload& w, const plan::serving_cost& c) {
  const auto i = plan::serving_intervals_of(s, w.stack, c.ttft.value(), c.tpot.value(), c.tokens_per_second);
  return {{"ttft_s", bounds_json(i.ttft)},
          {"tpot_s", bounds_json(i.tpot)},
          {"output_tokens_per_device_second", bounds_json(i.throughput)},
          {"coverage", plan::detail::held_out_coverage},
          {"judged_on", plan::serving_band_source(w.stack)},
          {"unmeasured", i.unmeasured ? json::array({"serving"}) : json::array()}};
}

//! The same as a line of text under the prediction's table.
inline void print_serving_interval(std::ostream& out, const plan::system& s, const plan::serving_workload& w,
                                   const plan::serving_cost& c) {
  const auto i = plan::serving_intervals_of(s, w.stack, c.ttft.value(), c.tpot.value(), c.tokens_per_second);
  const auto range = [](const std::optional<plan::interval>& x, auto unit) {
    return x ? to_string(decltype(unit){x->low}) + " to " + to_string(decltype(unit){x->high}) : std::string("unknown");
  };
  out << "interval (" << units::detail::format_number(plan::detail::held_out_coverage * 100)
      << "%): time to first token " << range(i.ttft, seconds{}) << ", time per output token "
      << range(i.tpot, seconds{}) << ", throughput "
      << (i.throughput ? units::detail::format_number(i.throughput->low) + " to " +
                             units::detail::format_number(i.throughput->high)
                       : std::string("unknown"))
      << " output tokens per device-second; the band of " << plan::serving_band_source(w.stack)
      << (i.unmeasured ? ", widened: the device's serving constants were not fitted on it" : "") << '\n';
}

inline json serving_json(const plan::serving_evaluated& e, const plan::serving_plan_result& r, const plan::system& s,
                         const plan::serving_workload& w) {
  const auto& c = e.cost;
  const auto& p = e.plan;
  const json tiers = tier_bytes_json(s, c.tier_bytes);
  return {{"tensor_parallel", p.tensor_parallel},
          {"batch", p.batch},
          {"kv_precision", r.codecs[p.codec].name == "identity" ? std::string("bf16") : r.codecs[p.codec].name},
          {"cache_bytes", p.cache.value()},
          {"cache_tier", p.cache > bytes{} ? json(s.tiers[p.cache_tier].name) : json(nullptr)},
          {"hit_rate", c.hit_rate},
          {"ttft_s", c.ttft.value()},
          {"ttft_in_batch_s", c.ttft_batch.value()},
          {"tpot_s", c.tpot.value()},
          {"time_parts_s", {{"prefill", c.prefill.value()}, {"cache_load", c.load.value()}}},
          {"output_tokens_per_device_second", c.tokens_per_second},
          {"device_seconds_per_token", c.total.time.value()},
          {"energy_j_per_token", c.total.energy.value()},
          {"dollars_per_token", c.dollars},
          {"compute_flops_per_token", c.total.compute.value()},
          {"bytes_per_tier", tiers},
          {"relative_error", c.error},
          {"fits", e.fits()},
          {"interval", serving_interval_json(s, w, c)}};
}

// What each tier buys: the best plan with the prefix cache there, beside the best without one.
inline void print_tier_table(std::ostream& out, const plan::serving_plan_result& r, const plan::system& s,
                             const plan::tier_choices& by_tier) {
  out << "\nWhat each tier buys (the best plan with the prefix cache there):\n";
  table b({"cache in", "plan", "hit rate", "TTFT in batch", "tokens/device-s"});
  const auto add = [&](const std::string& where, std::optional<std::size_t> i) {
    if (!i) return b.add({where, "none fits", "", "", ""});
    const auto& e = r.candidates[*i];
    b.add({where, plan::describe(e.plan, s, r.codecs), units::detail::format_number(e.cost.hit_rate),
           to_string(e.cost.ttft_batch), units::detail::format_number(e.cost.tokens_per_second)});
  };
  add("(no cache)", by_tier.no_cache);
  for (std::size_t i = 0; i < s.tiers.size(); ++i) add(s.tiers[i].name, by_tier.by_tier[i]);
  b.print(out);
}

inline void plan_serving(const request& a, const plan::system& s, plan::serving_workload& w, std::ostream& out) {
  const auto r = plan_serving_with(s, w, a.planning);
  const auto by_tier = plan::best_by_cache_tier(r, s.tiers.size(), objective_of(a.planning));
  const auto& chosen = r.chosen();
  const auto time = reports::serving_time_of(s, w, chosen.plan, r.codecs.at(chosen.plan.codec), chosen.cost.hit_rate);
  if (a.json) {
    json tiers = json::object();
    for (std::size_t t = 0; t < s.tiers.size(); ++t)
      tiers[s.tiers[t].name] =
          by_tier.by_tier[t] ? serving_json(r.candidates[*by_tier.by_tier[t]], r, s, w) : json(nullptr);
    print_result_json(out, a, as_serving_states(s), w, "serving",
                      {{"best_with_cache_in", tiers},
                       {"best_without_cache",
                        by_tier.no_cache ? serving_json(r.candidates[*by_tier.no_cache], r, s, w) : json(nullptr)},
                       {"where_the_time_goes", reports::to_json(time)}},
                      r, [&](const plan::serving_evaluated& e) { return serving_json(e, r, s, w); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& p = r.chosen().plan;
  out << "Plan for " << w.name << " on " << s.name << " (" << s.device.count << " x " << s.device.name << "), best "
      << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(p, s, r.codecs)
      << "\n\n";
  table t({"resource", "predicted"});
  t.add({"time to first token", to_string(c.ttft) + " on an idle replica (prefill " + to_string(c.prefill) +
                                    ", cached prefix loaded " + to_string(c.load) + ")"});
  t.add({"  in a batch of " + std::to_string(p.batch),
         to_string(c.ttft_batch) + " (a request arriving into the static batch the throughput is priced at); " +
             "objective " + plan::objective_text(w.ttft_slo)});
  t.add({"time per output token", to_string(c.tpot) + " at batch " + std::to_string(p.batch) + "; objective " +
                                      plan::objective_text(w.tpot_slo)});
  t.add({"throughput", units::detail::format_number(c.tokens_per_second) + " output tokens per device-second (" +
                           std::to_string(s.device.count / p.tensor_parallel) + " replicas of " +
                           std::to_string(p.tensor_parallel) + ")"});
  if (c.error > 0)
    t.add({"KV cache error", "as " + r.codecs[p.codec].name + ", relative error up to " +
                                 units::detail::format_number(c.error) + ", within the error budget of " +
                                 units::detail::format_number(w.error_budget)});
  t.add({"prefix hit rate", units::detail::format_number(c.hit_rate) + " of a prompt of " +
                                std::to_string(std::lround(w.prompt_tokens)) + " tokens"});
  t.add({"compute", to_string(flops{c.total.compute}) + " per output token"});
  t.add({"energy", to_string(c.total.energy) + " per output token"});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity) + " per device"});
  t.print(out);
  print_serving_interval(out, s, w, c);
  print_assumed(out, as_serving_states(s), w.assumed);
  out << "\nWhy:\n  before (" << plan::describe(r.candidates[r.baseline].plan, s, r.codecs) << "): " << x.binding_before
      << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) out << "  trade: " << tr << '\n';
  out << "\nWhere the chosen plan's time goes:\n";
  reports::print(out, time);
  if (!plan::prefix_reuse(w)) {
    out << "\nNo prefix cache planned: the workload gives no hit_rate (no prefix reuse).\n";
  } else {
    print_tier_table(out, r, s, by_tier);
  }
  out << "\nAlternatives one choice away:\n";
  for (const auto& rj : x.rejected) out << "  " << rj << '\n';
  out << "\nPareto front (device-time per token, energy, device memory, TTFT, dollars): " << r.pareto.size()
      << " plans\n";
}

// `trinity plan --parallelism tp=..,batch=..,weights=..,kv=..[,prefix=TIER:SIZE]`: one configuration priced.
inline void price_serving_configuration(const request& a, const plan::system& s, plan::serving_workload& w,
                                        std::ostream& out) {
  if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), "goes with a training workload's layout search");
  if (!a.plot.empty())
    throw bad_flag("--plot", a.plot, "draws a search's plans; --parallelism prices one configuration");
  refuse_memory_headroom(a);
  apply_serving_flags(w, a.planning);
  plan::priced_configuration c;
  try {
    c = plan::price_configuration(s, w, a.parallelism, "--parallelism");
  } catch (const invalid_input& e) {
    if (e.field() != "--parallelism") throw;
    throw bad_flag("--parallelism", a.parallelism, e.problem());
  }
  const auto& p = c.configuration.plan;
  const auto& k = c.cost;
  const double replicas = static_cast<double>(s.device.count / p.tensor_parallel);
  const auto time = reports::serving_time_of(s, c.workload, p, c.codecs.at(p.codec), k.hit_rate);
  if (a.json) {
    // The plan JSON every plan has (docs/plan.schema.json): a stated configuration is the one candidate, its own
    // choice, baseline and front; what is its own sits under "serving_configuration".
    const json one{{"parallelism", a.parallelism},
                   {"device_seconds_per_token", k.total.time.value()},
                   {"ttft_in_batch_s", k.ttft_batch.value()},
                   {"fits", c.violation.empty()}};
    const std::string binding = c.violation.empty() ? "as stated: nothing traded" : c.violation;
    const json j = stated_plan_json(
        s.name, w.name, a.planning.objective, assumed_json(as_serving_states(s), c.workload.assumed), one,
        json{{"ttft_s", k.ttft.value()},
             {"ttft_in_batch_s", k.ttft_batch.value()},
             {"tpot_s", k.tpot.value()},
             {"output_tokens_per_device_second", k.tokens_per_second},
             {"output_tokens_per_second", k.replica_tokens_per_second},
             {"device_bytes", k.tier_bytes[0].value()},
             {"hit_rate", k.hit_rate},
             {"bytes_per_tier", tier_bytes_json(s, k.tier_bytes)},
             {"interval", serving_interval_json(s, c.workload, k)}},
        binding, "serving_configuration",
        json{{"parallelism", a.parallelism},
             {"configuration",
              {{"tp", p.tensor_parallel},
               {"batch", p.batch},
               {"weights", c.configuration.weights},
               {"kv", c.configuration.kv},
               {"prefix_cache_bytes", p.cache.value()},
               {"prefix_cache_tier", p.cache > bytes{} ? json(s.tiers[p.cache_tier].name) : json(nullptr)}}},
             {"batching", "static: a batch's prompts prefilled together, then decoded together"},
             {"where_the_time_goes", reports::to_json(time)},
             {"fits", c.violation.empty()},
             {"violation", c.violation.empty() ? json(nullptr) : json(c.violation)}});
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  out << "Serving " << w.name << " on " << s.name << " (" << s.device.count << " x " << s.device.name
      << "), priced as given: " << a.parallelism << "\n\n";
  table t({"figure", "predicted"});
  t.add({"time to first token", to_string(k.ttft) + " (a request of " + std::to_string(std::lround(w.prompt_tokens)) +
                                    " tokens on an idle replica)"});
  t.add({"  in a batch of " + std::to_string(p.batch),
         to_string(k.ttft_batch) + " (a request arriving into the static batch the throughput is priced at)"});
  t.add({"time per output token", to_string(k.tpot) + " at batch " + std::to_string(p.batch)});
  t.add({"throughput", units::detail::format_number(k.tokens_per_second) + " output tokens per device-second; " +
                           units::detail::format_number(k.replica_tokens_per_second) + " per replica of " +
                           std::to_string(p.tensor_parallel) + " (" + units::detail::format_number(replicas) +
                           (replicas == 1 ? " replica" : " replicas") + "); static batches"});
  t.add({s.tiers[0].name, to_string(k.tier_bytes[0]) + " of " + to_string(s.tiers[0].capacity) + " per device"});
  t.print(out);
  print_serving_interval(out, s, c.workload, k);
  out << (c.violation.empty() ? "\nFits every constraint.\n" : "\nDoes not fit: " + c.violation + "\n");
  print_assumed(out, as_serving_states(s), c.workload.assumed);
  out << "\nWhere its time goes:\n";
  reports::print(out, time);
}

// An llm-serve plan on the fabric: the trace's KV loads from the fabric's memory tier (the chosen plan's, or the
// best plan's with its cache there) and a prefill's tensor-parallel all-reduces.
inline void simulate_serving(const request& a, const plan::system& s, plan::serving_workload& w, std::ostream& out) {
  const auto r = plan_serving_with(s, w, a.planning);
  auto f = plan::fabric_for(s, s.device.count);  // every replica, in turn
  if (!f)
    throw usage_error("system: " + s.name +
                      " names no simulated fabric; add \"fabric\" (trinity fabric --help "
                      "lists them) and \"fabric_memory_tier\"");
  std::size_t pick = r.choice;
  std::string note;
  const auto& chosen = r.chosen().plan;
  if (!(chosen.cache > bytes{} && s.tiers[chosen.cache_tier].name == f->memory_tier)) {
    std::size_t tier = s.tiers.size();
    for (std::size_t i = 0; i < s.tiers.size(); ++i)
      if (s.tiers[i].name == f->memory_tier) tier = i;
    const auto best = plan::best_by_cache_tier(r, s.tiers.size(), objective_of(a.planning));
    if (tier < s.tiers.size() && best.by_tier[tier]) {
      pick = *best.by_tier[tier];
      note = "The chosen plan keeps its prefix cache " +
             (chosen.cache > bytes{} ? "in " + s.tiers[chosen.cache_tier].name : std::string("nowhere")) +
             ", off the fabric's memory nodes; the loads are those of the best plan with it in " + f->memory_tier +
             ": " + plan::describe(r.candidates[pick].plan, s, r.codecs);
    } else {
      note = "No plan that fits keeps its prefix cache in " +
             (f->memory_tier.empty() ? "a fabric memory tier" : f->memory_tier) + ": no KV load crosses the fabric";
    }
  }
  const auto& e = r.candidates[pick];
  std::vector<plan::prefix_load> loads;
  std::size_t requests = 0;
  const bool on_fabric = e.plan.cache > bytes{} && s.tiers[e.plan.cache_tier].name == f->memory_tier;
  if (!a.trace.empty() && on_fabric) {
    std::vector<cache::block_request> trace;
    try {
      trace = io::read_block_trace(a.trace);
    } catch (const invalid_input& x) {
      throw usage_error(std::string("--trace ") + x.what());
    }
    requests = trace.size();
    loads = plan::replay_serving(s, w, e.plan, r.codecs, trace).loads;
  }
  const auto sim = planned([&] { return plan::simulate(s, w, e, r.codecs, loads, *f); });
  if (a.json) {
    out << json{{"system", s.name},
                {"choice", plan::describe(r.chosen().plan, s, r.codecs)},
                {"simulated_plan", plan::describe(e.plan, s, r.codecs)},
                {"fabric", f->name},
                {"trace", a.trace.empty() ? json(nullptr) : json(a.trace)},
                {"requests", requests},
                {"note", note},
                {"simulated", simulated_json(sim)}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return;
  }
  out << "Plan: " << plan::describe(r.chosen().plan, s, r.codecs) << '\n';
  if (!note.empty()) out << note << '\n';
  if (a.trace.empty() && on_fabric)
    out << "No --trace given: the KV loads are not replayed (give a Mooncake-format trace, e.g. "
           "docs/examples/mooncake_conversation_excerpt.jsonl).\n";
  else if (on_fabric)
    out << "Replayed " << a.trace << " (" << requests << " requests) through the plan's prefix cache; " << loads.size()
        << " requests loaded a cached prefix.\n";
  out << '\n';
  print_simulated(out, sim, f->name);
}

// A serving plan: its prefix cache, at the chosen capacity, tier and KV precision, replayed for real through
// cache::tiered_prefix_cache on a block-hashed trace, beside what the planner priced from the workload's curve.
inline void verify_serving(const verify_request& a, const plan::system& s, plan::serving_workload& w,
                           std::ostream& out) {
  if (a.trace.empty())
    throw usage_error(
        "verify of an llm-serve plan replays a block-hashed trace: give --trace FILE.jsonl (Mooncake's "
        "format; docs/examples/mooncake_conversation_excerpt.jsonl is an excerpt)");
  if (!a.embeddings.empty()) throw bad_flag("--embeddings", a.embeddings, "is for a diffusion plan's trace");
  const auto r = plan_serving_with(s, w, a.planning);
  const auto& c = r.chosen();
  if (c.plan.cache <= bytes{}) {
    if (a.json)
      out << json{{"plan", plan::describe(c.plan, s, r.codecs)}, {"rows", json::array()}}.dump(
                 2, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
    else
      out << "Plan: " << plan::describe(c.plan, s, r.codecs) << "\nNo prefix cache was chosen: nothing to replay.\n";
    return;
  }
  std::vector<cache::block_request> trace;
  try {
    trace = io::read_block_trace(a.trace);
  } catch (const invalid_input& x) {
    throw usage_error(std::string("--trace ") + x.what());
  }
  std::cerr << "trinity verify: replaying " << trace.size() << " requests through the plan's prefix cache...\n";
  const auto m = plan::replay_serving(s, w, c.plan, r.codecs, trace);
  const auto p = plan::predicted_replay(w, c, r.codecs, m.bound);
  const std::string where = s.tiers[c.plan.cache_tier].name;
  std::vector<verified_row> rows{
      {"prompt tokens served from the cache" +
           std::string(m.bound < c.cost.hit_rate ? " (capped at the trace's bound)" : ""),
       p.hit_rate, m.measured.hit_rate},
      {"prefill FLOPs saved, of the whole prefill", p.prefill_saved, m.measured.prefill_saved},
  };
  if (c.plan.cache_tier != 0)
    rows.push_back({"KV loaded from " + where + " per prompt token (bytes)", p.loaded_per_token.value(),
                    m.measured.loaded_per_token.value()});
  bool all = true;
  for (const auto& x : rows) all &= x.within(0.2);
  if (a.json) {
    const json jr = rows_json(rows, 0.2);
    out << json{{"plan", plan::describe(c.plan, s, r.codecs)},
                {"trace", a.trace},
                {"requests", m.requests},
                {"capacity_blocks", m.capacity_blocks},
                {"block_bytes", m.block_bytes.value()},
                {"trace_bound", m.bound},
                {"planned_hit_rate", c.cost.hit_rate},
                {"served_tokens", m.served_tokens},
                {"served_blocks", m.served_blocks},
                {"recomputed_blocks", m.recomputed_blocks},
                {"loaded_bytes", m.loaded.value()},
                {"prefill_flops", m.prefill.value()},
                {"prefill_flops_saved", m.saved.value()},
                {"rows", jr},
                {"all_within_20_percent", all}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    out << "Plan: " << plan::describe(c.plan, s, r.codecs)
        << "\nReplayed here through cache::tiered_prefix_cache: " << a.trace << " (" << m.requests
        << " requests), the cache as " << m.capacity_blocks << " blocks of " << to_string(m.block_bytes) << " in "
        << where << ".\nServed " << m.served_blocks << " blocks, recomputed " << m.recomputed_blocks
        << " cached ones where that was faster, loaded " << to_string(m.loaded) << ", saved " << to_string(m.saved)
        << " of " << to_string(m.prefill) << " of prefill.\n\n";
    table t({"mechanism", "predicted", "measured", "measured / predicted", "within 20%"});
    for (const auto& x : rows)
      t.add({x.mechanism, units::detail::format_number(x.predicted), units::detail::format_number(x.measured),
             ratio_text(x), x.within(0.2) ? "yes" : "NO"});
    t.print(out);
    out << "\nThe prediction is for a prompt of the workload's mean length (" << w.prompt_tokens
        << " tokens) at the hit rate its curve gives the plan's bytes ("
        << units::detail::format_number(c.cost.hit_rate) << "), capped at this trace's own bound ("
        << units::detail::format_number(m.bound) << " at infinite capacity); the replay's prompts are the trace's.\n";
  }
  if (!all) throw usage_error("a measured figure is more than 20% from the prediction (see the table)");
}

}  // namespace detail

//! LLM serving with a prefix cache (plan/serving.hpp): tensor-parallel degree, batch, KV precision, and the
//! cache's size and tier, against time-to-first-token and per-token objectives. `"type": "llm-serve"`.
struct serving {
  static constexpr std::string_view type = "llm-serve";
  using description = plan::serving_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_serving(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"llama3-70b-serve"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_serving(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    if (!a.parallelism.empty()) return detail::price_serving_configuration(a, s, w, out);
    refuse_layout_flags(a, "plan");
    detail::plan_serving(a, s, w, out);
  }
  //! A trace's KV loads from the fabric's memory tier and a prefill's tensor-parallel all-reduces.
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    detail::simulate_serving(a, s, w, out);
  }
  //! The chosen prefix cache replayed here through cache::tiered_prefix_cache on a block-hashed trace.
  static void verify(const verify_request& a, const plan::system& s, description& w, std::ostream& out) {
    detail::verify_serving(a, s, w, out);
  }
};

}  // namespace trinity::workloads
