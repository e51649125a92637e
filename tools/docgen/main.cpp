// trinity-docgen: every measured figure the docs and the built-in presets show, generated from the result
// files in bench/results (and, for deterministic programs, from running them), so none is typed by hand.
//
//   trinity-docgen --source DIR --build DIR --check   exit 1, naming each place that disagrees with its source
//   trinity-docgen --source DIR --build DIR --write   rewrite them
//
// In README.md and docs/*.md, a generated region reads
//
//   <!-- generated: output: build/bin/trinity plan --system h100-ib-cluster --workload llm-70b-train -->
//   ...the command's output, in a fenced block...
//   <!-- end generated -->
//
// with `output: COMMAND` (run by bash in a work directory holding build/, docs/ and scripts/; its standard
// output in a ``` block), `table: NAME` (a table rendered from result files, below) or `file: PATH` (a file
// of the sources in a ```json block). Figures the prose quotes from the step model's validation are marked inline
// (prose_figures.hpp). Two headers are generated too: plan/detail/measured_codecs.hpp (the
// codec rates the planner prices when no profile is given) and plan/detail/measured_curves.hpp (the
// diffusion preset's hit-rate curve). A result file names the build and the machine it was measured on;
// scripts/record-results.sh re-measures them all.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/io/attention_kernels.hpp>
#include <trinity/io/parallel_calibration.hpp>
#include <trinity/io/serving_runs.hpp>
#include <trinity/io/serving_bands.hpp>
#include <trinity/units/format.hpp>

#include "prose_figures.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw failure(p.string() + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// ---- formatting --------------------------------------------------------------------------------------

//! Four significant digits, no exponent for everyday magnitudes: 23.1, 0.1234, 1.5e+06.
std::string num(double v, int digits = 3) {
  char b[64];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3))
    std::snprintf(b, sizeof b, "%.*g", digits, v);
  else
    std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}
std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}
std::string rate(double bytes_per_second) {
  if (bytes_per_second >= 1e12) return num(bytes_per_second / 1e12) + " TB/s";
  if (bytes_per_second >= 1e9) return num(bytes_per_second / 1e9) + " GB/s";
  return num(bytes_per_second / 1e6) + " MB/s";
}
std::string size_name(double bytes) {
  if (bytes >= (1 << 20)) return num(bytes / (1 << 20)) + " MiB";
  if (bytes >= 1024) return num(bytes / 1024) + " KiB";
  return num(bytes) + " B";
}

// ---- result files ------------------------------------------------------------------------------------

//! A Google Benchmark JSON file: its context and its runs by name (the median when it has repetitions).
struct result_file {
  fs::path path;
  json context;
  std::map<std::string, json> runs;

  [[nodiscard]] const json& run(const std::string& name) const {
    const auto it = runs.find(name);
    if (it == runs.end()) throw failure(path.string() + " has no benchmark \"" + name + "\"; re-record it");
    return it->second;
  }
  [[nodiscard]] bool has(const std::string& name) const { return runs.count(name) != 0; }
  [[nodiscard]] double counter(const std::string& name, const std::string& key) const {
    const json& r = run(name);
    if (!r.contains(key)) throw failure(path.string() + ": " + name + " has no counter \"" + key + "\"");
    return r.at(key).get<double>();
  }
  //! "preset ci: RelWithDebInfo -O2 -g -DNDEBUG" and the kernels' instruction set.
  [[nodiscard]] std::string build() const {
    std::string b = context.value("trinity_build", "an unnamed build");
    while (!b.empty() && b.back() == ' ') b.pop_back();
    if (context.contains("trinity_isa")) b += ", kernels on " + context["trinity_isa"].get<std::string>();
    return b;
  }
  [[nodiscard]] std::string machine() const {
    std::string m = context.value("cpu_model", std::string("an unnamed CPU"));
    m += " (" + std::to_string(context.value("num_cpus", 0)) + " CPUs, host " + context.value("host_name", "?") + ")";
    return m;
  }
  [[nodiscard]] std::string date() const { return context.value("date", "?").substr(0, 10); }
};

result_file load_results(const fs::path& path) {
  result_file r;
  r.path = path;
  json j;
  try {
    // Google Benchmark writes a statistic it cannot compute (the spread of a counter that is 0 every time)
    // as a bare NaN, which JSON has no word for; none of those is read here, so they become null.
    std::string text = read_file(path);
    for (const std::string bad : {": NaN", ": -nan", ": nan", ": inf", ": -inf"})
      for (std::size_t at = text.find(bad); at != std::string::npos; at = text.find(bad, at))
        text.replace(at, bad.size(), ": null");
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw failure(path.string() + ": not JSON: " + e.what());
  }
  r.context = j.at("context");
  if (r.context.value("trinity_quick", std::string("no")) != "no")
    throw failure(path.string() + " was recorded in quick mode (TRINITY_BENCH_QUICK): its figures mean nothing");
  bool aggregates = false;
  for (const auto& b : j.at("benchmarks")) aggregates |= b.value("run_type", "") == "aggregate";
  for (const auto& b : j.at("benchmarks")) {
    if (aggregates && b.value("aggregate_name", "") != "median") continue;
    std::string name = b.value("run_name", b.at("name").get<std::string>());
    for (const char* suffix : {"/real_time", "/manual_time"})
      if (name.size() > std::strlen(suffix) && name.ends_with(suffix)) name.resize(name.size() - std::strlen(suffix));
    r.runs[name] = b;
  }
  return r;
}

struct sources {
  fs::path root, build;
  fs::path results() const { return root / "bench" / "results"; }
  std::map<std::string, result_file> cache;
  const result_file& results(const std::string& file) {
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, load_results(results() / file)).first;
    return it->second;
  }
  //! The published training runs priced, for the figures prose quotes; priced once, where a page first asks.
  std::unique_ptr<docgen::priced_runs> priced;
  const docgen::priced_runs& runs() {
    if (!priced) priced = std::make_unique<docgen::priced_runs>(root);
    return *priced;
  }
};

// ---- tables ------------------------------------------------------------------------------------------

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& c : r) out += " " + c + " |";
    out += "\n";
  }
  return out;
}

std::string measured_on(const result_file& r) {
  return "Measured " + r.date() + " on " + r.machine() + ", " + r.build() + " (`bench/results/" +
         r.path.filename().string() + "`).\n";
}

//! The codecs bench: encode and decode per codec, on the ci build (the flags a user's build has) and on the
//! bench preset (-march=native), each against memcpy in its own run.
std::string compress_speed(sources& s) {
  const auto& ci = s.results("compress-ci.json");
  const result_file* native =
      fs::exists(s.results() / "compress-bench.json") ? &s.results("compress-bench.json") : nullptr;
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"memcpy", "1", "0", rate(ci.counter("compress/memcpy", "bytes_per_second")), "1", "", "", native ? "1" : ""});
  for (const auto& [name, run] : ci.runs) {
    if (!name.ends_with("/encode")) continue;
    const std::string codec = name.substr(9, name.size() - 9 - 7);
    const std::string dec = "compress/" + codec + "/decode";
    rows.push_back({codec, num(run.at("ratio").get<double>()), num(run.at("rel_error").get<double>()),
                    rate(run.at("bytes_per_second").get<double>()), fixed(run.at("x_memcpy").get<double>(), 2),
                    ci.has(dec) ? rate(ci.counter(dec, "bytes_per_second")) : "",
                    ci.has(dec) ? fixed(ci.counter(dec, "x_memcpy"), 2) : "",
                    native && native->has(name) ? fixed(native->counter(name, "x_memcpy"), 2) : ""});
  }
  std::string out = measured_on(ci);
  if (native) out += "The last column: " + native->build() + " (`bench/results/compress-bench.json`), same machine.\n";
  out += "\n" + table({"codec", "ratio", "rel. error", "encode (ci)", "× memcpy", "decode (ci)", "× memcpy",
                       "encode × memcpy (bench)"},
                      rows);
  return out;
}

