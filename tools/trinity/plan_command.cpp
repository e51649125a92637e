// trinity plan: a system and a workload in, the best trade-off out, with the
// Pareto front it was picked from and why. A system or workload is a preset
// name or a JSON file (docs/planning.md has the schema); every bad field is
// named by its path: `tiers[2].capacity: -1GB must be positive`.

#include "cli.hpp"

#include <trinity/io/parallel_layout.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/parallel_planner.hpp>

#include <trinity/io/diffusion_trace.hpp>
#include <trinity/io/system.hpp>
#include <trinity/io/workload.hpp>

#include <trinity/model/fit.hpp>
#include <trinity/io/block_trace.hpp>
#include <trinity/plan.hpp>
#include <trinity/plan/simulate_parallel.hpp>
#include <trinity/plan/simulate_serving.hpp>
#include <trinity/presets.hpp>
#include <trinity/units/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <variant>

namespace trinity::cli {
namespace {

using json = nlohmann::json;

plan::system read_system(const std::string& arg) {
  if (auto s = plan::presets::find(arg)) return *s;
  const auto names = plan::presets::names();
  return from_file(arg, "--system", names, [](const json& j) { return io::read_system(j); });
}

any_workload read_workload(const std::string& arg, const plan::system& s) {
  // A preset's ranks follow the system it is paired with: every device, as a JSON workload without them.
  if (auto w = plan::presets::find_workload(arg)) {
    if (!w->data_parallel) plan::assume(w->assumed, "data_parallel", s.device.count);
    return *w;
  }
  if (auto w = plan::presets::find_diffusion(arg)) return *w;
  if (auto w = plan::presets::find_edge(arg)) return *w;
  if (auto w = plan::presets::find_serving(arg)) return *w;
  if (auto w = plan::presets::find_hetero_train(arg)) return *w;
  if (auto w = plan::presets::find_data_curation(arg)) {
    if (!w->devices) plan::assume(w->assumed, "devices", s.device.count);
    return *w;
  }
  std::vector<std::string_view> names = plan::presets::workload_names();
  names.push_back("diffusion-dit-12b");
  names.push_back("edge-video-analytics");
  names.push_back("llama3-70b-serve");
  names.push_back("wan22-t2v-hetero");
  names.push_back("t2v-curation");
  return from_file(arg, "--workload", names, [&](const json& j) -> any_workload {
    auto file = io::read_workload(j, s, std::filesystem::path(arg).parent_path());
    if (!file.trace) return file.workload;
    return io::fit_trace(std::get<plan::diffusion_workload>(file.workload), *file.trace, s,
                         [](const std::string& what) { std::cerr << "trinity: " << what << '\n'; });
  });
}

struct plan_args {
  std::string system = "gb200-nvl72-cxl", workload = "llm-70b-train", plot, trace, parallelism;
  std::size_t gpus = 0;  // the layout search's GPUs; 0: the workload's ranks
  double memory_headroom = 0;  // fraction of device memory a parallel layout leaves free
  planning_flags planning;
  bool json = false;
};

// Every feasible candidate as (x, y), the Pareto front among them and the choice, drawn with gnuplot.
struct plot_point {
  double x, y;
};
void draw_front(const std::string& path, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                const std::vector<plot_point>& feasible, std::vector<plot_point> front, plot_point chosen,
                const std::string& what = "plans", const std::string& resources = "time, energy, memory, bytes sent") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << "trinity plan: gnuplot is not installed (Debian: gnuplot-nox); no picture drawn\n";
    return;
  }
  // The front of the two resources drawn, as a staircase: the 4-D front's members need not lie on it.
  std::vector<plot_point> stairs = feasible;
  std::sort(stairs.begin(), stairs.end(), [](auto& a, auto& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  std::vector<plot_point> front2;
  for (const auto& p : stairs)
    if (front2.empty() || p.y < front2.back().y) front2.push_back(p);
  const std::string script = path + ".gp";
  std::ofstream gp(script);
  gp << "set terminal pngcairo size 1000,650 noenhanced\nset output '" << path << "'\nset logscale xy\nset grid\n"
     << "set key below\nset xlabel '" << xlabel << "'\nset ylabel '" << ylabel << "'\nset title '" << title << "'\n"
     << "plot '-' using 1:2 with points pt 7 ps 0.8 lc rgb '#aaaaaa' title 'feasible " << what << "', "
     << "'-' using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'time-memory front', "
     << "'-' using 1:2 with points pt 6 ps 1.5 lw 2 lc rgb '#2ca02c' title 'Pareto front (" << resources << ")', "
     << "'-' using 1:2 with points pt 3 ps 3 lw 3 lc rgb '#d62728' title 'chosen'\n";
  for (const auto& p : feasible) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n";
  for (const auto& p : front2) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n";
  for (const auto& p : front) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n" << chosen.x << ' ' << chosen.y << "\ne\n";
  gp.close();
  if (std::system(("gnuplot '" + script + "' 2>/dev/null").c_str()) != 0)
    std::cerr << "trinity plan: gnuplot failed; its script is " << script << '\n';
  else {
    std::filesystem::remove(script);
    std::cerr << "trinity plan: wrote " << path << '\n';
  }
}

// What the plan took by default (plan/assumed.hpp): {"workload": {field: value}, "system": {...}} and, for a
// parallel layout, the layout keys and flags it defaulted.
json assumed_json(const plan::system& s, const plan::assumptions& workload, const plan::assumptions& layout = {}) {
  const auto object_of = [](const plan::assumptions& v) {
    json o = json::object();
    for (const auto& x : v) o[x.field] = json::parse(x.value);
    return o;
  };
  json out{{"workload", object_of(workload)}, {"system", object_of(s.assumed)}};
  if (!layout.empty()) out["layout"] = object_of(layout);
  return out;
}

// The same as one line of the text plan.
void print_assumed(const plan::system& s, const plan::assumptions& workload, const plan::assumptions& layout = {}) {
  std::cout << "\nAssumed (defaults, not given): workload: " << plan::describe(workload)
            << "; system: " << plan::describe(s.assumed);
  if (!layout.empty()) std::cout << "; layout: " << plan::describe(layout);
  std::cout << '\n';
}

// A parallel plan's own defaults beside its layout's: the memory headroom no flag set.
plan::assumptions layout_assumed(const plan_args& a, plan::assumptions layout = {}) {
  if (a.memory_headroom == 0) plan::assume(layout, "memory_headroom", a.memory_headroom);
  return layout;
}

// Any planner's result as JSON, in docs/plan.schema.json's shape: what the command was asked, the choice (also
// as "predicted"), the untraded baseline, the Pareto front, the explanation and what was assumed, each candidate
// as `one` writes it; the workload's own keys under one object named for its kind.
template <class Workload, class Result, class One>
void print_result_json(const plan_args& a, const plan::system& s, const Workload& w, const char* kind, json own,
                       const Result& r, One one) {
  const auto& x = r.explanation;
  json out{{"system", s.name}, {"workload", w.name}, {"assumed", assumed_json(s, w.assumed)},
           {"objective", a.planning.objective},
           {"candidates", r.candidates.size()}, {"choice", one(r.chosen())}, {"predicted", one(r.chosen())},
           {"baseline", one(r.candidates[r.baseline])}, {"pareto", json::array()},
           {"explanation", {{"binding_before", x.binding_before}, {"binding_after", x.binding_after},
                            {"trades", x.trades}, {"rejected", x.rejected}}}};
  for (const auto i : r.pareto) out["pareto"].push_back(one(r.candidates[i]));
  out[kind] = own.is_object() ? std::move(own) : json::object();
  std::cout << out.dump(2) << '\n';
}

// Bytes per device in each of the system's tiers, by name.
json tier_bytes_json(const plan::system& s, const std::vector<bytes>& held) {
  json tiers = json::object();
  for (std::size_t t = 0; t < s.tiers.size(); ++t) tiers[s.tiers[t].name] = held[t].value();
  return tiers;
}

json cost_json(const plan::evaluated& e, const plan::plan_result& r, const plan::system& s) {
  const auto& c = e.cost;
  const json tiers = tier_bytes_json(s, c.tier_bytes);
  return {{"codec", r.codecs[e.plan.codec].name},
          {"zero_stage", e.plan.stage},
          {"offload_tier", e.plan.offload_tier ? json(s.tiers[e.plan.offload_tier].name) : json(nullptr)},
          {"recompute", e.plan.recompute},
          {"step_time_s", c.total.time.value()},
          {"energy_j", c.total.energy.value()},
          {"dollars", c.dollars},
          {"compute_flops", c.total.compute.value()},
          {"bytes_per_tier", tiers},
          {"interconnect_bytes", c.link_bytes.value()},
          {"offload_bytes", c.offload_bytes.value()},
          {"time_parts_s",
           {{"compute", c.compute_time.value()}, {"interconnect", c.comm_time.value()},
            {"codec", c.codec_time.value()}, {"offload", c.offload_time.value()}}},
          {"relative_error", c.error},
          {"fits", e.fits()}};
}

json cache_json(const plan::cache_evaluated& e, const plan::system& s) {
  const json tiers = tier_bytes_json(s, e.cost.tier_bytes);
  return {{"cache_bytes", e.plan.capacity.value()},
          {"cache_tier", e.plan.capacity > bytes{} ? json(s.tiers[e.plan.tier].name) : json(nullptr)},
          {"hit_rate", e.cost.hit_rate},
          {"request_time_s", e.cost.total.time.value()},
          {"energy_j", e.cost.total.energy.value()},
          {"dollars", e.cost.dollars},
          {"compute_flops", e.cost.compute.value()},
          {"bytes_per_tier", tiers},
          {"time_parts_s", {{"compute", e.cost.compute_time.value()}, {"cache_reads", e.cost.read_time.value()},
                            {"cache_writes", e.cost.write_time.value()}}},
          {"fits", e.fits()}};
}

void run_diffusion(const plan_args& a, const plan::system& s, const plan::diffusion_workload& w) {
  const auto r = plan::plan_diffusion(s, w, options_of(a.planning));
  const auto& x = r.explanation;
  if (a.json) {
    print_result_json(a, s, w, "diffusion", {}, r, [&](const plan::cache_evaluated& e) { return cache_json(e, s); });
    return;
  }
  const auto& c = r.chosen().cost;
  std::cout << "Plan for " << w.name << " on " << s.name << " (per " << s.device.name << "), best " << a.planning.objective
            << " of " << r.candidates.size() << " candidates:\n\n  " << plan::describe(r.chosen().plan, s, r.codecs) << "\n\n";
  table t({"resource", "predicted per request"});
  t.add({"request time", to_string(c.total.time) + " (compute " + to_string(c.compute_time) + ", cache reads " +
                             to_string(c.read_time) + ", writes " + to_string(c.write_time) + ")"});
  t.add({"hit rate", units::detail::format_number(c.hit_rate) + " (reusing " + std::to_string(w.reuse_depth) +
                         " of " + std::to_string(w.steps) + " steps)"});
  t.add({"compute", to_string(c.compute)});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars)});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity)});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (no cache): " << x.binding_before << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives one choice away:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (time, energy, cache bytes): " << r.pareto.size() << " plans\n";
}

