// trinity plan and trinity simulate: a system and a workload in, the best trade-off out, with the Pareto front
// it was picked from and why, or the chosen plan run on the simulated fabric. A system or workload is a preset
// name or a JSON file (docs/planning.md has the schema); every bad field is named by its path:
// `tiers[2].capacity: -1GB must be positive`. What a workload is and prints is its own (workloads/*.hpp);
// this file reads the flags and hands them to the registry.

#include "cli.hpp"
#include "workload_from.hpp"

#include <trinity/io/stack_file.hpp>
#include <trinity/io/system.hpp>
#include <trinity/plan/plausibility.hpp>
#include <trinity/presets.hpp>
#include <trinity/workloads.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace trinity::cli {

using json = nlohmann::json;

plan::system system_from(const std::string& arg, bool strict) {
  if (auto s = plan::presets::find(arg)) return *s;
  const auto names = plan::presets::names();
  auto s = from_file(arg, "--system", names,
                     [&](const json& j) { return io::read_system(j, std::filesystem::path(arg).parent_path()); });
  for (const auto& x : plan::implausible_figures(s)) {
    if (strict) throw bad_flag("--system", arg, x.field + ": " + x.message + " (--strict refuses it)");
    std::cerr << "trinity: warning: " << arg << ": " << x.field << ": " << x.message << '\n';
  }
  return s;
}

any_workload workload_from(const std::string& arg, const plan::system& s) {
  if (auto w = workloads::find_preset(arg, s)) return std::move(*w);
  const auto names = workloads::preset_names();
  return from_file(arg, "--workload", names, [&](const json& j) {
    return workloads::read_workload(j, s, {std::filesystem::path(arg).parent_path(), [](const std::string& what) {
                                             std::cerr << "trinity: " << what << '\n';
                                           }});
  });
}

namespace {

// A stack the workload assumed gives way to --stack; one it names is refused beside another: one of the two must go.
template <class Stack>
void replace_stack(const std::string& arg, Stack stack, Stack& given, plan::assumptions& assumed) {
  const auto it = std::find_if(assumed.begin(), assumed.end(), [](const auto& x) { return x.field == "stack"; });
  if (it == assumed.end() && given.name != stack.name)
    throw bad_flag("--stack", arg, "the workload names the stack \"" + given.name + "\"; give one of the two");
  if (it != assumed.end()) assumed.erase(it);
  given = std::move(stack);
}

// --stack: the stack a training or llm-serve workload is priced with, a built-in's name or a file `trinity fit`
// wrote, in place of the default it assumed.
void apply_stack(const std::string& arg, any_workload& w) {
  if (arg.empty()) return;
  if (w.type() == "llm-serve") {
    auto& d = w.as<plan::serving_workload>();
    const auto names = plan::serving_stacks::names();
    auto stack = plan::serving_stacks::find(arg)
                     ? *plan::serving_stacks::find(arg)
                     : from_file(arg, "--stack", names, [](const json& j) { return io::read_serving_stack(j); });
    return replace_stack(arg, std::move(stack), d.stack, d.assumed);
  }
  if (w.type() != "training")
    throw bad_flag("--stack", arg,
                   "prices a training or llm-serve workload; this one is \"" + std::string(w.type()) + "\"");
  auto& d = w.as<plan::training_workload>();
  const auto names = plan::stacks::names();
  auto stack = plan::stacks::find(arg)
                   ? *plan::stacks::find(arg)
                   : from_file(arg, "--stack", names, [](const json& j) { return io::read_stack(j); });
  replace_stack(arg, std::move(stack), d.stack, d.assumed);
}

// The flags as typed, with the profile reader that knows the codec catalogue.
workloads::request with_reader(workloads::request a) {
  a.planning.read_profile = read_profile;
  return a;
}

void run_plan(const workloads::request& a) {
  if (!a.plot.empty()) trinity::detail::require_output_file("--plot", a.plot);  // before the search, not after it
  const auto s = system_from(a.system, a.strict);
  auto w = workload_from(a.workload, s);
  apply_stack(a.stack, w);
  workloads::plan(with_reader(a), s, w, std::cout);
}

void run_simulate(const workloads::request& a) {
  const auto s = system_from(a.system, a.strict);
  auto w = workload_from(a.workload, s);
  workloads::simulate(with_reader(a), s, w, std::cout);
}

}  // namespace

void add_planning_flags(CLI::App& cmd, planning_flags& f) {
  cmd.add_option("--objective", f.objective, "time (default), energy, or cost (dollars; needs a priced system)")
      ->type_name("time|energy|cost");
  cmd.add_option("--profile", f.profile,
                 "Gradient codec costs from `trinity calibrate --out` (default: the figures "
                 "in docs/compression.md)")
      ->type_name("FILE");
  cmd.add_option("--link-budget", f.link_budget,
                 "Most bytes a rank may send per training step, or a device per "
                 "edge frame (default: no limit)")
      ->type_name("SIZE");
  cmd.add_option("--error-budget", f.error_budget,
                 "Largest relative gradient error a codec may add (default: the "
                 "workload's, 0.01)")
      ->type_name("NUMBER");
}