std::string collectives_table(sources& s) {
  const auto& r = s.results("collectives-ci.json");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<double, std::string>> sizes;
  for (const auto& [name, run] : r.runs)
    if (name.rfind("allreduce/trinity/", 0) == 0) sizes.emplace_back(std::stod(name.substr(18)), name);
  std::sort(sizes.begin(), sizes.end());
  for (const auto& [bytes, name] : sizes)
    rows.push_back({size_name(bytes), rate(r.counter(name, "busbw_median")), rate(r.counter(name, "mpi_busbw_median")),
                    fixed(r.counter(name, "x_mpi"), 2)});
  return measured_on(r) + "2 ranks under `scripts/mpirun.sh -n 2`, medians of " +
         num(r.counter(sizes.at(0).second, "rounds")) + " alternating rounds.\n\n" +
         table({"message", "trinity busbw", "MPI_Allreduce busbw", "× MPI"}, rows);
}

std::string cuda_codecs(sources& s) {
  const auto& r = s.results("cuda_codecs_h100.json");
  const double copy = r.counter("BM_copy", "bytes_per_second");
  std::vector<std::vector<std::string>> rows{{"device-to-device copy", rate(copy), "1"}};
  for (const char* k : {"bf16_encode", "bf16_decode", "int8_encode", "int8_decode"}) {
    const double v = r.counter(std::string("BM_") + k, "bytes_per_second");
    std::string label = k;
    label.replace(label.find('_'), 1, " ");
    rows.push_back({label, rate(v), fixed(copy / v, 2)});
  }
  return "Measured " + r.date() + " on an NVIDIA H100 (CUDA 13.0), 256 MiB of fp32, medians of the runs in " +
         "`bench/results/" + r.path.filename().string() + "`; rates are fp32 bytes of input per second.\n\n" +
         table({"kernel", "rate", "time / copy's"}, rows);
}

std::string plan_speed(sources& s) {
  const auto& r = s.results("plan-ci.json");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, run] : r.runs) {
    if (name == "price/one") {
      rows.push_back({name, fixed(run.at("real_time").get<double>(), 0) + " " + run.value("time_unit", "ns"), ""});
      continue;
    }
    rows.push_back(
        {name, fixed(run.at("real_time").get<double>(), 1) + " " + run.value("time_unit", "ns"),
         run.contains("candidates_per_second") ? num(run.at("candidates_per_second").get<double>() / 1e6) + " M" : ""});
  }
  return measured_on(r) + "\n" + table({"benchmark", "a whole plan", "candidates per second"}, rows);
}

std::string place_speed(sources& s) {
  const auto& r = s.results("place-ci.json");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, run] : r.runs) {
    std::string extra;
    for (const char* k : {"gap", "optimal", "nodes", "events_per_second", "simulated_s", "x_unordered_map"})
      if (run.contains(k)) extra += (extra.empty() ? "" : ", ") + std::string(k) + " " + num(run.at(k).get<double>());
    rows.push_back({name, num(run.at("real_time").get<double>()) + " " + run.value("time_unit", "ns"), extra});
  }
  return measured_on(r) + "\n" + table({"benchmark", "time", "counters"}, rows);
}

std::string cache_speed(sources& s) {
  const auto& ci = s.results("cache-ci.json");
  const result_file* native = fs::exists(s.results() / "cache-bench.json") ? &s.results("cache-bench.json") : nullptr;
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, run] : ci.runs) {
    std::string extra;
    for (const char* k : {"x_faiss", "x_memory_bandwidth", "queries_per_second", "recall_at_1", "tokens_per_second",
                          "same_top1_as_faiss", "build_s", "items_per_second"})
      if (run.contains(k)) extra += (extra.empty() ? "" : ", ") + std::string(k) + " " + num(run.at(k).get<double>());
    std::string other;
    if (native && native->has(name))
      for (const char* k : {"x_faiss", "queries_per_second", "items_per_second", "tokens_per_second"})
        if (native->run(name).contains(k))
          other += (other.empty() ? "" : ", ") + std::string(k) + " " + num(native->counter(name, k));
    rows.push_back({name, num(run.at("real_time").get<double>()) + " " + run.value("time_unit", "ns"), extra, other});
  }
  std::string out = measured_on(ci);
  if (native) out += "The last column: " + native->build() + " (`bench/results/cache-bench.json`), same machine.\n";
  return out + "\n" + table({"benchmark", "time (ci)", "counters (ci)", "bench build"}, rows);
}

//! A recorded run in bench/results: {"command": what was run, "output": what it printed}, read once.
const json& recorded(sources& s, const std::string& file) {
  static std::map<std::string, json> records;
  auto it = records.find(file);
  if (it == records.end()) it = records.emplace(file, json::parse(read_file(s.results() / file))).first;
  return it->second;
}
//! The synthetic trace's replay.
const json& replay_record(sources& s) { return recorded(s, "replay-synthetic.json"); }
//! Mooncake's conversation trace through the prefix cache (the command runs from the source root, where
//! ../shared/traces holds the trace).
const json& prefix_curve_record(sources& s) { return recorded(s, "prefix-curve-mooncake.json"); }

std::string prefix_curve_table(sources& s) {
  const json& r = prefix_curve_record(s);
  const json& out = r.at("output");
  std::vector<std::string> policies;
  for (const auto& f : out.at("fits")) policies.push_back(f.at("eviction").get<std::string>());
  std::vector<std::string> header{"capacity (blocks)", "KV bytes"};
  for (const auto& p : policies) {
    header.push_back(p + " block hit");
    header.push_back(p + " token hit");
  }
  std::map<std::uint64_t, std::vector<std::string>> rows;
  for (const auto& row : out.at("rows")) {
    const auto cap = row.at("capacity_blocks").get<std::uint64_t>();
    auto& cells = rows[cap];
    if (cells.empty())
      cells = {std::to_string(cap), trinity::to_string(trinity::bytes{row.at("capacity_bytes").get<double>()})};
    cells.push_back(fixed(row.at("block_hit_rate").get<double>(), 3));
    cells.push_back(fixed(row.at("token_hit_rate").get<double>(), 3));
  }
  std::vector<std::vector<std::string>> body;
  for (auto& [cap, cells] : rows) body.push_back(cells);
  const json& inf = out.at("infinite");
  std::vector<std::string> bound{"infinite (" + std::to_string(inf.at("capacity_blocks").get<std::uint64_t>()) + ")",
                                 trinity::to_string(trinity::bytes{inf.at("capacity_blocks").get<double>() *
                                                                   out.at("kv_bytes_per_block").get<double>()})};
  for (std::size_t i = 0; i < policies.size(); ++i) {
    bound.push_back(fixed(inf.at("block_hit_rate").get<double>(), 3));
    bound.push_back(fixed(inf.at("token_hit_rate").get<double>(), 3));
  }
  body.push_back(bound);
  std::string fits;
  for (const auto& f : out.at("fits"))
    fits += "- " + f.at("eviction").get<std::string>() +
            ": power law kappa = " + fixed(f.at("power_law").at("kappa_per_gb").get<double>(), 4) +
            "/GB, gamma = " + fixed(f.at("power_law").at("gamma").get<double>(), 4) + " (rmse " +
            fixed(f.at("power_law").at("rmse").get<double>(), 4) + "); exponential saturation rmse " +
            fixed(f.at("exponential_saturation").at("rmse").get<double>(), 4) + "\n";
  return "`" + r.at("command").get<std::string>() + "` (deterministic; `bench/results/prefix-curve-mooncake.json`), " +
         std::to_string(out.at("requests").get<std::uint64_t>()) + " requests, " +
         std::to_string(out.at("blocks").get<std::uint64_t>()) + " blocks:\n\n" + table(header, body) + "\n" + fits;
}

