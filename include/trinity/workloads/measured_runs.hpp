#pragma once
//! \file
//! A user's measured runs, read strictly for `trinity fit` (plan/stack_fit.hpp):
//!
//!   {"runs": [{"name": "13b-8gpu", "system": "dgx-h100",
//!              "workload": {"name": "llama-13b", "model": "llama2-13b", "sequence": 4096, "global_batch": 64},
//!              "parallelism": "tp=1,pp=1,dp=8,zero=3",
//!              "measured": {"step_time_s": 9.7, "device_bytes": "61.3GB"}}]}
//!
//! A run may say its "role": "fit" (the default) shapes the stack, "held-out" only judges it; and its "source".
//! "system" is a preset's name or a system file beside this one; "workload" an object as --workload reads it (a
//! training workload with a transformer's shape); "parallelism" a layout as --parallelism reads it; "measured" a
//! step time, peak device bytes (as torch.cuda.max_memory_allocated reports them on the busiest rank), or both.
//! A run the step model cannot price (no shape, a layout its workload cannot run, more GPUs than its system has)
//! is refused by its path and name: a fit never drops a run without a word.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/io/system.hpp>
#include <trinity/plan/stack_fit.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/registry.hpp>

namespace trinity::workloads {

namespace detail {

inline constexpr io::key measured_file_keys[] = {{"about"}, {"runs", io::required}};
inline constexpr io::key measured_run_keys[] = {{"name", io::required},
                                                {"system", io::required},
                                                {"workload", io::required},
                                                {"parallelism", io::required},
                                                {"measured", io::required},
                                                {"role"},
                                                {"source"}};
inline constexpr io::key measured_keys[] = {{"step_time_s"}, {"device_bytes"}};

inline plan::system measured_system(const io::object& o, const std::filesystem::path& base) {
  const std::string name = o.text("system");
  if (auto s = plan::presets::find(name)) return *s;
  const std::string file = (base / name).string();
  try {
    return io::read_system(io::load(file), std::filesystem::path(file).parent_path());
  } catch (const invalid_input& e) {
    io::fail(o.path("system"), "\"" + name + "\" is neither a system preset" +
                                   trinity::detail::suggestion(name, plan::presets::names()) +
                                   " nor a system file read whole: " + e.what());
  }
}

//! The run's workload: a training workload with a transformer's shape, on its default stack (the fit finds one).
inline plan::training_workload measured_workload(const io::object& o, const plan::system& s,
                                                 const std::filesystem::path& base) {
  io::json given = o.at("workload");
  if (given.is_object() && !given.contains("type")) given["type"] = "training";  // a training runs file's kind
  std::optional<any_workload> read;
  try {
    read = read_workload(given, s, {base, {}});
  } catch (const invalid_input& e) {  // the reader names the field inside the workload: put it at its path here
    io::fail(io::join(o.path("workload"), e.field() == "(top)" ? "" : e.field()), e.problem());
  }
  auto& any = *read;
  if (any.type() != "training")
    io::fail(o.path("workload"),
             "is a \"" + std::string(any.type()) +
                 "\" workload; trinity fit fits a training stack from training runs, or a serving stack from "
                 "llm-serve runs, one kind a file");
  auto w = any.as<plan::training_workload>();
  if (!w.shape)
    io::fail(o.path("workload"), "has no transformer shape; give \"model\" or heads, ffn_hidden, vocabulary");
  if (o.at("workload").contains("stack"))
    io::fail(o.path("workload.stack"), "names a stack; the fit finds the run's stack. Fix: leave \"stack\" out");
  return w;
}

//! What every measured run states first, training or serving: its name, its role and where it ran.
template <class Run>
void read_run_head(const io::object& o, Run& r, const std::filesystem::path& base) {
  r.name = o.text("name");
  static constexpr std::string_view roles[] = {"fit", "held-out"};
  if (o.has("role")) r.held_out = io::choice(o.at("role"), o.path("role"), roles) == "held-out";
  r.on = measured_system(o, base);
}

inline plan::measured_training_run measured_run(const io::json& j, const std::string& path,
                                                const std::filesystem::path& base) {
  const io::object o(j, path, measured_run_keys, "a measured run");
  plan::measured_training_run r;
  read_run_head(o, r, base);
  r.workload = measured_workload(o, r.on, base);
  r.layout = io::parse_parallel_layout(o.text("parallelism"), o.path("parallelism"));
  if (!r.on.scale_out && r.layout.gpus() > r.on.device.count)
    io::fail(o.path("parallelism"), "uses " + std::to_string(r.layout.gpus()) + " GPUs, and " + r.on.name + " has " +
                                        std::to_string(r.on.device.count) + " with no scale-out link");
  const io::object m(o.at("measured"), o.path("measured"), measured_keys,
                     "what the run measured: step_time_s, device_bytes or both");
  if (m.has("step_time_s")) r.step_time_s = m.positive_number("step_time_s", 1e7);
  if (m.has("device_bytes")) {
    const double b = m.quantity<bytes>("device_bytes").value();
    if (!(b > 0)) io::fail(m.path("device_bytes"), "must be positive");
    r.device_bytes = b;
  }
  if (!r.step_time_s && !r.device_bytes) io::fail(o.path("measured"), "give step_time_s, device_bytes or both");
  try {
    (void)plan::price_with(r, {});
  } catch (const invalid_input& e) {
    io::fail(path, "\"" + r.name + "\" cannot be priced: " + e.what());
  }
  return r;
}

//! Each run named once: a fit's table and a stack's fitted_on name runs by their names.
template <class Run>
void require_unique_names(const std::vector<Run>& runs) {
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (runs[k].name == runs[i].name)
        io::fail(io::index("runs", i) + ".name", "\"" + runs[i].name + "\" names another run too; name each once");
}

}  // namespace detail

//! Every run of a MEASURED.json, in order; files it names are found in `base`, its folder.
inline std::vector<plan::measured_training_run> read_measured_runs(const io::json& j,
                                                                   const std::filesystem::path& base = {}) {
  const io::object o(j, "", detail::measured_file_keys, "measured runs, {\"runs\": [...]}");
  std::vector<plan::measured_training_run> runs;
  io::for_each(
      o.at("runs"), "runs",
      [&](const io::json& r, const std::string& at) { runs.push_back(detail::measured_run(r, at, base)); }, 10'000);
  detail::require_unique_names(runs);
  return runs;
}

}  // namespace trinity::workloads