void add_layout_flags(CLI::App& cmd, std::string& parallelism, std::size_t& gpus, const std::string& what) {
  cmd.add_option("--parallelism", parallelism,
                 "A transformer training workload: " + what +
                     "; `data`: the data-parallel planner's plan (the "
                     "default for a workload without a transformer shape)")
      ->type_name("LAYOUT|search|data")
      ->check(non_empty("a layout (tp=2,dp=4), search or data"));
  cmd.add_option("--gpus", gpus, "GPUs the layout search lays out, as for plan")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
}

void register_plan(CLI::App& app) {
  auto a = std::make_shared<workloads::request>();
  auto* p = app.add_subcommand("plan", "Pick the best trade-off for a system and a workload, and explain it");
  std::string systems;  // every preset, from the list `find` reads: none missing, none stale
  for (const auto n : plan::presets::names()) systems += (systems.empty() ? "" : ", ") + std::string(n);
  p->add_option("--system", a->system,
                "A preset (" + systems +
                    "; trinity presets systems lists them) or a JSON file (trinity presets --system "
                    "NAME writes one)")
      ->type_name("PRESET|FILE");
  std::string workload_presets;  // every kind's, from the registry `find_preset` reads
  for (const auto n : workloads::preset_names())
    workload_presets += (workload_presets.empty() ? "" : ", ") + std::string(n);
  p->add_option("--workload", a->workload,
                "A preset (" + workload_presets +
                    "; trinity presets workloads lists them with their kinds) or a JSON "
                    "file")
      ->type_name("PRESET|FILE");
  add_planning_flags(*p, a->planning);
  p->add_option("--stack", a->stack,
                "A training or serving workload's software stack: a built-in (training: megatron-core, the default; "
                "serving: tensorrt-llm, the default) or a file `trinity fit` wrote from your own runs; its constants "
                "price the workload and its bands give the interval")
      ->type_name("NAME|FILE")
      ->check(non_empty("a stack's name or file"));
  p->add_option("--plot", a->plot, "Draw the feasible plans and the Pareto front to this PNG (gnuplot)")
      ->type_name("FILE");
  p->add_option("--parallelism", a->parallelism,
                "Price one parallel layout of a transformer training workload, no search: "
                "tp=8,pp=8,vpp=1,cp=1,dp=1,mbs=1,recompute=none|selective|full,sp=on|off,zero=0..3 (a missing key is "
                "1, none, off, 0; recompute_layers=N beside recompute=full: each chunk's first N only, or with "
                "recompute_method=uniform every layer in groups of N; "
                "docs/parallelism.md has every key); or one llm-serve configuration: "
                "tp=4,batch=64,weights=bf16|fp16|fp8|int8|int4,"
                "kv=bf16|fp16|fp8|int8[,prefix=TIER:SIZE]; `search` (the default for a workload with a transformer "
                "shape): every layout, the "
                "best and why; `dynamic`: a layout per sequence_mix bucket; `data` (the default without a shape): the "
                "data-parallel planner (DDP, ZeRO 1-3, codecs, offload and placement across the system's tiers)")
      ->type_name("LAYOUT|search|dynamic|data")
      ->check(non_empty("a layout (tp=2,dp=4), search, dynamic or data"));
  p->add_option("--gpus", a->gpus,
                "GPUs the layout search lays out (default: the workload's ranks; more than the "
                "system's devices needs its scale-out link)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  p->add_option("--memory-headroom", a->memory_headroom,
                "With --parallelism: the fraction of device memory a layout leaves free (allocator, workspaces), "
                "e.g. 0.1; default 0")
      ->type_name("FRACTION")
      ->check(finite_range(0.0, 0.99));
  p->add_flag("--json", a->json, "Print JSON: choice, predicted, pareto, explanation");
  p->add_flag("--strict", a->strict,
              "Refuse a system file whose device, tier or link figure is more than 10x from every preset of its kind "
              "(default: warn)");
  p->callback([a] { run_plan(*a); });

  auto sa = std::make_shared<workloads::request>();
  auto* sim =
      app.add_subcommand("simulate", "Run the chosen plan on the simulated fabric, beside what the planner predicted");
  sim->add_option("--system", sa->system,
                  "A preset or a JSON file: a layout runs on its own link hierarchy; the data-parallel planner's plan "
                  "needs a fabric (gb200-nvl72-cxl, h100-ib-cluster), an edge workload a server")
      ->type_name("PRESET|FILE");
  sim->add_option("--workload", sa->workload, "A preset or a JSON file, as for plan")->type_name("PRESET|FILE");
  add_planning_flags(*sim, sa->planning);
  sim->add_option("--trace", sa->trace,
                  "An llm-serve workload: the block-hashed trace (Mooncake's JSONL format) "
                  "whose KV loads to replay on the fabric")
      ->type_name("FILE.jsonl");
  add_layout_flags(*sim, sa->parallelism, sa->gpus,
                   "lay this layout (as for plan), or the layout search's choice "
                   "(`search`, the default), on the system's own link hierarchy");
  sim->add_flag("--json", sa->json, "Print JSON");
  sim->add_flag("--strict", sa->strict, "Refuse an implausible system file, as for plan");
  sim->callback([sa] { run_simulate(*sa); });
}

}  // namespace trinity::cli