std::string replay_table(sources& s) {
  const json& r = replay_record(s);
  const json& curve = r.at("output").at("curves").at(0);
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : curve.at("points")) {
    const auto& d = p.at("hits_per_depth");
    rows.push_back({num(p.at("capacity_bytes").get<double>() / 1e9) + " GB",
                    std::to_string(p.at("entries_at_end").get<int>()), fixed(p.at("hit_rate").get<double>(), 3),
                    std::to_string(d.value("5", 0)), std::to_string(d.value("10", 0)), std::to_string(d.value("15", 0)),
                    std::to_string(d.value("20", 0)), std::to_string(d.value("25", 0)),
                    fixed(100 * p.at("saved_share").get<double>(), 1) + "%"});
  }
  const auto& e = curve.at("exponential_saturation");
  const auto& pl = curve.at("power_law");
  return "`" + r.at("command").get<std::string>() + "` (deterministic; `bench/results/replay-synthetic.json`):\n\n" +
         table({"capacity", "entries", "hit rate", "@5", "@10", "@15", "@20", "@25", "saved share"}, rows) +
         "\nExponential saturation: β = " + num(e.at("beta").get<double>(), 4) + ", RMSE " +
         num(e.at("rmse").get<double>()) + ". Power law: κ = " + num(pl.at("kappa_per_gb").get<double>(), 4) +
         "/GB, γ = " + num(pl.at("gamma").get<double>(), 4) + ", RMSE " + num(pl.at("rmse").get<double>()) + ".\n";
}

//! examples/compressed_exchange's recorded run: at each link speed, the chooser's pick and the measured fastest.
std::string exchange_table(sources& s) {
  const fs::path path = s.results() / "compressed_exchange.json";
  const json r = json::parse(read_file(path));
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : r.at("speeds"))
    rows.push_back({num(v.at("link_gbps").get<double>()) + " Gbps", v.at("chosen").get<std::string>(),
                    fixed(1e3 * v.at("chosen_measured_s").get<double>(), 2) + " ms", v.at("fastest").get<std::string>(),
                    fixed(1e3 * v.at("fastest_measured_s").get<double>(), 2) + " ms",
                    v.at("within_10_percent").get<bool>() ? "yes" : "no"});
  std::string build = r.value("build", std::string("?"));
  while (!build.empty() && build.back() == ' ') build.pop_back();
  return "Measured " + r.value("date", std::string("?")) + " on " + r.value("cpu", std::string("?")) + ", " + build +
         ", " + num(r.at("message_bytes").get<double>() / 1e6) + " MB (`bench/results/compressed_exchange.json`).\n\n" +
         table(
             {"link", "chooser's pick", "its measured time", "measured fastest it may pick", "its time", "within 10%"},
             rows);
}

std::string stream_speed(sources& s) {
  const auto& r = s.results("stream-ci.json");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<double, std::string>> sizes;
  const std::string prefix = "stream_vs_raw_zeromq/bytes:";
  for (const auto& [name, run] : r.runs)
    if (name.rfind(prefix, 0) == 0) sizes.emplace_back(std::stod(name.substr(prefix.size())), name);
  std::sort(sizes.begin(), sizes.end());
  for (const auto& [bytes, name] : sizes)
    rows.push_back({size_name(bytes), fixed(r.counter(name, "raw_items_per_second"), 0),
                    fixed(r.counter(name, "trinity_items_per_second"), 0),
                    rate(r.counter(name, "raw_bytes_per_second")), rate(r.counter(name, "trinity_bytes_per_second")),
                    fixed(r.counter(name, "trinity_over_raw"), 2), fixed(r.counter(name, "samples_per_message"), 1)});
  return measured_on(r) +
         "TCP loopback, one producer thread and one consumer thread, the two alternating in every "
         "round; medians of the repetitions in `bench/results/stream-ci.json`.\n\n" +
         table({"sample", "raw ZeroMQ samples/s", "trinity::stream samples/s", "raw bytes/s", "trinity bytes/s",
                "× raw", "samples a message"},
               rows);
}

//! The overlap model against shard::data_parallel's overlapped buckets (bench/overlap.cpp).
std::string overlap_table(sources& s) {
  const auto& r = s.results("overlap-ci.json");
  std::vector<std::pair<double, std::string>> by_window;  // rows from the shortest pass
  for (const auto& entry : r.runs) by_window.emplace_back(r.counter(entry.first, "window_ms"), entry.first);
  std::sort(by_window.begin(), by_window.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& [window, name] : by_window) {
    rows.push_back({fixed(window, 1) + " ms", fixed(r.counter(name, "reduce_ms"), 1) + " ms",
                    fixed(r.counter(name, "buckets"), 0), fixed(r.counter(name, "exposed_measured_ms"), 1) + " ms",
                    fixed(r.counter(name, "exposed_predicted_ms"), 1) + " ms",
                    fixed(r.counter(name, "predicted_over_measured"), 2)});
  }
  return measured_on(r) +
         "Two ranks as threads, DDP's all-reduce in buckets; medians over the steps in "
         "`bench/results/overlap-ci.json`.\n\n" +
         table({"backward pass", "reduction alone", "buckets", "exposed, measured", "exposed, predicted",
                "predicted / measured"},
               rows);
}

//! The curation executor against its kernels in a plain loop.
std::string pipeline_speed(sources& s) {
  const auto& r = s.results("pipeline-ci.json");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<double, std::string>> sizes;
  const std::string prefix = "executor_vs_loop/rows:";
  for (const auto& [name, run] : r.runs)
    if (name.rfind(prefix, 0) == 0) sizes.emplace_back(std::stod(name.substr(prefix.size())), name);
  std::sort(sizes.begin(), sizes.end());
  for (const auto& [keys, name] : sizes) {
    const double loop = r.counter(name, "loop_samples_per_second");
    rows.push_back({fixed(keys, 0), num(1e6 / (loop * r.counter(name, "steps_per_sample"))) + " µs", fixed(loop, 0),
                    fixed(r.counter(name, "executor_samples_per_second"), 0),
                    fixed(r.counter(name, "executor_over_loop"), 2)});
  }
  return measured_on(r) +
         "One device holding two index models (64-float keys, four searches a sample each), fed by "
         "one CPU worker, against the same copies run on the same samples in a loop on one thread, the two "
         "alternating in every round; medians of the repetitions.\n\n" +
         table({"keys per model", "a step in the loop", "loop samples/s", "executor samples/s", "× loop"}, rows);
}

//! `trinity verify` of the T2V curation plan, recorded: the pipeline run here with and without co-residency.
std::string curation_verify(sources& s) {
  const json& r = recorded(s, "curation-verify-ci.json");
  const json& out = r.at("output");
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : out.at("rows")) {
    const auto m = row.at("mechanism").get<std::string>();
    const bool whole =
        m.rfind("samples through", 0) == 0 || m.rfind("queues past", 0) == 0 || m.rfind("most bytes", 0) == 0;
    const auto shown = [&](double v) { return whole ? fixed(v, 0) : fixed(v, 3); };
    rows.push_back(
        {m, shown(row.at("predicted").get<double>()),
         row.contains("predicted_from_run_costs") ? shown(row.at("predicted_from_run_costs").get<double>()) : "-",
         shown(row.at("measured").get<double>()), fixed(row.at("measured_over_predicted").get<double>(), 2)});
  }
  return "Measured " + r.at("date").get<std::string>() + " on " + out.at("machine").get<std::string>() + " (" +
         std::to_string(out.at("cores").get<int>()) + " cores), " + r.at("build").get<std::string>() + " build: `" +
         r.at("command").get<std::string>() + "` (`bench/results/curation-verify-ci.json`). " +
         std::to_string(out.at("devices").get<int>()) + " devices at " + fixed(100 * out.at("duty").get<double>(), 1) +
         "% of a core each, " + std::to_string(out.at("samples").get<int>()) + " samples per placement.\n\n" +
         table({"", "predicted", "from the run's kernel costs", "measured", "measured / predicted"}, rows);
}

