#pragma once
//! \file
//! A user's measured serving runs, read strictly for `trinity fit` (plan/serving_stack_fit.hpp):
//!
//!   {"runs": [{"name": "8b-b1", "system": "dgx-h100",
//!              "workload": {"name": "chat", "type": "llm-serve", "model": "llama3-8b",
//!                           "prompt_tokens": 128, "output_tokens": 128},
//!              "parallelism": "tp=1,batch=1,weights=bf16,kv=bf16",
//!              "measured": {"tpot_s": 0.0071}}]}
//!
//! As a training run's (workloads/measured_runs.hpp): "role" and "source" may be given, "system" is a preset or a
//! file beside this one, and "parallelism" a configuration as `plan --parallelism` prices one. "workload" is an
//! llm-serve workload as --workload reads it; its objectives and hit rate may be left out, since a run is priced
//! as it ran (none is read without a prefix cache in the configuration, which then needs the hit rate). "measured"
//! holds any of ttft_s, tpot_s and output_tokens_per_device_second. A run the serving model cannot price is
//! refused by its path and name.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/serving_configuration.hpp>
#include <trinity/plan/serving_stack_fit.hpp>
#include <trinity/workloads/measured_runs.hpp>
#include <trinity/workloads/registry.hpp>

namespace trinity::workloads {

namespace detail {

inline constexpr io::key measured_serving_keys[] = {{"ttft_s"}, {"tpot_s"}, {"output_tokens_per_device_second"}};

//! Whether a run's workload object says it is a serving one.
inline bool serving_run(const io::json& run) {
  return run.is_object() && run.contains("workload") && run.at("workload").is_object() &&
         run.at("workload").value("type", io::json()) == "llm-serve";
}

//! The run's llm-serve workload, read as any llm-serve workload is: objectives and a hit rate left out are none.
inline plan::serving_workload measured_serving_workload(const io::object& o, const plan::system& s,
                                                        const std::filesystem::path& base) {
  const io::json& given = o.at("workload");
  if (given.contains("stack"))
    io::fail(o.path("workload.stack"), "names a stack; the fit finds the run's stack. Fix: leave \"stack\" out");
  std::optional<any_workload> read;
  try {
    read = read_workload(given, s, {base, {}});
  } catch (const invalid_input& e) {
    io::fail(io::join(o.path("workload"), e.field() == "(top)" ? "" : e.field()), e.problem());
  }
  return read->as<plan::serving_workload>();
}

inline plan::measured_serving_run measured_serving_run(const io::json& j, const std::string& path,
                                                       const std::filesystem::path& base) {
  const io::object o(j, path, measured_run_keys, "a measured run");
  plan::measured_serving_run r;
  read_run_head(o, r, base);
  if (!serving_run(j))
    io::fail(o.path("workload"),
             "is not an llm-serve workload, and the file's other runs are; a fit reads one kind. "
             "Fix: fit training runs and serving runs from two files");
  r.workload = measured_serving_workload(o, r.on, base);
  const bool hit_rate_given = o.at("workload").contains("hit_rate");
  r.configuration = o.text("parallelism");
  const io::object m(o.at("measured"), o.path("measured"), measured_serving_keys,
                     "what the run measured: any of ttft_s, tpot_s, output_tokens_per_device_second");
  if (m.has("ttft_s")) r.ttft_s = m.positive_number("ttft_s", 1e6);
  if (m.has("tpot_s")) r.tpot_s = m.positive_number("tpot_s", 1e3);
  if (m.has("output_tokens_per_device_second"))
    r.throughput = m.positive_number("output_tokens_per_device_second", 1e9);
  if (!r.ttft_s && !r.tpot_s && !r.throughput)
    io::fail(o.path("measured"), "give any of ttft_s, tpot_s, output_tokens_per_device_second");
  plan::priced_configuration c;
  try {
    c = plan::price_configuration(r.on, r.workload, r.configuration, o.path("parallelism"));
  } catch (const invalid_input& e) {
    io::fail(path, "\"" + r.name + "\" cannot be priced: " + e.what());
  }
  if (c.configuration.plan.cache > bytes{} && !hit_rate_given)
    io::fail(o.path("workload.hit_rate"),
             "is needed: the configuration keeps a prefix cache, whose hits the run's "
             "time depends on. Fix: give the hit rate its trace measured");
  return r;
}

}  // namespace detail

//! Whether a MEASURED.json holds serving runs (any run's workload an llm-serve one): trinity fit then fits a
//! serving stack.
inline bool holds_serving_runs(const io::json& j) {
  if (!j.is_object() || !j.contains("runs") || !j.at("runs").is_array()) return false;
  for (const auto& r : j.at("runs"))
    if (detail::serving_run(r)) return true;
  return false;
}

//! Every serving run of a MEASURED.json, in order; files it names are found in `base`, its folder.
inline std::vector<plan::measured_serving_run> read_measured_serving_runs(const io::json& j,
                                                                          const std::filesystem::path& base = {}) {
  const io::object o(j, "", detail::measured_file_keys, "measured runs, {\"runs\": [...]}");
  std::vector<plan::measured_serving_run> runs;
  io::for_each(
      o.at("runs"), "runs",
      [&](const io::json& r, const std::string& at) { runs.push_back(detail::measured_serving_run(r, at, base)); },
      10'000);
  detail::require_unique_names(runs);
  return runs;
}

}  // namespace trinity::workloads