json edge_json(const plan::edge_evaluated& e, const plan::edge_plan_result& r, const plan::edge_workload& w) {
  const auto& c = e.cost;
  const char* where = e.plan.where == plan::placement_site::device ? "device"
                      : e.plan.where == plan::placement_site::split ? "split" : "server";
  return {{"placement", where},
          {"codec", e.plan.where == plan::placement_site::split ? json(r.codecs[e.plan.option].name) : json(nullptr)},
          {"encoding", e.plan.where == plan::placement_site::server ? json(w.encodings[e.plan.option].name) : json(nullptr)},
          {"latency_s", c.total.time.value()},
          {"energy_j", c.total.energy.value()},
          {"dollars", c.dollars},
          {"sent_bytes", c.sent.value()},
          {"device_flops", c.device_flops.value()},
          {"server_flops", c.server_flops.value()},
          {"device_memory_bytes", c.total.memory.value()},
          {"time_parts_s", {{"device", c.device_time.value()}, {"uplink", c.uplink_time.value()}, {"server", c.server_time.value()}}},
          {"relative_error", c.error},
          {"fits", e.fits()}};
}

void run_edge(const plan_args& a, const plan::system& s, const plan::edge_workload& w) {
  plan::edge_plan_result r;
  try {
    r = plan::plan_edge(s, w, plan::default_feature_codecs(), options_of(a.planning));
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  const auto& x = r.explanation;
  if (a.json) {
    print_result_json(a, s, w, "edge", {}, r, [&](const plan::edge_evaluated& e) { return edge_json(e, r, w); });
    return;
  }
  const auto& c = r.chosen().cost;
  std::cout << "Plan for " << w.name << " on " << s.name << " (" << s.device.name << " to " << s.server->name << " over "
            << s.interconnect.name << "), best " << a.planning.objective << " of " << r.candidates.size()
            << " candidates:\n\n  " << plan::describe(r.chosen().plan, w, r.codecs) << "\n\n";
  table t({"resource", "predicted per frame"});
  t.add({"latency", to_string(c.total.time) + " (device " + to_string(c.device_time) + ", uplink " + to_string(c.uplink_time) +
                        ", server " + to_string(c.server_time) + ")"});
  t.add({"uplink", to_string(c.sent) + " (" + to_string(c.sent / w.frame_interval()) + " of " +
                       to_string(s.interconnect.bandwidth) + ")"});
  t.add({"compute", to_string(c.device_flops) + " on the device, " + to_string(c.server_flops) + " on the server"});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars) + " (" + plan::format_dollars(c.dollars * w.frames_per_second * 3600) +
                     " per hour of stream)"});
  t.add({s.tiers[0].name, to_string(c.tier_bytes[0]) + " of " + to_string(s.tiers[0].capacity)});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (" << plan::describe(r.candidates[r.baseline].plan, w, r.codecs) << "): " << x.binding_before
            << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (latency, energy, bytes sent, device memory, dollars): " << r.pareto.size() << " plans\n";
}

json hetero_train_json(const plan::hetero_train_evaluated& e) {
  const auto& c = e.cost;
  return {{"disaggregated", e.plan.disaggregated},
          {"producers", e.plan.producers},
          {"streams", e.plan.streams},
          {"samples_per_second", c.samples_per_second},
          {"time_per_sample_s", c.total.time.value()},
          {"energy_per_sample_j", c.total.energy.value()},
          {"dollars_per_sample", c.dollars},
          {"consumer_utilization", c.utilization},
          {"bubble_fraction", c.bubble},
          {"streams_carry_bytes_per_second", c.carried.value()},
          {"link_busy", c.link_busy}};
}

// A workload that sends nothing through a codec: the codec and link flags mean nothing to it.
void refuse_codec_flags(const plan_args& a, const std::string& type, const std::string& why) {
  if (!a.planning.profile.empty())
    throw bad_flag("--profile", a.planning.profile, "is for a training workload's gradient codecs, not " + type);
  if (!a.planning.link_budget.empty())
    throw bad_flag("--link-budget", a.planning.link_budget, "is for training and edge workloads, not " + type);
  if (!a.planning.error_budget.empty()) throw bad_flag("--error-budget", a.planning.error_budget, "is for codecs; " + why);
}