//! The IVF index, untiered and tiered, beside FAISS's IndexIVFFlat (bench/retrieval.cpp).
std::string retrieval_table(sources& s) {
  const auto& r = s.results("retrieval-ci.json");
  std::vector<std::vector<std::string>> rows;
  for (const std::string nprobe : {"4", "16"}) {
    const std::string faiss = "ivf/faiss/" + nprobe, trinity = "ivf/trinity/" + nprobe, tiered = "ivf/tiered/" + nprobe;
    rows.push_back({nprobe, fixed(r.counter(faiss, "queries_per_second"), 0),
                    fixed(r.counter(faiss, "recall_at_10"), 3), fixed(r.counter(trinity, "queries_per_second"), 0),
                    fixed(r.counter(trinity, "recall_at_10"), 3), fixed(r.counter(trinity, "x_faiss"), 2),
                    fixed(r.counter(tiered, "queries_per_second"), 0), fixed(r.counter(tiered, "recall_at_10"), 3),
                    fixed(100 * r.counter(tiered, "fast_tier_share"), 1) + "%"});
  }
  return measured_on(r) +
         "One query at a time, top 10, over SYNTHETIC clustered vectors; recall against the exact search. The "
         "tiered index keeps a tenth of its lists' bytes in the fast tier; both tiers are this machine's "
         "memory.\n\n" +
         table({"nprobe", "FAISS queries/s", "FAISS recall@10", "trinity queries/s", "trinity recall@10", "× FAISS",
                "tiered queries/s", "tiered recall@10", "bytes read from the fast tier (centroids included)"},
               rows);
}

//! IVF-PQ with exact re-ranking, codes in the fast tier and vectors in the capacity tier, beside FAISS's
//! IndexIVFPQ behind an IndexRefineFlat (bench/retrieval.cpp).
std::string retrieval_pq_table(sources& s) {
  const auto& r = s.results("retrieval-ci.json");
  std::vector<std::vector<std::string>> rows;
  for (const std::string nprobe : {"4", "16"}) {
    const std::string faiss = "ivf/faiss-pq/" + nprobe, pq = "ivf/pq/" + nprobe, flat = "ivf/trinity/" + nprobe;
    rows.push_back({nprobe, fixed(r.counter(faiss, "queries_per_second"), 0),
                    fixed(r.counter(faiss, "recall_at_10"), 3), fixed(r.counter(pq, "queries_per_second"), 0),
                    fixed(r.counter(pq, "recall_at_10"), 3), fixed(r.counter(pq, "x_faiss-pq"), 2),
                    fixed(r.counter(flat, "recall_at_10"), 3), size_name(r.counter(pq, "fast_tier_bytes_per_query")),
                    size_name(r.counter(pq, "capacity_tier_bytes_per_query"))});
  }
  return measured_on(r) +
         "One query at a time, top 10, the same vectors and lists; 16-byte codes of residuals (16 parts of 256 "
         "codes), the 100 nearest by code re-ranked by exact distance. IVF-Flat's recall at the same nprobe "
         "beside.\n\n" +
         table({"nprobe", "FAISS IVFPQ+refine queries/s", "FAISS recall@10", "trinity queries/s", "trinity recall@10",
                "× FAISS", "IVF-Flat recall@10", "fast-tier bytes a query", "capacity-tier bytes a query"},
               rows);
}

//! The HNSW index, untiered and tiered, beside FAISS's IndexHNSWFlat (bench/retrieval.cpp).
std::string retrieval_hnsw_table(sources& s) {
  const auto& r = s.results("retrieval-ci.json");
  std::vector<std::vector<std::string>> rows;
  for (const std::string ef : {"16", "64"}) {
    const std::string faiss = "hnsw/faiss/" + ef, mine = "hnsw/trinity/" + ef, tiered = "hnsw/tiered/" + ef;
    rows.push_back({ef, fixed(r.counter(faiss, "queries_per_second"), 0), fixed(r.counter(faiss, "recall_at_10"), 3),
                    fixed(r.counter(mine, "queries_per_second"), 0), fixed(r.counter(mine, "recall_at_10"), 3),
                    fixed(r.counter(mine, "x_faiss"), 2), fixed(r.counter(tiered, "queries_per_second"), 0),
                    fixed(r.counter(tiered, "recall_at_10"), 3), fixed(r.counter(tiered, "x_untiered"), 2),
                    fixed(100 * r.counter(tiered, "fast_tier_share"), 1) + "%"});
  }
  return measured_on(r) +
         "One query at a time, top 10, the same vectors; M 16, construction beam 100 in both (each builds its own "
         "graph). The tiered graph keeps its upper layers and the bottom layer's most visited nodes in a fast tier "
         "of a tenth of its bytes; both tiers are this machine's memory.\n\n" +
         table({"ef", "FAISS queries/s", "FAISS recall@10", "trinity queries/s", "trinity recall@10", "× FAISS",
                "tiered queries/s", "tiered recall@10", "× untiered", "bytes read from the fast tier"},
               rows);
}

//! Embedding-bag lookups beside a plain gather and memcpy (bench/embedding.cpp).
std::string embedding_table(sources& s) {
  const auto& r = s.results("embedding-ci.json");
  std::vector<std::vector<std::string>> rows;
  const std::pair<std::string, std::string> runs[] = {
      {"embedding/memcpy", "memcpy of the batch's row bytes"},
      {"embedding/gather", "a plain gather (each row copied out)"},
      {"embedding/bag", "embedding::embedding_bag (sum)"},
      {"embedding/tiered/1", "tiered_table, LFU cache of 1% of the rows"},
      {"embedding/tiered/10", "tiered_table, LFU cache of 10% of the rows"},
      {"embedding/tiered/100", "tiered_table, LFU cache of every row"}};
  for (const auto& [name, what] : runs) {
    const auto& run = r.run(name);
    rows.push_back({what, rate(r.counter(name, "bytes_per_second")), fixed(r.counter(name, "x_memcpy"), 2),
                    run.contains("x_gather") ? fixed(run.at("x_gather").get<double>(), 2) : "",
                    run.contains("hit_rate") ? fixed(run.at("hit_rate").get<double>(), 3) : ""});
  }
  return measured_on(r) +
         "One batch of 2,048 bags of 32 rows (Zipf 1.05, SYNTHETIC) from a table of 1,000,000 rows of 64 fp32 "
         "values; bytes of rows read per second.\n\n" +
         table({"lookups", "rows read", "× memcpy", "× plain gather", "hit rate"}, rows);
}

const std::map<std::string, std::function<std::string(sources&)>>& tables() {
  static const std::map<std::string, std::function<std::string(sources&)>> t{
      {"compress-speed", compress_speed},
      {"collectives", collectives_table},
      {"cuda-codecs", cuda_codecs},
      {"plan-speed", plan_speed},
      {"place-speed", place_speed},
      {"cache-speed", cache_speed},
      {"replay-synthetic", replay_table},
      {"exchange", exchange_table},
      {"prefix-curve-mooncake", prefix_curve_table},
      {"stream-speed", stream_speed},
      {"curation-verify", curation_verify},
      {"pipeline-speed", pipeline_speed},
      {"overlap", overlap_table},
      {"retrieval", retrieval_table},
      {"retrieval-pq", retrieval_pq_table},
      {"retrieval-hnsw", retrieval_hnsw_table},
      {"embedding-speed", embedding_table}};
  return t;
}

// ---- running the docs' commands ----------------------------------------------------------------------

struct work_dir {
  fs::path path;
  explicit work_dir(const sources& s) {
    path = fs::temp_directory_path() / ("trinity-docgen-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
    fs::create_directory_symlink(fs::absolute(s.build), path / "build");
    fs::create_directory_symlink(fs::absolute(s.root / "docs"), path / "docs");
    fs::create_directory_symlink(fs::absolute(s.root / "scripts"), path / "scripts");
    fs::create_directory_symlink(fs::absolute(s.root / "bench"), path / "bench");
  }
  ~work_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  work_dir(const work_dir&) = delete;
  work_dir& operator=(const work_dir&) = delete;
};

std::string run(const work_dir& w, const std::string& command) {
  // The docs' commands are shell by nature; bash reads them from a script of ours, started with no shell between.
  const fs::path script = w.path / "command.sh";
  std::ofstream(script) << "cd " << trinity::detail::shell_quoted(w.path.string()) << " && set -euo pipefail && "
                        << command << "\n";
  const auto r = trinity::detail::run_program({"bash", script.string()});
  if (!r.end.succeeded())
    throw failure("the documented command failed (" + r.end.describe() + "): " + command + "\n" + r.err.substr(0, 800));
  return r.out;
}

// ---- headers -----------------------------------------------------------------------------------------

std::string codecs_header(sources& s) {
  const auto& ci = s.results("compress-ci.json");
  const auto& gpu = s.results("cuda_codecs_h100.json");
  std::ostringstream h;
  h.precision(17);
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "Re-measure with\n"
    << "//! scripts/record-results.sh, or regenerate from the result files with\n"
    << "//! build/bin/trinity-docgen --write. plan/codecs.hpp prices these when no profile is given.\n//!\n"
    << "//! CPU: bench/results/compress-ci.json, measured " << ci.date() << " on " << ci.machine() << ",\n//! "
    << ci.build() << ".\n"
    << "//! GPU: bench/results/cuda_codecs_h100.json, measured " << gpu.date() << " on an NVIDIA H100.\n\n"
    << "namespace trinity::plan::detail {\n\n"
    << "//! One measured codec: input bytes over wire bytes, fp32 bytes encoded and decoded per second, the\n"
    << "//! relative error of one call, and whether an all-reduce must gather its frames.\n"
    << "struct measured_codec {\n  const char* name;\n  double ratio, encode_Bps, decode_Bps, relative_error;\n"
    << "  bool gathered;\n};\n\n";
  h << "inline constexpr measured_codec measured_cpu_codecs[] = {\n";
  for (const auto& [name, gathered] : std::vector<std::pair<std::string, bool>>{{"bf16", false},
                                                                                {"int8-ef", false},
                                                                                {"sign-ef", false},
                                                                                {"sampled-topk-1%-ef", true},
                                                                                {"powersgd-4", true}}) {
    const std::string e = "compress/" + name + "/encode", d = "compress/" + name + "/decode";
    h << "    {\"" << name << "\", " << ci.counter(e, "ratio") << ", " << ci.counter(e, "bytes_per_second") << ", "
      << ci.counter(d, "bytes_per_second") << ", " << ci.counter(e, "rel_error") << ", "
      << (gathered ? "true" : "false") << "},\n";
  }
  h << "};\n\n";
  h << "//! The GPU kernels write the CPU codecs' bytes: their ratios and errors are the CPU's.\n"
    << "inline constexpr measured_codec measured_gpu_codecs[] = {\n";
  for (const auto& [name, kernel] :
       std::vector<std::pair<std::string, std::string>>{{"bf16", "bf16"}, {"int8-ef", "int8"}}) {
    const std::string e = "compress/" + name + "/encode";
    h << "    {\"" << name << "\", " << ci.counter(e, "ratio") << ", "
      << gpu.counter("BM_" + kernel + "_encode", "bytes_per_second") << ", "
      << gpu.counter("BM_" + kernel + "_decode", "bytes_per_second") << ", " << ci.counter(e, "rel_error")
      << ", false},\n";
  }
  h << "};\n\n}  // namespace trinity::plan::detail\n";
  return h.str();
}

std::string curves_header(sources& s) {
  const json& r = replay_record(s);
  const json& pl = r.at("output").at("curves").at(0).at("power_law");
  std::ostringstream h;
  h.precision(17);
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "The diffusion preset's "
       "hit-rate curve:\n"
    << "//! the power law fitted to the SYNTHETIC trace replayed by\n//!   " << r.at("command").get<std::string>()
    << "\n//! (bench/results/replay-synthetic.json; deterministic: the docs test replays it and compares).\n\n"
    << "namespace trinity::plan::detail {\n\n"
    << "inline constexpr double synthetic_curve_kappa_per_gb = " << pl.at("kappa_per_gb").get<double>() << ";\n"
    << "inline constexpr double synthetic_curve_gamma = " << pl.at("gamma").get<double>() << ";\n\n";
  // The serving preset's prefix-cache curve: LRU on Mooncake's whole conversation trace, in bytes of
  // Llama-3-70B's 16-bit KV.
  const json& m = prefix_curve_record(s);
  const json& mf = m.at("output").at("fits").at(0);
  if (mf.at("eviction") != "lru") throw failure("prefix-curve-mooncake.json: its first fit must be lru's");
  h << "//! The serving preset's prefix-cache curve: LRU's power law on Mooncake's conversation trace, in bytes of\n"
    << "//! Llama-3-70B's 16-bit KV, from\n//!   " << m.at("command").get<std::string>()
    << "\n//! (bench/results/prefix-curve-mooncake.json; re-run by the docs test where ../shared/traces has the "
       "trace).\n"
    << "inline constexpr double mooncake_curve_kappa_per_gb = " << mf.at("power_law").at("kappa_per_gb").get<double>()
    << ";\n"
    << "inline constexpr double mooncake_curve_gamma = " << mf.at("power_law").at("gamma").get<double>() << ";\n"
    << "inline constexpr double mooncake_curve_bound = "
    << m.at("output").at("infinite").at("block_hit_rate").get<double>() << ";\n\n";
  // The rag-serve planner's recall curve: the IVF index's recall@10 against the share of lists probed.
  const result_file& ivf = s.results("ivf-recall-ci.json");
  h << "//! The rag-serve planner's default recall curve: {nprobe / lists, recall@10} of retrieval::ivf_index on\n"
    << "//! SYNTHETIC clustered vectors (bench/retrieval.cpp's ivf/recall sweep, bench/results/ivf-recall-ci.json, "
    << ivf.build() << ", " << ivf.machine() << ").\n"
    << "inline constexpr double synthetic_ivf_recall[][2] = {\n";
  std::vector<std::pair<double, double>> points;
  for (const auto& [name, run] : ivf.runs)
    if (name.rfind("ivf/recall/", 0) == 0)
      points.emplace_back(run.at("probe_share").get<double>(), run.at("recall_at_10").get<double>());
  if (points.empty()) throw failure("ivf-recall-ci.json has no ivf/recall runs; re-record it");
  std::sort(points.begin(), points.end());
  for (const auto& [share, recall] : points) h << "    {" << share << ", " << recall << "},\n";
  h << "};\n\n";
  // IVF-PQ's curve, and the shape it was measured at: the planner's IVF-PQ defaults take that shape.
  std::vector<std::pair<double, double>> pq;
  double per_dimension = 0, rerank = 0;
  for (const auto& [name, run] : ivf.runs)
    if (name.rfind("ivf/pq-recall/", 0) == 0) {
      pq.emplace_back(run.at("probe_share").get<double>(), run.at("recall_at_10").get<double>());
      per_dimension = run.at("code_bytes_per_dimension").get<double>();
      rerank = run.at("rerank_per_hit").get<double>();
    }
  if (pq.empty() || per_dimension <= 0) throw failure("ivf-recall-ci.json has no ivf/pq-recall runs; re-record it");
  std::sort(pq.begin(), pq.end());
  h << "//! The rag-serve planner's default IVF-PQ recall curve: {nprobe / lists, recall@10} of\n"
    << "//! retrieval::tiered_ivf_pq on the same vectors (bench/retrieval.cpp's ivf/pq-recall sweep, same file), its\n"
    << "//! codes a byte every pq_dimensions_per_byte dimensions, pq_rerank_per_hit vectors re-ranked a hit.\n"
    << "inline constexpr double pq_dimensions_per_byte = " << 1 / per_dimension << ";\n"
    << "inline constexpr double pq_rerank_per_hit = " << rerank << ";\n"
    << "inline constexpr double synthetic_ivf_pq_recall[][2] = {\n";
  for (const auto& [share, recall] : pq) h << "    {" << share << ", " << recall << "},\n";
  h << "};\n\n";
  // HNSW's: recall and what a query reads at each ef, on a graph of degree m whose nodes carry their link lists.
  const result_file& hnsw = s.results("hnsw-recall-ci.json");
  std::vector<std::array<double, 4>> walks;
  double degree = 0, per_node = 0, per_list = 0, lists_read = 0;
  for (const auto& [name, run] : hnsw.runs)
    if (name.rfind("hnsw/recall/", 0) == 0) {
      walks.push_back({run.at("ef").get<double>(), run.at("recall_at_10").get<double>(),
                       run.at("vectors_per_query").get<double>(), run.at("link_lists_per_query").get<double>()});
      degree = run.at("m").get<double>();
      per_node = run.at("link_bytes_per_node").get<double>();
      per_list += run.at("link_bytes_per_list").get<double>() * walks.back()[3];
      lists_read += walks.back()[3];
    }
  if (walks.empty() || degree <= 0) throw failure("hnsw-recall-ci.json has no hnsw/recall runs; re-record it");
  std::sort(walks.begin(), walks.end());
  h << "//! The rag-serve planner's HNSW curve: {ef, recall@10, vectors scored a query, link lists read a query} of\n"
    << "//! retrieval::tiered_hnsw on the same SYNTHETIC vectors (200,000 x 64; bench/retrieval.cpp's hnsw/recall\n"
    << "//! sweep, bench/results/hnsw-recall-ci.json, " << hnsw.build() << ", " << hnsw.machine() << "), a graph of\n"
    << "//! degree hnsw_m whose nodes carry hnsw_link_bytes_per_node of link lists beside their vectors; a list read\n"
    << "//! is hnsw_link_bytes_per_list (over every ef's reads).\n"
    << "inline constexpr double hnsw_m = " << degree << ";\n"
    << "inline constexpr double hnsw_link_bytes_per_node = " << per_node << ";\n"
    << "inline constexpr double hnsw_link_bytes_per_list = " << per_list / lists_read << ";\n"
    << "inline constexpr double synthetic_hnsw_recall[][4] = {\n";
  for (const auto& w : walks) h << "    {" << w[0] << ", " << w[1] << ", " << w[2] << ", " << w[3] << "},\n";
  h << "};\n\n}  // namespace trinity::plan::detail\n";
  return h.str();
}

//! The parallel step model's calibration: the H100's GEMM curve and κ from the probe, the A100's GEMM curve
//! from the published runs marked fit (io/parallel_calibration.hpp, the same code trinity validate runs).
std::string gemm_header(sources& s) {
  const fs::path probe_path = s.results() / "transformer-probe-h100.json";
  const fs::path runs_path = s.root / "bench" / "published" / "training-runs.json";
  const auto probe = trinity::io::read_transformer_probe(trinity::io::load(probe_path.string()));
  const auto runs = trinity::io::read_published_runs(trinity::io::load(runs_path.string()));
  const auto c = trinity::io::calibrate(probe, runs);
  std::ostringstream h;
  h.precision(17);
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "The parallel step "
       "model's calibrated\n"
    << "//! figures (io/parallel_calibration.hpp; trinity validate reports the same):\n"
    << "//!  - the H100's GEMM curve, fitted to " << c.h100.points
    << " cuBLAS bf16 GEMMs of bench/results/transformer-probe-h100.json\n"
    << "//!    (" << probe.device << ", " << probe.date << "; median error "
    << trinity::units::detail::format_number(c.h100.median_error) << ");\n"
    << "//!  - kappa, memory traffic per byte of activations kept, fitted to its " << c.stacks_fitted
    << " layer stacks without recomputation;\n"
    << "//!  - the A100's GEMM curve, fitted to the " << c.runs_fitted
    << " runs marked fit in bench/published/training-runs.json (Narayanan et al., SC'21).\n\n"
    << "#include <trinity/model/gemm.hpp>\n\n"
    << "namespace trinity::plan::detail {\n\n"
    << "inline constexpr model::gemm_efficiency measured_h100_gemm{" << c.h100.model.peak_fraction << ", "
    << c.h100.model.half_size << ", " << c.h100.model.ceiling << "};\n"
    << "inline constexpr model::gemm_efficiency fitted_a100_gemm{" << c.a100.peak_fraction << ", " << c.a100.half_size
    << ", " << c.a100.ceiling << "};\n"
    << "inline constexpr double measured_elementwise_traffic = " << c.elementwise_traffic << ";\n\n"
    << "}  // namespace trinity::plan::detail\n";
  return h.str();
}

//! The built-in training stack's band: how far the held-out published runs land from their predictions
//! (io::held_out_band over the runs trinity validate prices), which every training prediction's interval is.
std::string residuals_header(sources& s) {
  // The runs as the prose figures price them (sources::runs, calibrated once a pass); a band is order-blind.
  std::vector<trinity::io::priced_run> rows;
  for (const auto& [name, run] : s.runs().by_name()) rows.push_back(run);
  constexpr double coverage = 0.8;  // the share of runs an interval is to hold: a planner's "likely range"
  const auto band = trinity::io::held_out_band(rows, coverage);
  const fs::path serving_path = s.root / "bench" / "published" / "serving-runs.json";
  const auto serving = trinity::io::held_out_serving_bands(
      trinity::io::read_serving_runs(trinity::io::load(serving_path.string())), coverage);
  std::ostringstream h;
  h.precision(17);
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "The megatron-core stack's band\n"
    << "//! (plan/training_stack.hpp): the logarithms of measured / predicted step time that hold the central "
    << coverage * 100 << "% of the\n//! " << band.runs
    << " held-out runs of bench/published/training-runs.json, priced as trinity validate prices them\n"
    << "//! (io::held_out_band).\n\n#include <cstddef>\n\nnamespace trinity::plan::detail {\n\n"
    << "inline constexpr double held_out_step_low = " << band.low << ";\n"
    << "inline constexpr double held_out_step_high = " << band.high << ";\n"
    << "inline constexpr double held_out_coverage = " << band.coverage << ";\n"
    << "inline constexpr std::size_t held_out_runs = " << band.runs << ";\n"
    << "inline constexpr const char* held_out_source =\n    \"the " << band.runs
    << " held-out Megatron-LM, Megatron-Core and NeMo runs of bench/published/training-runs.json\";\n\n"
    << "//! The serving model's bands, over the held-out runs of bench/published/serving-runs.json by the figure they\n"
    << "//! measured (io/serving_bands.hpp): low, high and how many runs.\n";
  const auto serving_band = [&](const char* name, const trinity::plan::residual_band& b) {
    h << "inline constexpr double serving_" << name << "_low = " << b.low << ";\n"
      << "inline constexpr double serving_" << name << "_high = " << b.high << ";\n"
      << "inline constexpr std::size_t serving_" << name << "_runs = " << b.runs << ";\n";
  };
  serving_band("ttft", serving.ttft);
  serving_band("tpot", serving.tpot);
  serving_band("throughput", serving.throughput);
  h << "\n}  // namespace trinity::plan::detail\n";
  return h.str();
}

//! The serving model's calibration: its constants fitted to the published runs marked fit
//! (io/serving_runs.hpp, the same code trinity validate --serving runs).
std::string serving_header(sources& s) {
  const fs::path runs_path = s.root / "bench" / "published" / "serving-runs.json";
  const auto runs = trinity::io::read_serving_runs(trinity::io::load(runs_path.string()));
  const auto fits = trinity::io::calibrate_serving(runs);
  const auto found = fits.find("tensorrt-llm");
  if (found == fits.end()) throw failure(runs_path.string() + ": no tensorrt-llm run is marked fit");
  const auto& f = found->second;
  std::ostringstream h;
  h.precision(17);
  const auto constant = [&](const char* name, const trinity::model::serving_calibration& c) {
    h << "inline constexpr model::serving_calibration " << name << "{\n    .hbm_share = " << c.hbm_share
      << ",\n    .kv_read_share = " << c.kv_read_share << ",\n    .layer_overhead = seconds{"
      << c.layer_overhead.value() << "},\n    .prefill_layer_overhead = seconds{" << c.prefill_layer_overhead.value()
      << "},\n    .sequence_overhead = seconds{" << c.sequence_overhead.value()
      << "},\n    .all_reduce_latency = seconds{" << c.all_reduce_latency.value()
      << "},\n    .fp8_gemm_share = " << c.fp8_gemm_share
      << ",\n    .fused_attention_share = " << c.fused_attention_share
      << ",\n    .kv_read_per_query_head = " << (c.kv_read_per_query_head ? "true" : "false") << "};\n";
  };
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "The serving model's calibration\n"
    << "//! (io/serving_runs.hpp; trinity validate --serving reports the same): the tensorrt-llm family's, fitted to "
       "its "
    << f.runs
    << " runs marked fit in\n//! bench/published/serving-runs.json (TensorRT-LLM 0.5 and 0.6.1 on A100 and H100; "
       "root-mean-square log error "
    << trinity::units::detail::format_number(f.rms_log_error)
    << ").\n//! The presets read each KV head once (a grouped-query kernel, as engines now have); the runs' engines "
       "read it\n//! once per query head, which their sources say and the fit prices.\n\n"
    << "#include <trinity/model/serving.hpp>\n\n"
    << "namespace trinity::plan::detail {\n\n";
  constant("fitted_a100_serving", f.a100);
  constant("fitted_h100_serving", f.h100);
  if (f.h200 == f.h100)  // no H200 run in the fit set: the H100's constants (io/serving_runs.hpp)
    h << "inline constexpr model::serving_calibration fitted_h200_serving = fitted_h100_serving;\n";
  else
    constant("fitted_h200_serving", f.h200);
  h << "\n}  // namespace trinity::plan::detail\n";
  return h.str();
}

//! Each fused attention kernel measured on the H100, its published speeds fitted (io/attention_kernels.hpp), and
//! the one the H100 presets price flash_attention with by default: cuDNN's, which Transformer Engine runs.
std::string attention_header(sources& s) {
  const fs::path path = s.root / "bench" / "published" / "attention-kernels.json";
  const auto kernels = trinity::io::read_attention_kernels(trinity::io::load(path.string()));
  const auto h100 = *trinity::plan::presets::find("dgx-h100");
  std::ostringstream fits, table;
  fits.precision(17);
  table.precision(17);
  std::size_t index = 0, default_index = kernels.size();
  for (const auto& k : kernels) {
    if (k.device != "h100-sxm") continue;
    const auto f = trinity::model::fit_fused_attention(k.points, h100.device.compute.value());
    if (k.name == "cudnn") default_index = index;
    ++index;
    fits << "//!   " << k.name << ": " << f.points << " points (source " << k.source << "; " << f.derived_backward
         << " causal backward points derived from non-causal ones; root-mean-square log error "
         << trinity::units::detail::format_number(f.rms_log_error) << ")\n";
    table << "    {\"" << k.name << "\",\n     {.forward = " << f.model.forward
          << ",\n      .forward_knee = " << f.model.forward_knee << ",\n      .backward = " << f.model.backward
          << ",\n      .backward_knee = " << f.model.backward_knee
          << ",\n      .head_dim_knee = " << f.model.head_dim_knee << "}},\n";
  }
  if (default_index == kernels.size()) throw failure(path.string() + ": no cudnn kernel measured on h100-sxm");
  std::ostringstream h;
  h << "#pragma once\n// clang-format off\n//! \\file\n//! GENERATED by trinity-docgen (tools/docgen): do not edit. "
       "The fused attention kernels' curves\n"
    << "//! (model/fused_attention.hpp) on an H100 SXM, each fitted to its published speeds in\n"
    << "//! bench/published/attention-kernels.json:\n"
    << fits.str() << "\n#include <string_view>\n\n#include <trinity/model/fused_attention.hpp>\n\n"
    << "namespace trinity::plan::detail {\n\n"
    << "struct measured_attention_kernel {\n  std::string_view name;\n  model::fused_attention_efficiency "
       "curve;\n};\n\n"
    << "inline constexpr measured_attention_kernel measured_h100_attention_kernels[] = {\n"
    << table.str() << "};\n\n"
    << "//! What the H100 presets price flash_attention with: cuDNN's fused attention.\n"
    << "inline constexpr model::fused_attention_efficiency measured_h100_attention =\n"
    << "    measured_h100_attention_kernels[" << default_index << "].curve;\n\n"
    << "}  // namespace trinity::plan::detail\n";
  return h.str();
}

// ---- the pass over the sources -----------------------------------------------------------------------

struct outcome {
  int stale = 0;
};

void compare_or_write(const fs::path& path, const std::string& want, bool write, outcome& o, const std::string& what) {
  const std::string have = fs::exists(path) ? read_file(path) : "";
  if (have == want) return;
  if (write) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    if (!(out << want)) throw failure(path.string() + ": cannot be written");
    std::cerr << "trinity-docgen: rewrote " << what << '\n';
    return;
  }
  ++o.stale;
  std::cerr << "trinity-docgen: " << what << " disagrees with its source\n";
}