void run_hetero_train(const plan_args& a, const plan::system& s, const plan::hetero_train_workload& w) {
  refuse_codec_flags(a, "hetero-train", "hetero-train sends latents as they are");
  plan::hetero_train_result r;
  try {
    r = plan::plan_hetero_train(s, w, options_of(a.planning));
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  const auto answers = plan::answers(w);
  if (a.json) {
    print_result_json(a, s, w, "hetero_train",
                      {{"answers", {{"producers_per_consumer_device", answers.producers_per_consumer},
                                    {"streams_to_fill_link", answers.streams_to_fill},
                                    {"one_stream_bytes_per_second", answers.one_stream.value()},
                                    {"nodes_fed", answers.nodes_fed}}}},
                      r, [](const plan::hetero_train_evaluated& e) { return hetero_train_json(e); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& b = r.candidates[r.baseline].cost;
  std::cout << "Plan for " << w.name << " on " << s.name << " (" << w.consumer_count(s) << " " << s.device.name
            << " consumers, " << w.producer.name << " producers over a " << to_string(w.link) << " link), best "
            << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  "
            << plan::describe(r.chosen().plan, w) << "\n\n";
  table t({"", "chosen", "colocated (baseline)"});
  t.add({"samples/s trained", units::detail::format_number(c.samples_per_second),
         units::detail::format_number(b.samples_per_second)});
  t.add({"consumers training", plan::detail::pct(c.utilization), plan::detail::pct(b.utilization)});
  t.add({"consumers waiting (bubble)", plan::detail::pct(c.bubble), plan::detail::pct(b.bubble)});
  t.add({"streams carry", to_string(c.carried), "-"});
  t.add({"link busy", plan::detail::pct(c.link_busy), "-"});
  t.add({"energy per sample", to_string(c.total.energy), to_string(b.total.energy)});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (" << plan::describe(r.candidates[r.baseline].plan, w) << "): " << x.binding_before
            << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives one producer or one stream away:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (time, energy, dollars per sample): " << r.pareto.size() << " plans\n";
}

json data_curation_json(const plan::data_curation_evaluated& e, const plan::data_curation_workload& w) {
  const auto& c = e.cost;
  const auto names = plan::detail::model_names(w);
  json holds = json::array();
  for (const auto h : e.plan.holds) {
    json d = json::array();
    for (std::size_t j = 0; j < names.size(); ++j)
      if ((h >> j) & 1u) d.push_back(names[j]);
    holds.push_back(d);
  }
  return {{"one_model_per_device", e.plan.one_per_device},
          {"budget_bytes", e.plan.budget.value()},
          {"devices_hold", holds},
          {"samples_per_second", c.rates.samples_per_second},
          {"device_utilization", c.rates.device_utilization},
          {"cpu_bound_samples_per_second", std::isinf(c.rates.cpu_bound) ? json(nullptr) : json(c.rates.cpu_bound)},
          {"device_bound_samples_per_second", c.rates.gpu_bound},
          {"device_bytes", c.memory.value()},
          {"time_per_sample_s", c.total.time.value()},
          {"energy_per_sample_j", c.total.energy.value()},
          {"dollars_per_sample", c.dollars}};
}

void run_data_curation(const plan_args& a, const plan::system& s, const plan::data_curation_workload& w) {
  refuse_codec_flags(a, "data-curation", "data-curation sends nothing compressed");
  plan::data_curation_result r;
  try {
    r = plan::plan_data_curation(s, w, options_of(a.planning));
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  if (a.json) {
    print_result_json(a, s, w, "data_curation", {}, r,
                      [&](const plan::data_curation_evaluated& e) { return data_curation_json(e, w); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& b = r.candidates[r.baseline].cost;
  std::cout << "Plan for " << w.name << " on " << s.name << " (" << w.device_count(s) << " " << s.device.name
            << " of " << to_string(s.tiers.at(0).capacity) << ", " << w.cpu_workers << " CPU workers), best "
            << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  "
            << plan::describe(r.chosen().plan, w) << "\n\n";
  table t({"", "chosen", plan::baseline_name(r.candidates[r.baseline].plan) + " (baseline)"});
  t.add({"samples/s", units::detail::format_number(c.rates.samples_per_second),
         units::detail::format_number(b.rates.samples_per_second)});
  t.add({"devices busy", plan::detail::pct(c.rates.device_utilization), plan::detail::pct(b.rates.device_utilization)});
  t.add({"memory per device (most)", to_string(c.memory), to_string(b.memory)});
  const auto carry = [](double rate) {
    return std::isinf(rate) ? std::string("- (no CPU operators)") : units::detail::format_number(rate) + " samples/s";
  };
  t.add({"CPU operators could carry", carry(c.rates.cpu_bound), carry(b.rates.cpu_bound)});
  t.add({"energy per sample", to_string(c.total.energy), to_string(b.total.energy)});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (" << plan::describe(r.candidates[r.baseline].plan, w) << "): " << x.binding_before
            << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives (the baseline and the budgets beside the choice's):\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (time, energy, memory per device): " << r.pareto.size() << " plans\n";
}

json serving_json(const plan::serving_evaluated& e, const plan::serving_plan_result& r, const plan::system& s) {
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
          {"tpot_s", c.tpot.value()},
          {"time_parts_s", {{"prefill", c.prefill.value()}, {"cache_load", c.load.value()}}},
          {"output_tokens_per_device_second", c.tokens_per_second},
          {"device_seconds_per_token", c.total.time.value()},
          {"energy_j_per_token", c.total.energy.value()},
          {"dollars_per_token", c.dollars},
          {"compute_flops_per_token", c.total.compute.value()},
          {"bytes_per_tier", tiers},
          {"relative_error", c.error},
          {"fits", e.fits()}};
}

void run_serving(const plan_args& a, const plan::system& s, plan::serving_workload& w) {
  const auto r = plan_serving_with(s, w, a.planning);
  const auto by_tier = plan::best_by_cache_tier(r, s.tiers.size(), objective_of(a.planning));
  if (a.json) {
    json tiers = json::object();
    for (std::size_t t = 0; t < s.tiers.size(); ++t)
      tiers[s.tiers[t].name] = by_tier.by_tier[t] ? serving_json(r.candidates[*by_tier.by_tier[t]], r, s) : json(nullptr);
    print_result_json(a, s, w, "serving",
                      {{"best_with_cache_in", tiers},
                       {"best_without_cache",
                        by_tier.no_cache ? serving_json(r.candidates[*by_tier.no_cache], r, s) : json(nullptr)}},
                      r, [&](const plan::serving_evaluated& e) { return serving_json(e, r, s); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& p = r.chosen().plan;
  std::cout << "Plan for " << w.name << " on " << s.name << " (" << s.device.count << " x " << s.device.name
            << "), best " << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  "
            << plan::describe(p, s, r.codecs) << "\n\n";
  table t({"resource", "predicted"});
  t.add({"time to first token", to_string(c.ttft) + " (prefill " + to_string(c.prefill) + ", cached prefix loaded " +
                                    to_string(c.load) + "); objective " + to_string(w.ttft_slo)});
  t.add({"time per output token", to_string(c.tpot) + " at batch " + std::to_string(p.batch) + "; objective " +
                                      to_string(w.tpot_slo)});
  t.add({"throughput", units::detail::format_number(c.tokens_per_second) + " output tokens per device-second (" +
                           std::to_string(s.device.count / p.tensor_parallel) + " replicas of " +
                           std::to_string(p.tensor_parallel) + ")"});
  t.add({"prefix hit rate", units::detail::format_number(c.hit_rate) + " of a prompt of " +
                                std::to_string(std::lround(w.prompt_tokens)) + " tokens"});
  t.add({"compute", to_string(flops{c.total.compute}) + " per output token"});
  t.add({"energy", to_string(c.total.energy) + " per output token"});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity) + " per device"});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (" << plan::describe(r.candidates[r.baseline].plan, s, r.codecs)
            << "): " << x.binding_before << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nWhat each tier buys (the best plan with the prefix cache there):\n";
  table b({"cache in", "plan", "hit rate", "TTFT", "tokens/device-s"});
  const auto add = [&](const std::string& where, std::optional<std::size_t> i) {
    if (!i) return b.add({where, "none fits", "", "", ""});
    const auto& e = r.candidates[*i];
    b.add({where, plan::describe(e.plan, s, r.codecs), units::detail::format_number(e.cost.hit_rate),
           to_string(e.cost.ttft), units::detail::format_number(e.cost.tokens_per_second)});
  };
  add("(no cache)", by_tier.no_cache);
  for (std::size_t i = 0; i < s.tiers.size(); ++i) add(s.tiers[i].name, by_tier.by_tier[i]);
  b.print(std::cout);
  std::cout << "\nAlternatives one choice away:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (device-time per token, energy, device memory, TTFT, dollars): " << r.pareto.size()
            << " plans\n";
}

json simulated_json(const std::vector<plan::simulated_pair>& v) {
  json out = json::array();
  for (const auto& x : v)
    out.push_back({{"what", x.what}, {"predicted_s", x.predicted.value()}, {"simulated_s", x.simulated.value()},
                   {"simulated_over_predicted", x.ratio()}, {"events", x.events}});
  return out;
}

void print_simulated(const std::vector<plan::simulated_pair>& v, const std::string& fabric) {
  if (v.empty()) {
    std::cout << "Nothing of this plan crosses the " << fabric << " fabric: it holds its state in device or host memory.\n";
    return;
  }
  table t({"on the " + fabric + " fabric", "predicted", "simulated", "simulated / predicted", "events"});
  for (const auto& x : v)
    t.add({x.what, to_string(x.predicted), to_string(x.simulated), units::detail::format_number(x.ratio()),
           std::to_string(x.events)});
  t.print(std::cout);
}

// An llm-serve plan on the fabric: the trace's KV loads from the fabric's memory tier (the chosen plan's, or the
// best plan's with its cache there) and a prefill's tensor-parallel all-reduces.
void run_simulate_serving(const plan_args& a, const plan::system& s, plan::serving_workload& w) {
  const auto r = plan_serving_with(s, w, a.planning);
  auto f = plan::fabric_for(s, s.device.count);  // every replica, in turn
  if (!f) throw usage_error("system: " + s.name + " names no simulated fabric; add \"fabric\" (trinity fabric --help "
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
      note = "No plan that fits keeps its prefix cache in " + (f->memory_tier.empty() ? "a fabric memory tier" : f->memory_tier) +
             ": no KV load crosses the fabric";
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
  std::vector<plan::simulated_pair> sim;
  try {
    sim = plan::simulate(s, w, e, r.codecs, loads, *f);
  } catch (const invalid_input& x) {
    throw usage_error(std::string(x.what()));
  }
  if (a.json) {
    std::cout << json{{"system", s.name}, {"choice", plan::describe(r.chosen().plan, s, r.codecs)},
                      {"simulated_plan", plan::describe(e.plan, s, r.codecs)}, {"fabric", f->name},
                      {"trace", a.trace.empty() ? json(nullptr) : json(a.trace)}, {"requests", requests},
                      {"note", note}, {"simulated", simulated_json(sim)}}
                     .dump(2)
              << '\n';
    return;
  }
  std::cout << "Plan: " << plan::describe(r.chosen().plan, s, r.codecs) << '\n';
  if (!note.empty()) std::cout << note << '\n';
  if (a.trace.empty() && on_fabric)
    std::cout << "No --trace given: the KV loads are not replayed (give a Mooncake-format trace, e.g. "
                 "docs/examples/mooncake_conversation_excerpt.jsonl).\n";
  else if (on_fabric)
    std::cout << "Replayed " << a.trace << " (" << requests << " requests) through the plan's prefix cache; "
              << loads.size() << " requests loaded a cached prefix.\n";
  std::cout << '\n';
  print_simulated(sim, f->name);
}

// The layout --parallelism names, or the search's choice.
model::parallel_layout layout_of(const plan_args& a, const plan::system& s) { return named_layout(s, a.parallelism, a.gpus); }
plan::parallel_plan_result search_layouts(const plan_args& a, const plan::system& s, const plan::training_workload& w) {
  return search_layouts(s, w, a.gpus, a.memory_headroom, a.planning);
}

// trinity simulate --parallelism: a layout's transfers on the system's own link hierarchy, every group at once.
void run_simulate_parallel(const plan_args& a, const plan::system& s, const plan::training_workload& w) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload, "has no transformer shape; give heads, ffn_hidden and vocabulary "
                                             "(docs/parallelism.md) to lay a parallel layout on the fabric");
  if (a.parallelism == "dynamic")
    throw bad_flag("--parallelism", a.parallelism, "picks a layout per length bucket; simulate one of them (a layout, or search)");
  const auto l = a.parallelism == "search" ? search_layouts(a, s, w).chosen().plan.layout : layout_of(a, s);
  std::vector<plan::simulated_pair> sim;
  auto budgeted = w;
  const auto codecs = gradient_codecs(s, budgeted, a.planning);
  try {
    sim = plan::simulate(s, w, l, plan::hierarchy_fabric(s, l.gpus()), codecs);
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  const std::string fabric = s.name + " link hierarchy";
  if (a.json) {
    std::cout << json{{"system", s.name}, {"parallelism", model::to_string(l)}, {"gpus", l.gpus()}, {"fabric", fabric},
                      {"simulated", simulated_json(sim)}}
                     .dump(2)
              << '\n';
    return;
  }
  std::cout << "Layout: " << model::to_string(l) << " on " << l.gpus() << " x " << s.device.name << "\n\n";
  print_simulated(sim, fabric);
}

// trinity simulate: the chosen plan on the simulated fabric, beside the planner's prediction.
void run_simulate(const plan_args& a) {
  const auto s = read_system(a.system);
  auto any = read_workload(a.workload, s);
  if (auto* v = std::get_if<plan::serving_workload>(&any)) return run_simulate_serving(a, s, *v);
  if (std::holds_alternative<plan::hetero_train_workload>(any))
    throw bad_flag("--workload", a.workload, "is a hetero-train workload; its link is measured by `trinity-stream "
                                             "demo`, not simulated on a fabric");
  if (std::holds_alternative<plan::data_curation_workload>(any))
    throw bad_flag("--workload", a.workload, "is a data-curation workload; it sends nothing over a fabric. Run it "
                                             "here with `trinity verify`");
  if (!a.trace.empty()) throw bad_flag("--trace", a.trace, "is for an llm-serve workload's KV loads");
  if (auto* w = std::get_if<plan::training_workload>(&any)) {
    auto laid = a;
    laid.parallelism = training_parallelism(a.parallelism, *w);
    if (laid.parallelism != "data") return run_simulate_parallel(laid, s, *w);
  } else if (!a.parallelism.empty()) {
    throw bad_flag("--parallelism", a.parallelism, "lays a training workload's layout on the fabric; this workload is not one");
  }
  if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
  std::vector<plan::simulated_pair> sim;
  std::string choice;
  std::size_t ranks = 2;
  try {
    if (auto* d = std::get_if<plan::diffusion_workload>(&any)) {
      const auto r = plan::plan_diffusion(s, *d, options_of(a.planning));
      choice = plan::describe(r.chosen().plan, s, r.codecs);
      sim = plan::simulate(s, *d, r);
    } else if (auto* e = std::get_if<plan::edge_workload>(&any)) {
      const auto r = plan::plan_edge(s, *e, plan::default_feature_codecs(), options_of(a.planning));
      choice = plan::describe(r.chosen().plan, *e, r.codecs);
      sim = plan::simulate(s, *e, r);
    } else {
      auto& w = std::get<plan::training_workload>(any);
      const auto r = plan_training_with(s, w, a.planning);
      choice = plan::describe(r, s);
      ranks = w.ranks(s);
      sim = plan::simulate(s, w, r);
    }
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
  const auto f = plan::fabric_for(s, ranks);
  const std::string fabric = std::holds_alternative<plan::edge_workload>(any)
                                 ? s.device.name + " -> " + s.server->name
                                 : (f ? f->name : "");
  if (a.json) {
    std::cout << json{{"system", s.name}, {"choice", choice}, {"fabric", fabric}, {"simulated", simulated_json(sim)}}
                     .dump(2)
              << '\n';
    return;
  }
  std::cout << "Plan: " << choice << "\n\n";
  print_simulated(sim, fabric);
}

// What the step model predicts for a layout: the step, peak bytes per GPU, and where each goes.
json parallel_predicted_json(const model::parallel_step_cost& r) {
  return {{"step_time_s", r.step.value()},
          {"device_bytes", r.device_bytes.value()},
          {"mfu", r.mfu},
          {"breakdown",
           {{"gemm_s", r.gemm.value()}, {"attention_s", r.attention.value()},
            {"elementwise_s", r.elementwise.value()}, {"recompute_s", r.recompute.value()},
            {"tensor_parallel_s", r.tp_comm.value()}, {"context_parallel_s", r.cp_comm.value()},
            {"pipeline_p2p_s", r.pp_comm.value()}, {"bubble_s", r.bubble.value()},
            {"data_parallel_s", r.dp_comm.value()}, {"optimizer_s", r.optimizer.value()},
            {"offload_s", r.offload.value()}, {"gradient_coding_s", r.codec.value()}}},
          {"memory",
           {{"parameters_bytes", r.parameters.value()}, {"gradients_bytes", r.gradients.value()},
            {"optimizer_states_bytes", r.optimizer_states.value()},
            {"activations_bytes", r.activations.value()}, {"offloaded_bytes", r.offloaded.value()}}},
          {"offload_bytes_per_step", r.offload_bytes.value()},
          {"sent_per_gpu",
           {{"tensor_parallel_bytes", r.tp_bytes.value()}, {"context_parallel_bytes", r.cp_bytes.value()},
            {"pipeline_bytes", r.pp_bytes.value()}, {"data_parallel_bytes", r.dp_bytes.value()}}}};
}

// The step's breakdown and the memory per GPU, as a table.
void print_parallel_breakdown(const model::parallel_step_cost& r, bytes capacity) {
  table t({"", "predicted"});
  const auto share = [&](seconds x) { return to_string(x) + " (" + plan::detail::pct(x / r.step) + ")"; };
  t.add({"step time", to_string(r.step) + ", MFU " + plan::detail::pct(r.mfu)});
  t.add({"  matrix multiplies", share(r.gemm)});
  t.add({"  attention core", share(r.attention)});
  t.add({"  memory-bound work", share(r.elementwise)});
  t.add({"  recomputation", share(r.recompute)});
  t.add({"  tensor-parallel collectives", share(r.tp_comm)});
  t.add({"  context-parallel ring (exposed)", share(r.cp_comm)});
  t.add({"  pipeline sends", share(r.pp_comm)});
  t.add({"  pipeline bubble", share(r.bubble)});
  t.add({"  data-parallel reduction (exposed)", share(r.dp_comm)});
  t.add({"  optimizer step" + std::string(r.offloaded > bytes{} ? " (on the host)" : ""), share(r.optimizer)});
  if (r.offloaded > bytes{}) t.add({"  optimizer offload traffic", share(r.offload)});
  if (r.codec > seconds{}) t.add({"  gradient coding", share(r.codec)});
  t.add({"device memory per GPU", to_string(r.device_bytes) + " of " + to_string(capacity) +
                                      (r.device_bytes <= capacity ? "" : ": does NOT fit")});
  t.add({"  weights, gradients, optimizer", to_string(r.parameters) + ", " + to_string(r.gradients) + ", " +
                                                to_string(r.optimizer_states)});
  t.add({"  activations", to_string(r.activations)});
  if (r.offloaded > bytes{}) t.add({"optimizer states offloaded per GPU", to_string(r.offloaded)});
  t.print(std::cout);
}

std::size_t scale_up_domains(const plan::system& s, const model::training_cluster& c, std::size_t gpus) {
  return s.scale_out ? (gpus + c.domain - 1) / c.domain : 1;
}

std::string gpus_on(const plan::system& s, const model::training_cluster& c, std::size_t gpus) {
  const auto domains = scale_up_domains(s, c, gpus);
  return std::to_string(gpus) + " x " + s.device.name + " (" + s.name +
         (domains > 1 ? ", " + std::to_string(domains) + " scale-up domains" : "") + ")";
}

// One parallel layout priced, no search: the step time, the peak bytes per GPU and where they go.
void run_parallelism(const plan_args& a, const plan::system& s, const plan::training_workload& w) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload, "has no transformer shape; give heads, ffn_hidden and vocabulary "
                                             "(docs/parallelism.md) to price a parallel layout");
  const auto l = layout_of(a, s);
  const auto job = plan::job_of(w, l.dp);
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  auto budgeted = w;
  const auto codecs = gradient_codecs(s, budgeted, a.planning);
  model::parallel_step_cost r;
  model::compressor_cost codec;
  try {
    codec = plan::gradient_codec(codecs, l.codec);
    r = model::price(job, c, l, codec);
  } catch (const invalid_input& e) {
    throw bad_flag("--parallelism", a.parallelism, e.what());
  }
  const bool fits = r.device_bytes <= c.memory;
  const bool within_budget = codec.relative_error <= budgeted.error_budget;
  const auto assumed = layout_assumed(a, io::parallel_layout_defaults(a.parallelism, l));
  if (a.json) {
    std::cout << json{{"system", s.name},
                      {"workload", w.name},
                      {"assumed", assumed_json(s, w.assumed, assumed)},
                      {"parallelism", model::to_string(l)},
                      {"gpus", l.gpus()},
                      {"scale_up_domains", scale_up_domains(s, c, l.gpus())},
                      {"global_batch", job.global_batch},
                      {"micro_batches", r.micro_batches},
                      {"fits", fits},
                      {"device_capacity_bytes", c.memory.value()},
                      {"gradient_codec",
                       {{"name", l.codec.empty() ? json(nullptr) : json(l.codec)},
                        {"relative_error", codec.relative_error},
                        {"error_budget", budgeted.error_budget},
                        {"within_error_budget", within_budget}}},
                      {"predicted", parallel_predicted_json(r)}}
                     .dump(2)
              << '\n';
    return;
  }
  std::cout << w.name << " on " << gpus_on(s, c, l.gpus()) << ", " << model::to_string(l) << ", " << job.global_batch
            << " sequences of " << job.sequence << " tokens a step:\n\n";
  print_parallel_breakdown(r, c.memory);
  if (!l.codec.empty())
    std::cout << "gradient codec " << l.codec << ": relative error " << units::detail::format_number(codec.relative_error)
              << (within_budget ? ", within" : ", MORE than") << " the error budget of "
              << units::detail::format_number(budgeted.error_budget) << '\n';
  print_assumed(s, w.assumed, assumed);
}

// Every layout searched: the best for the objective, why, and the front.
void run_parallel_search(const plan_args& a, const plan::system& s, const plan::training_workload& w) {
  if (!w.shape)
    throw bad_flag("--workload", a.workload, "has no transformer shape; give heads, ffn_hidden and vocabulary "
                                             "(docs/parallelism.md) to search parallel layouts");
  const auto r = search_layouts(a, s, w);
  const auto base = options_of(a.planning);
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  const auto& ch = r.chosen();
  const std::size_t gpus = ch.plan.layout.gpus();
  const auto job = plan::job_of(w, ch.plan.layout.dp);
  std::size_t feasible = 0;
  for (const auto& e : r.candidates) feasible += e.fits();
  const auto& x = r.explanation;
  if (!a.plot.empty()) {
    // Step time against device memory per GPU: what a layout trades for what.
    std::vector<plot_point> fitting, on_front;
    for (const auto& e : r.candidates)
      if (e.fits()) fitting.push_back({e.cost.total.time.value(), e.cost.total.memory.value() / 1e9});
    for (const auto i : r.pareto)
      on_front.push_back({r.candidates[i].cost.total.time.value(), r.candidates[i].cost.total.memory.value() / 1e9});
    draw_front(a.plot, w.name + " on " + std::to_string(gpus) + " x " + s.device.name + ": " + std::to_string(fitting.size()) +
                   " of " + std::to_string(r.candidates.size()) + " layouts fit",
               "step time (s)", s.tiers[0].name + " per GPU (GB)", fitting, on_front,
               {ch.cost.total.time.value(), ch.cost.total.memory.value() / 1e9}, "layouts",
               "time, energy, memory, bytes sent, dollars");
  }
  // The front, fastest first: what a reader weighs step time against memory with.
  auto front = r.pareto;
  std::sort(front.begin(), front.end(), [&](std::size_t i, std::size_t j) {
    return r.candidates[i].cost.total.time < r.candidates[j].cost.total.time;
  });
  if (a.json) {
    // A layout as the front, the choice and the baseline list it.
    const auto layout_json = [&](const plan::parallel_evaluated& e) {
      return json{{"parallelism", model::to_string(e.plan.layout)}, {"step_time_s", e.cost.total.time.value()},
                  {"energy_j", e.cost.total.energy.value()}, {"device_bytes", e.cost.total.memory.value()},
                  {"sent_bytes", e.cost.total.bandwidth.value()}, {"dollars", e.cost.dollars}, {"fits", e.fits()}};
    };
    json pareto = json::array();
    for (const auto i : front) pareto.push_back(layout_json(r.candidates[i]));
    std::cout << json{{"system", s.name},
                      {"workload", w.name},
                      {"assumed", assumed_json(s, w.assumed, layout_assumed(a))},
                      {"objective", plan::to_string(base.objective)},
                      {"candidates", r.candidates.size()},
                      {"choice", layout_json(ch)},
                      {"baseline", layout_json(r.candidates[r.baseline])},
                      {"predicted", parallel_predicted_json(ch.cost.step)},
                      {"pareto", pareto},
                      {"explanation",
                       {{"binding_before", x.binding_before}, {"binding_after", x.binding_after},
                        {"trades", x.trades}, {"rejected", x.rejected}}},
                      {"layout_search",
                       {{"gpus", gpus},
                        {"scale_up_domains", scale_up_domains(s, c, gpus)},
                        {"global_batch", job.global_batch},
                        {"feasible", feasible},
                        {"device_capacity_bytes", c.memory.value()}}}}
                     .dump(2)
              << '\n';
    return;
  }
  std::cout << "Layouts of " << w.name << " on " << gpus_on(s, c, gpus) << ", " << job.global_batch << " sequences of "
            << job.sequence << " tokens a step: best " << plan::to_string(base.objective) << " of "
            << r.candidates.size() << " layouts (" << feasible << " fit):\n\n  " << model::to_string(ch.plan.layout)
            << "\n\n";
  print_parallel_breakdown(ch.cost.step, c.memory);
  std::cout << "per GPU and step: energy " << to_string(ch.cost.total.energy)
            << (ch.cost.dollars > 0 ? ", cost " + plan::format_dollars(ch.cost.dollars) + " (one " + s.device.name + " rented for the step)"
                                    : std::string())
            << '\n';
  print_assumed(s, w.assumed, layout_assumed(a));
  const auto& untraded = r.candidates[r.baseline].plan.layout;
  std::cout << "\nWhy:\n  before ("
            << (untraded.pp == 1 ? "pure data parallelism, " : "no trade but the pipeline stages the batch needs to split, ")
            << model::to_string(untraded) << "): " << x.binding_before << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives one choice away:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (step time, energy, device memory, bytes sent, dollars): " << front.size()
            << " layouts; the " << std::min<std::size_t>(front.size(), 10) << " fastest:\n";
  table p({"layout", "step time", "MFU", s.tiers[0].name, "sent per GPU"});
  for (std::size_t k = 0; k < front.size() && k < 10; ++k) {
    const auto& e = r.candidates[front[k]];
    p.add({model::to_string(e.plan.layout) + (front[k] == r.choice ? "  <- chosen" : ""), to_string(e.cost.total.time),
           plan::detail::pct(e.cost.step.mfu), to_string(e.cost.total.memory), to_string(e.cost.total.bandwidth)});
  }
  p.print(std::cout);
}

// One layout per sequence-length bucket within a frame, against the best single layout.
void run_dynamic(const plan_args& a, const plan::system& s, const plan::training_workload& w) {
  if (!a.planning.link_budget.empty() || !a.plot.empty())
    throw bad_flag("--parallelism", a.parallelism, "plans step time per length bucket; it takes no link budget or plot flag");
  plan::dynamic_result r;
  // The frame's codecs as the layout search's: the profile's or the system's devices', held to the error budget.
  auto budgeted = w;
  auto codecs = gradient_codecs(s, budgeted, a.planning);
  try {
    r = plan::plan_dynamic(s, budgeted, {.gpus = a.gpus, .objective = objective_of(a.planning),
                                         .memory_headroom = a.memory_headroom, .codecs = std::move(codecs)});
  } catch (const invalid_input& e) {
    if (e.field() == "gpus") throw bad_flag("--gpus", std::to_string(a.gpus), e.problem());
    throw usage_error(std::string(e.what()));
  }
  const auto c = plan::usable_cluster(s, w, {.memory_headroom = a.memory_headroom});
  const auto choice = [](const model::parallel_layout& l) {
    return "cp=" + std::to_string(l.cp) + ",dp=" + std::to_string(l.dp) + ",mbs=" + std::to_string(l.micro_batch) +
           ",recompute=" + model::to_string(l.recompute) + ",sp=" + (l.sequence_parallel ? "on" : "off");
  };
  const auto frame = [](const model::parallel_layout& l) {
    return "tp=" + std::to_string(l.tp) + ",pp=" + std::to_string(l.pp) + ",vpp=" + std::to_string(l.vpp) +
           ",zero=" + std::to_string(l.zero_stage) + (l.offload ? ",offload=on" : "") + (l.codec.empty() ? "" : ",codec=" + l.codec);
  };
  const bool has_static = std::isfinite(r.static_step.value());
  if (a.json) {
    const auto buckets = [&](const std::vector<plan::dynamic_bucket>& v) {
      json out = json::array();
      for (const auto& b : v)
        out.push_back({{"name", b.bucket.name}, {"sequence", b.bucket.sequence}, {"sequences", b.sequences},
                       {"parallelism", model::to_string(b.layout)}, {"time_s", b.time.value()},
                       {"device_bytes", b.cost.device_bytes.value()}});
      return out;
    };
    json j{{"system", s.name}, {"workload", w.name}, {"assumed", assumed_json(s, w.assumed, layout_assumed(a))},
           {"gpus", r.gpus}, {"frames", r.frames}, {"layouts_priced", r.layouts_priced},
           {"dynamic", {{"frame", frame(r.frame)}, {"step_time_s", r.step.value()}, {"reduction_and_update_s", r.shared.value()},
                        {"device_bytes", r.device_bytes.value()}, {"buckets", buckets(r.buckets)}}}};
    if (has_static) {
      j["static"] = {{"parallelism", model::to_string(r.static_layout)}, {"step_time_s", r.static_step.value()},
                     {"device_bytes", r.static_device_bytes.value()}, {"buckets", buckets(r.static_buckets)}};
      j["gain"] = r.gain();
    } else {
      j["static"] = nullptr;
      j["gain"] = nullptr;
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << "Dynamic parallelism for " << w.name << " on " << gpus_on(s, c, r.gpus) << ": " << r.layouts_priced
            << " bucket layouts priced in " << r.frames << " frames.\n\nDynamic: frame " << frame(r.frame) << ", step "
            << to_string(r.step) << " (reduction and update " << to_string(r.shared) << "), peak "
            << to_string(r.device_bytes) << " of " << to_string(c.memory) << " per GPU\n";
  print_assumed(s, w.assumed, layout_assumed(a));
  std::cout << '\n';
  table t({"bucket", "tokens", "sequences", "layout in the frame", "time", "per GPU"});
  for (const auto& b : r.buckets)
    t.add({b.bucket.name, std::to_string(b.bucket.sequence), std::to_string(b.sequences), choice(b.layout), to_string(b.time),
           to_string(b.cost.device_bytes)});
  t.print(std::cout);
  if (!has_static) {
    std::cout << "\nStatic: no single layout runs every bucket within " << to_string(c.memory) << " per GPU.\n";
    return;
  }
  std::cout << "\nStatic: " << model::to_string(r.static_layout) << " for every bucket, step " << to_string(r.static_step)
            << ", peak " << to_string(r.static_device_bytes) << " per GPU\n";
  table u({"bucket", "time", "per GPU"});
  for (const auto& b : r.static_buckets) u.add({b.bucket.name, to_string(b.time), to_string(b.cost.device_bytes)});
  u.print(std::cout);
  char g[32];
  std::snprintf(g, sizeof g, "%.3f", r.gain());
  std::cout << "\nGain of the dynamic plan over the best static one: " << g << "x\n";
}

void run_plan(const plan_args& a) {
  const auto s = read_system(a.system);
  auto any = read_workload(a.workload, s);
  if (auto* w = std::get_if<plan::training_workload>(&any)) {
    auto laid = a;
    laid.parallelism = training_parallelism(a.parallelism, *w);
    if (laid.parallelism == "search") return run_parallel_search(laid, s, *w);
    if (laid.parallelism == "dynamic") return run_dynamic(laid, s, *w);
    if (laid.parallelism != "data") return run_parallelism(laid, s, *w);
  } else if (!a.parallelism.empty()) {
    throw bad_flag("--parallelism", a.parallelism, "prices a training workload's layout; this workload is not one");
  }
  if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
  if (a.memory_headroom > 0)
    throw bad_flag("--memory-headroom", units::detail::format_number(a.memory_headroom),
                   "goes with a training workload's layouts (--parallelism LAYOUT, search or dynamic); the "
                   "data-parallel planner has none");
  if (auto* d = std::get_if<plan::diffusion_workload>(&any)) return run_diffusion(a, s, *d);
  if (auto* e = std::get_if<plan::edge_workload>(&any)) return run_edge(a, s, *e);
  if (auto* v = std::get_if<plan::serving_workload>(&any)) return run_serving(a, s, *v);
  if (auto* h = std::get_if<plan::hetero_train_workload>(&any)) return run_hetero_train(a, s, *h);
  if (auto* c = std::get_if<plan::data_curation_workload>(&any)) return run_data_curation(a, s, *c);
  auto& w = std::get<plan::training_workload>(any);
  const auto r = plan_training_with(s, w, a.planning);
  const auto& x = r.explanation;
  if (!a.plot.empty()) {
    // Step time against device memory: the trade the front is made of.
    std::vector<plot_point> feasible, front;
    for (const auto& e : r.candidates)
      if (e.fits()) feasible.push_back({e.cost.total.time.value(), e.cost.tier_bytes[0].value() / 1e9});
    for (const auto i : r.pareto)
      front.push_back({r.candidates[i].cost.total.time.value(), r.candidates[i].cost.tier_bytes[0].value() / 1e9});
    draw_front(a.plot, w.name + " on " + s.name + ": " + plan::describe(r, s), "step time (s)",
               s.tiers[0].name + " per device (GB)", feasible, front,
               {r.chosen().cost.total.time.value(), r.chosen().cost.tier_bytes[0].value() / 1e9});
  }
  if (a.json) {
    print_result_json(a, s, w, "training", {{"ranks", w.ranks(s)}}, r,
                      [&](const plan::evaluated& e) { return cost_json(e, r, s); });
    return;
  }
  const auto& c = r.chosen().cost;
  std::cout << "Plan for " << w.name << " on " << s.name << " (" << w.ranks(s) << " ranks of " << s.device.name
            << "), best " << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  "
            << plan::describe(r, s) << "\n\n";
  table t({"resource", "predicted per rank and step"});
  t.add({"step time", to_string(c.total.time) + " (compute " + to_string(c.compute_time) + ", interconnect " +
                          to_string(c.comm_time) + ", codec " + to_string(c.codec_time) + ", offload " +
                          to_string(c.offload_time) + ")"});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars) + " (" + s.device.name + " rented for the step)"});
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    t.add({s.tiers[i].name, to_string(c.tier_bytes[i]) + " of " + to_string(s.tiers[i].capacity)});
  t.add({"interconnect", to_string(c.link_bytes) + " sent over " + s.interconnect.name});
  t.print(std::cout);
  print_assumed(s, w.assumed);
  std::cout << "\nWhy:\n  before (no trade): " << x.binding_before << "\n  after: " << x.binding_after << '\n';
  for (const auto& tr : x.trades) std::cout << "  trade: " << tr << '\n';
  std::cout << "\nAlternatives one choice away:\n";
  for (const auto& rj : x.rejected) std::cout << "  " << rj << '\n';
  std::cout << "\nPareto front (time, energy, device memory, bytes sent): " << r.pareto.size() << " plans\n";
  table p({"plan", "step time", "energy", s.tiers[0].name, "sent"});
  for (const auto i : r.pareto) {
    const auto& e = r.candidates[i];
    p.add({plan::detail::describe(e.plan, s, r.codecs) + (i == r.choice ? "  <- chosen" : ""), to_string(e.cost.total.time),
           to_string(e.cost.total.energy), to_string(e.cost.tier_bytes[0]), to_string(e.cost.link_bytes)});
  }
  p.print(std::cout);
}

}  // namespace

plan::system system_from(const std::string& arg) { return read_system(arg); }
any_workload workload_from(const std::string& arg, const plan::system& s) {
  return read_workload(arg, s);
}

void add_planning_flags(CLI::App& cmd, planning_flags& f) {
  cmd.add_option("--objective", f.objective, "time (default), energy, or cost (dollars; needs a priced system)")
      ->type_name("time|energy|cost");
  cmd.add_option("--profile", f.profile, "Gradient codec costs from `trinity calibrate --out` (default: the figures "
                                         "in docs/compression.md)")->type_name("FILE");
  cmd.add_option("--link-budget", f.link_budget, "Most bytes a rank may send per training step, or a device per "
                                                 "edge frame (default: no limit)")->type_name("SIZE");
  cmd.add_option("--error-budget", f.error_budget, "Largest relative gradient error a codec may add (default: the "
                                                   "workload's, 0.01)")->type_name("NUMBER");
}

model::parallel_layout named_layout(const plan::system& s, const std::string& parallelism, std::size_t gpus) {
  model::parallel_layout l;
  try {
    l = io::parse_parallel_layout(parallelism, "--parallelism");
  } catch (const invalid_input& e) {
    throw bad_flag("--parallelism", parallelism, e.problem());
  }
  if (gpus && gpus != l.gpus())
    throw bad_flag("--gpus", std::to_string(gpus), "differs from the layout's " + std::to_string(l.gpus()) +
                                                       " (tp*pp*cp*dp); give one or the other");
  if (!s.scale_out && l.gpus() > s.device.count)
    throw bad_flag("--parallelism", parallelism,
                   "uses " + std::to_string(l.gpus()) + " GPUs (tp*pp*cp*dp), and " + s.name + " has " +
                       std::to_string(s.device.count) + " in one domain with no scale-out link");
  return l;
}

plan::parallel_plan_result search_layouts(const plan::system& s, const plan::training_workload& w, std::size_t gpus,
                                          double memory_headroom, const planning_flags& f) {
  const auto base = options_of(f);
  auto budgeted = w;
  auto codecs = gradient_codecs(s, budgeted, f);
  try {
    return plan::plan_parallel(s, budgeted, {.gpus = gpus, .objective = base.objective, .link_budget = base.link_budget,
                                             .memory_headroom = memory_headroom, .codecs = std::move(codecs)});
  } catch (const invalid_input& e) {
    if (e.field() == "gpus") throw bad_flag("--gpus", std::to_string(gpus), e.problem());
    throw usage_error(std::string(e.what()));
  }
}

void add_layout_flags(CLI::App& cmd, std::string& parallelism, std::size_t& gpus, const std::string& what) {
  cmd.add_option("--parallelism", parallelism,
                 "A transformer training workload: " + what + "; `data`: the data-parallel planner's plan (the "
                 "default for a workload without a transformer shape)")
      ->type_name("LAYOUT|search|data")
      ->check(non_empty("a layout (tp=2,dp=4), search or data"));
  cmd.add_option("--gpus", gpus, "GPUs the layout search lays out, as for plan")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
}

plan::planner_options options_of(const planning_flags& f) {
  plan::planner_options o{.objective = objective_of(f), .link_budget = std::nullopt};
  if (!f.link_budget.empty()) o.link_budget = quantity_flag<bytes>(f.link_budget, "--link-budget");
  return o;
}

plan::objective objective_of(const planning_flags& f) {
  if (f.objective == "time") return plan::objective::time;
  if (f.objective == "energy") return plan::objective::energy;
  if (f.objective == "cost") return plan::objective::cost;
  throw bad_flag("--objective", f.objective, "expected time, energy or cost");
}

plan::serving_plan_result plan_serving_with(const plan::system& s, plan::serving_workload& w, const planning_flags& f) {
  if (!f.profile.empty())
    throw bad_flag("--profile", f.profile, "is for a training workload's gradient codecs; llm-serve's KV codecs are the "
                                           "system's");
  if (!f.link_budget.empty()) throw bad_flag("--link-budget", f.link_budget, "is for training and edge workloads, not llm-serve");
  if (!f.error_budget.empty())
    w.error_budget = number_flag(f.error_budget, "--error-budget", 0, 10, "a relative error from 0 to 10");
  try {
    return plan::plan_serving(s, w, options_of(f));
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
}

std::vector<model::compressor_cost> gradient_codecs(const plan::system& s, plan::training_workload& w, const planning_flags& f) {
  if (!f.error_budget.empty())
    w.error_budget = number_flag(f.error_budget, "--error-budget", 0, 10, "a relative error from 0 to 10");
  return f.profile.empty() ? plan::default_codecs_for(s) : read_profile(f.profile);
}

plan::plan_result plan_training_with(const plan::system& s, plan::training_workload& w, const planning_flags& f) {
  const auto o = options_of(f);
  const auto codecs = gradient_codecs(s, w, f);
  try {
    return plan::plan_training(s, w, codecs, o);
  } catch (const invalid_input& e) {
    throw usage_error(std::string(e.what()));
  }
}

void register_plan(CLI::App& app) {
  auto a = std::make_shared<plan_args>();
  auto* p = app.add_subcommand("plan", "Pick the best trade-off for a system and a workload, and explain it");
  p->add_option("--system", a->system, "A preset (gb200-nvl72-cxl, h100-ib-cluster, dgx-h100, dgx-a100, edge-5g-cloud) or a JSON file")
      ->type_name("PRESET|FILE");
  p->add_option("--workload", a->workload,
                "A preset (llm-7b-train, llm-70b-train, diffusion-dit-12b, edge-video-analytics, llama3-70b-serve, wan22-t2v-hetero, t2v-curation) or a "
                "JSON file")
      ->type_name("PRESET|FILE");
  add_planning_flags(*p, a->planning);
  p->add_option("--plot", a->plot, "Draw the feasible plans and the Pareto front to this PNG (gnuplot)")->type_name("FILE");
  p->add_option("--parallelism", a->parallelism,
                "Price one parallel layout of a transformer training workload, no search: "
                "tp=8,pp=8,vpp=1,cp=1,dp=1,mbs=1,recompute=none|selective|full,sp=on|off,zero=0..3 (a missing key is "
                "1, none, off, 0); `search` (the default for a workload with a transformer shape): every layout, the "
                "best and why; `dynamic`: a layout per sequence_mix bucket; `data` (the default without a shape): the "
                "data-parallel planner (DDP, ZeRO 1-3, codecs, offload and placement across the system's tiers)")
      ->type_name("LAYOUT|search|dynamic|data")
      ->check(non_empty("a layout (tp=2,dp=4), search, dynamic or data"));
  p->add_option("--gpus", a->gpus, "GPUs the layout search lays out (default: the workload's ranks; more than the "
                                   "system's devices needs its scale-out link)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  p->add_option("--memory-headroom", a->memory_headroom,
                "With --parallelism: the fraction of device memory a layout leaves free (allocator, workspaces), "
                "e.g. 0.1; default 0")
      ->type_name("FRACTION")
      ->check(CLI::Range(0.0, 0.99));
  p->add_flag("--json", a->json, "Print JSON: choice, predicted, pareto, explanation");
  p->callback([a] { run_plan(*a); });

  auto sa = std::make_shared<plan_args>();
  auto* sim = app.add_subcommand("simulate", "Run the chosen plan on the simulated fabric, beside what the planner predicted");
  sim->add_option("--system", sa->system,
                  "A preset or a JSON file: a layout runs on its own link hierarchy; the data-parallel planner's plan "
                  "needs a fabric (gb200-nvl72-cxl, h100-ib-cluster), an edge workload a server")->type_name("PRESET|FILE");
  sim->add_option("--workload", sa->workload, "A preset or a JSON file, as for plan")->type_name("PRESET|FILE");
  add_planning_flags(*sim, sa->planning);
  sim->add_option("--trace", sa->trace, "An llm-serve workload: the block-hashed trace (Mooncake's JSONL format) "
                                        "whose KV loads to replay on the fabric")->type_name("FILE.jsonl");
  add_layout_flags(*sim, sa->parallelism, sa->gpus, "lay this layout (as for plan), or the layout search's choice "
                                                   "(`search`, the default), on the system's own link hierarchy");
  sim->add_flag("--json", sa->json, "Print JSON");
  sim->callback([sa] { run_simulate(*sa); });
}

}  // namespace trinity::cli