//! The planner's measured figures, as headers: the codec rates always, the diffusion curve where its replay
//! was recorded. Each opens with `// clang-format off`: its layout is this program's, byte for byte.
void measured_headers(sources& s, bool write, bool with_curves, outcome& o) {
  const std::string codecs = "include/trinity/plan/detail/measured_codecs.hpp";
  compare_or_write(s.root / codecs, codecs_header(s), write, o, codecs);
  const std::string gemm = "include/trinity/plan/detail/measured_gemm.hpp";
  compare_or_write(s.root / gemm, gemm_header(s), write, o, gemm);
  const std::string serving = "include/trinity/plan/detail/measured_serving.hpp";
  compare_or_write(s.root / serving, serving_header(s), write, o, serving);
  const std::string residuals = "include/trinity/plan/detail/held_out_residuals.hpp";
  compare_or_write(s.root / residuals, residuals_header(s), write, o, residuals);
  const std::string attention = "include/trinity/plan/detail/measured_attention.hpp";
  compare_or_write(s.root / attention, attention_header(s), write, o, attention);
  if (!with_curves) return;
  const std::string curves = "include/trinity/plan/detail/measured_curves.hpp";
  compare_or_write(s.root / curves, curves_header(s), write, o, curves);
}

//! The first line where two texts part, for the report.
std::string first_difference(const std::string& a, const std::string& b) {
  const auto x = lines_of(a), y = lines_of(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const std::string l = i < x.size() ? x[i] : "(nothing)", r = i < y.size() ? y[i] : "(nothing)";
    if (l != r) return "  the doc says:    " + l + "\n  the source says: " + r;
  }
  return "";
}

void pass_over_page(const fs::path& page, sources& s, const work_dir& w, bool write, outcome& o) {
  const auto lines = lines_of(read_file(page));
  std::string out;
  bool changed = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::vector<std::string> drifted;
    const std::string now =
        l.find("<!-- figure: ") == std::string::npos ? l : docgen::with_figures(l, s.runs(), drifted);
    for (const auto& d : drifted) {
      if (write) {
        changed = true;
        continue;
      }
      ++o.stale;
      std::cerr << "trinity-docgen: " << page.filename().string() << ":" << i + 1 << " " << d << '\n';
    }
    out += (write ? now : l) + "\n";
    const std::string open = "<!-- generated: ";
    if (l.rfind(open, 0) != 0) continue;
    const auto close = l.rfind(" -->");
    if (close == std::string::npos)
      throw failure(page.string() + ":" + std::to_string(i + 1) + ": the generated marker is not closed");
    const std::string spec = l.substr(open.size(), close - open.size());
    const auto colon = spec.find(": ");
    const std::string kind = spec.substr(0, colon), arg = colon == std::string::npos ? "" : spec.substr(colon + 2);
    std::size_t end = i + 1;
    while (end < lines.size() && lines[end] != "<!-- end generated -->") ++end;
    if (end == lines.size())
      throw failure(page.string() + ":" + std::to_string(i + 1) + ": no <!-- end generated --> after it");
    std::string have;
    for (std::size_t k = i + 1; k < end; ++k) have += lines[k] + "\n";
    std::string want;
    if (kind == "output") {
      std::string text = run(w, arg);
      if (!text.empty() && text.back() != '\n') text += '\n';
      want = "```\n" + text + "```\n";
    } else if (kind == "table") {
      const auto t = tables().find(arg);
      if (t == tables().end()) throw failure(page.string() + ":" + std::to_string(i + 1) + ": no table named " + arg);
      want = t->second(s);
    } else if (kind == "recorded") {
      // A run whose figures vary (a time), kept as it printed when recorded, build and machine named in it.
      want = "```\n" + read_file(s.results() / arg) + "```\n";
    } else if (kind == "file") {
      const fs::path f = s.root / arg;
      want = "```" + std::string(f.extension() == ".json" ? "json" : "") + "\n" + read_file(f) + "```\n";
    } else {
      throw failure(page.string() + ":" + std::to_string(i + 1) + ": unknown kind \"" + kind +
                    "\" (output, table, file, recorded)");
    }
    if (have != want) {
      if (write) {
        changed = true;
      } else {
        ++o.stale;
        std::cerr << "trinity-docgen: " << page.filename().string() << ":" << i + 1 << " (" << kind << ": " << arg
                  << ") disagrees with its source\n"
                  << first_difference(have, want) << '\n';
      }
    }
    out += write ? want : have;
    out += lines[end] + "\n";
    i = end;
  }
  if (write && changed) {
    std::ofstream(page, std::ios::binary) << out;
    std::cerr << "trinity-docgen: rewrote " << page.filename().string() << '\n';
  }
}

// The replays behind the recorded curves, run again and held to their files.
void check_replays(sources& s, const work_dir& w, outcome& o) {
  // The replay behind the preset's curve is deterministic: replay it again and hold the file to it.
  {
    const json& r = replay_record(s);
    const json again = json::parse(run(w, "PATH=\"$PWD/build/bin:$PATH\"; " + r.at("command").get<std::string>()));
    // The same hits, up to a similarity that lands on a threshold of Table 1 differently on another instruction
    // set (the flat index sums in the widest vectors the CPU has): hit rates within 0.002, the fit within 1%.
    const json& a = again.at("curves").at(0);
    const json& b = r.at("output").at("curves").at(0);
    bool same = a.at("points").size() == b.at("points").size();
    for (std::size_t i = 0; same && i < a.at("points").size(); ++i)
      same = std::fabs(a["points"][i]["hit_rate"].get<double>() - b["points"][i]["hit_rate"].get<double>()) <= 0.002;
    for (const char* k : {"kappa_per_gb", "gamma"})
      same = same && std::fabs(a["power_law"][k].get<double>() / b["power_law"][k].get<double>() - 1) <= 0.01;
    if (!same) {
      ++o.stale;
      std::cerr << "trinity-docgen: bench/results/replay-synthetic.json is not what its command prints now\n";
    }
  }
  // The Mooncake curve is replayed again where the trace is (it is not shipped whole): the same rows, exactly.
  if (fs::exists(s.root / ".." / "shared" / "traces" / "mooncake_conversation_trace.jsonl")) {
    const json& r = prefix_curve_record(s);
    const json again =
        json::parse(run(w, "cd '" + fs::absolute(s.root).string() + "' && " + r.at("command").get<std::string>()));
    if (again.at("rows") != r.at("output").at("rows")) {
      ++o.stale;
      std::cerr << "trinity-docgen: bench/results/prefix-curve-mooncake.json is not what its command prints now\n";
    }
  }
}

// --record-curation, --record-replay, --record-prefix-curve: a run's output stored as its result file.
int record_result(const std::string& source, const std::string& command, const std::string& record,
                  const std::string& record_prefix, const std::string& record_curation) {
  if (!record_curation.empty()) {
    try {
      const json out = json::parse(read_file(record_curation));
      const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
      char date[16];
      std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
      const json r{{"command", command}, {"build", "ci"}, {"date", date}, {"output", out}};
      std::ofstream(fs::path(source) / "bench/results/curation-verify-ci.json") << r.dump(2) << '\n';
      std::cerr << "trinity-docgen: recorded bench/results/curation-verify-ci.json\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "trinity-docgen: " << e.what() << '\n';
      return 2;
    }
  }
  {
    try {
      const bool prefix = !record_prefix.empty();
      const json out = json::parse(read_file(prefix ? record_prefix : record));
      const json r{{"command", command}, {"output", out}};
      const std::string file =
          prefix ? "bench/results/prefix-curve-mooncake.json" : "bench/results/replay-synthetic.json";
      std::ofstream(fs::path(source) / file) << r.dump(2) << '\n';
      std::cerr << "trinity-docgen: recorded " << file << '\n';
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "trinity-docgen: " << e.what() << '\n';
      return 2;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trinity-docgen: the docs' and presets' measured figures, generated from bench/results and runs"};
  sources s;
  std::string source, build, record, command;
  bool check = false, write = false, headers = false;
  app.add_option("--source", source, "The trinity checkout")->required();
  app.add_option("--build", build, "A build tree of it (build/bin/trinity and the examples)")->required();
  app.add_flag("--check", check, "Report every generated place that disagrees with its source; exit 1 if any");
  app.add_flag("--write", write, "Rewrite them");
  app.add_flag("--headers", headers, "Rewrite only the generated headers (what a build needs before the docs can run)");
  app.add_option("--record-replay", record, "Store this replay output (JSON) as bench/results/replay-synthetic.json");
  app.add_option("--command", command, "The command that printed it (with --record-replay or --record-prefix-curve)");
  std::string record_prefix;
  app.add_option("--record-prefix-curve", record_prefix,
                 "Store this Mooncake replay output (JSON) as bench/results/prefix-curve-mooncake.json");
  std::string record_curation;
  app.add_option("--record-curation", record_curation,
                 "Store this `trinity verify --json` output of a data-curation plan (ci build) as "
                 "bench/results/curation-verify-ci.json");
  CLI11_PARSE(app, argc, argv);
  if (!record_curation.empty() || !record.empty() || !record_prefix.empty())
    return record_result(source, command, record, record_prefix, record_curation);
  if (headers) {
    try {
      s.root = source;
      s.build = build;
      outcome o;
      measured_headers(s, true, fs::exists(s.results() / "replay-synthetic.json"), o);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "trinity-docgen: " << e.what() << '\n';
      return 2;
    }
  }
  if (check == write) {
    std::cerr << "trinity-docgen: give one of --check or --write\n";
    return 2;
  }
  try {
    s.root = source;
    s.build = build;
    outcome o;
    measured_headers(s, write, true, o);
    const work_dir w(s);
    check_replays(s, w, o);
    std::vector<fs::path> pages{s.root / "README.md"};
    for (const auto& e : fs::directory_iterator(s.root / "docs"))
      if (e.path().extension() == ".md") pages.push_back(e.path());
    std::sort(pages.begin(), pages.end());
    for (const auto& p : pages) pass_over_page(p, s, w, write, o);
    if (o.stale) {
      std::cerr
          << "trinity-docgen: " << o.stale << " generated place(s) disagree with their sources. Fix: "
          << "build/bin/trinity-docgen --source . --build build --write (or re-measure: scripts/record-results.sh)\n";
      return 1;
    }
    std::cerr << "trinity-docgen: every generated figure agrees with its source\n";
  } catch (const std::exception& e) {
    std::cerr << "trinity-docgen: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
