// trinity-train-check: runs trinity-train several ways and checks what the
// issue promises: the same loss at every step (relative difference at most
// --tolerance), resident bytes per rank within 1% of model/sharding.hpp, the
// peak within the stated fixed overheads, and bytes sent per step within 1% of
// the model. Prints a table of what it measured; exits 1 on the first broken
// promise, naming it.
//
//   trinity-train-check --train build/bin/trinity-train [--launcher "mpirun -n 4"] [--setup "ARGS"]...
//                       --run "--ranks 4 --stage 0" --run "--ranks 4 --stage 3" [--check-model]

#include <algorithm>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/shard/checkpoint_directory.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct run_output {
  std::string args;
  std::map<long, double> loss;
  nlohmann::json summary;
};

run_output run(const std::vector<std::string>& command, const std::string& args) {
  run_output out{args, {}, {}};
  // The arguments as the test wrote them, a word each between spaces, run with no shell between.
  std::vector<std::string> argv = command;
  std::istringstream words(args);
  for (std::string w; words >> w;) argv.push_back(w);
  const auto r = trinity::detail::run_program(argv);
  std::cerr << r.err;
  if (!r.end.succeeded())
    throw std::runtime_error(trinity::detail::shell_quoted(argv) + " ended with " + r.end.describe() + ": " + r.err);
  const std::string& text = r.out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    if (j.contains("summary"))
      out.summary = j["summary"];
    else if (!j.at("skipped").get<bool>())
      out.loss[j.at("step").get<long>()] = j.at("loss").get<double>();
  }
  if (out.loss.empty() || out.summary.is_null())
    throw std::runtime_error(trinity::detail::shell_quoted(argv) + " printed no steps or no summary");
  return out;
}

bool within(double measured, double predicted, double rel) {
  return std::abs(measured - predicted) <= rel * std::max(std::abs(predicted), 1.0);
}

// EXPECT(promise, what broke): prints and counts a broken promise, and goes on to check the rest.
#define EXPECT(promise, what)                  \
  do {                                         \
    if (!(promise)) {                          \
      std::cout << "FAIL: " << (what) << '\n'; \
      ++failures;                              \
    }                                          \
  } while (false)

// A mixture of experts: every rank's all-to-all bytes exactly as the exchange counts them, and under balanced
// routing exactly as the step model counts them.
int check_experts(const run_output& o) {
  int failures = 0;
  const auto& last = o.summary["last_step"];
  const auto& experts = o.summary["experts"];
  const auto ranks = o.summary["ranks"].get<std::size_t>();
  for (std::size_t r = 0; r < ranks; ++r) {
    EXPECT(last["expert_parallel_bytes"][r] == last["expert_parallel_counted"][r],
           o.args + ": rank " + std::to_string(r) + " sent " + last["expert_parallel_bytes"][r].dump() +
               " bytes over its expert group, the exchange's count " + last["expert_parallel_counted"][r].dump());
    if (!experts["modelled_bytes_per_step"][r].is_null())
      EXPECT(last["expert_parallel_bytes"][r].get<double>() == experts["modelled_bytes_per_step"][r].get<double>(),
             o.args + ": rank " + std::to_string(r) + " sent " + last["expert_parallel_bytes"][r].dump() +
                 " bytes over its expert group, the step model " + experts["modelled_bytes_per_step"][r].dump());
  }
  // Some rank exchanged: rank 0 does unless a pipeline puts the experts on another stage.
  const auto& sent = last["expert_parallel_bytes"];
  if (experts["ep"].get<std::size_t>() > 1)
    EXPECT(std::any_of(sent.begin(), sent.end(), [](const auto& b) { return b.template get<double>() > 0; }),
           o.args + ": no rank exchanged anything over its expert group");
  return failures;
}

// A model-parallel run: what each rank sent between stages exactly as the mechanism's count, rank 0's kept
// activations exactly, and ZeRO's traffic over each data-parallel group within 1%.
int check_model_parallel(const run_output& o) {
  int failures = 0;
  const auto& last = o.summary["last_step"];
  const auto& model = o.summary["pipeline"];
  const auto ranks = o.summary["ranks"].get<std::size_t>();
  for (std::size_t r = 0; r < ranks; ++r) {
    EXPECT(last["pipeline_bytes"][r] == model["bytes_per_step"][r],
           o.args + ": rank " + std::to_string(r) + " sent " + last["pipeline_bytes"][r].dump() +
               " bytes between stages, the model " + model["bytes_per_step"][r].dump());
    if (!model["data_parallel_bytes_per_step"].is_null())  // null: a codec's frames, priced by verify
      EXPECT(within(last["data_parallel_bytes"][r].get<double>(),
                    model["data_parallel_bytes_per_step"][r].get<double>(), 0.01),
             o.args + ": rank " + std::to_string(r) + " sent " + last["data_parallel_bytes"][r].dump() +
                 " bytes to its data-parallel group, the model " + model["data_parallel_bytes_per_step"][r].dump());
    EXPECT(within(last["resident_bytes"]["offloaded"][r].get<double>(),
                  model["offloaded_bytes_per_rank"][r].get<double>(), 0.01),
           o.args + ": rank " + std::to_string(r) + " offloaded " + last["resident_bytes"]["offloaded"][r].dump() +
               " bytes of states, the model " + model["offloaded_bytes_per_rank"][r].dump());
    EXPECT(within(last["offload_bytes"][r].get<double>(), model["offload_bytes_per_step"][r].get<double>(), 0.01),
           o.args + ": rank " + std::to_string(r) + " moved " + last["offload_bytes"][r].dump() +
               " bytes to and from the offload tier, the model " + model["offload_bytes_per_step"][r].dump());
  }
  // A tensor-parallel run: what each rank sent over its tensor group exactly as counted.
  for (std::size_t r = 0; r < ranks; ++r)
    EXPECT(last["tensor_parallel_bytes"][r] == model["tensor_parallel_bytes_per_step"][r],
           o.args + ": rank " + std::to_string(r) + " sent " + last["tensor_parallel_bytes"][r].dump() +
               " bytes over its tensor group, the model " + model["tensor_parallel_bytes_per_step"][r].dump());
  // A context-parallel run: what each rank sent around its context ring exactly as counted, and a ring that ran.
  // (The ring runs on the stage holding the first layer: rank 0's, or with --chunk-layers placing none there, a later
  // one's.)
  if (last.value("cp", 1) > 1)
    EXPECT(std::any_of(last["context_parallel_bytes"].begin(), last["context_parallel_bytes"].end(),
                       [](const nlohmann::json& sent) { return sent.get<double>() > 0; }),
           o.args + ": no rank sent anything around its context ring");
  for (std::size_t r = 0; r < ranks; ++r)
    EXPECT(last["context_parallel_bytes"][r] == model["context_parallel_bytes_per_step"][r],
           o.args + ": rank " + std::to_string(r) + " sent " + last["context_parallel_bytes"][r].dump() +
               " bytes around its context ring, the model " + model["context_parallel_bytes_per_step"][r].dump());
  // The layers' activations each rank held at most, and the layer forwards it ran (recomputed ones too), exactly as
  // its schedule and each chunk's kept and rebuilt floats count them.
  for (std::size_t r = 0; r < ranks; ++r) {
    EXPECT(last["peak_bytes"]["activations"][r] == model["peak_activation_bytes"][r],
           o.args + ": rank " + std::to_string(r) + " held " + last["peak_bytes"]["activations"][r].dump() +
               " bytes of activations at most, the count " + model["peak_activation_bytes"][r].dump());
    EXPECT(last["layer_forwards"][r] == model["layer_forwards_per_step"][r],
           o.args + ": rank " + std::to_string(r) + " ran " + last["layer_forwards"][r].dump() +
               " layer forwards, the count " + model["layer_forwards_per_step"][r].dump());
  }
  EXPECT(last["peak_stashed_chunks"][0] == model["peak_stashed_chunks_rank0"],
         o.args + ": rank 0 kept " + last["peak_stashed_chunks"][0].dump() + " chunks' activations, the model " +
             model["peak_stashed_chunks_rank0"].dump());
  return failures;
}

// A data-parallel run under --check-model: resident bytes per rank and kind within 1% of model/sharding.hpp,
// the peak within the stated overheads, the bytes sent and moved to the offload tier within 1%.
int check_sharding(const run_output& o) {
  int failures = 0;
  const auto& last = o.summary["last_step"];
  const auto& res = last["resident_bytes"];
  const auto& model = o.summary["model"];
  const auto ranks = o.summary["ranks"].get<std::size_t>();
  for (const char* kind : {"parameters", "gradients", "optimizer_states", "offloaded"})
    for (std::size_t r = 0; r < ranks; ++r)
      EXPECT(within(res[kind][r].get<double>(), model[kind].get<double>(), 0.01),
             o.args + ": rank " + std::to_string(r) + " holds " + res[kind][r].dump() + " bytes of " + kind +
                 ", the model " + model[kind].dump());
  const double total =
      model["parameters"].get<double>() + model["gradients"].get<double>() + model["optimizer_states"].get<double>();
  for (std::size_t r = 0; r < ranks; ++r) {
    const double allowed = 1.01 * total + o.summary["fixed_overhead_bytes"].get<double>() +
                           last["peak_bytes"]["activations"][r].get<double>();
    EXPECT(last["peak_bytes"]["device"][r].get<double>() <= allowed,
           o.args + ": rank " + std::to_string(r) + " peaked at " + last["peak_bytes"]["device"][r].dump() +
               " bytes, above the model plus overheads (" + std::to_string(allowed) + ")");
  }
  // The pass's activations at their peak: its layers' inputs and output, and a recomputed pair rebuilt.
  for (std::size_t r = 0; r < ranks; ++r)
    EXPECT(last["peak_bytes"]["activations"][r] == model["activation_peak_bytes"][r],
           o.args + ": rank " + std::to_string(r) + " held " + last["peak_bytes"]["activations"][r].dump() +
               " bytes of activations at most, the count " + model["activation_peak_bytes"][r].dump());
  if (!model["sent_bytes_per_step"].is_null())
    for (std::size_t r = 0; r < ranks; ++r)
      EXPECT(within(last["sent_bytes"][r].get<double>(), model["sent_bytes_per_step"].get<double>(), 0.01),
             o.args + ": rank " + std::to_string(r) + " sent " + last["sent_bytes"][r].dump() + " bytes, the model " +
                 model["sent_bytes_per_step"].dump());
  for (std::size_t r = 0; r < ranks; ++r)
    EXPECT(within(last["offload_bytes"][r].get<double>(), model["offload_bytes_per_step"].get<double>(), 0.01),
           o.args + ": rank " + std::to_string(r) + " moved " + last["offload_bytes"][r].dump() +
               " bytes to and from the offload tier, the model " + model["offload_bytes_per_step"].dump());
  return failures;
}

// A checkpoint's manifest rewritten to list the files now in `dir`, with their sizes and checksums: the forgery
// an attacker who can write the directory can make, so that the tests reach the checks the manifest stands in
// front of (a stage directory's hostile name, pieces of different runs).
int reseal_manifest(const std::string& dir) {
  auto m = trinity::shard::read_checkpoint_manifest(dir);
  std::vector<std::string> files, others;
  trinity::shard::detail::walk(dir, files, others);
  m.pieces.clear();
  for (const auto& f : files) m.pieces.push_back(trinity::shard::detail::piece_of(dir, f, false));
  std::ofstream(std::filesystem::path(dir) / "checkpoint.manifest", std::ios::trunc) << trinity::shard::to_text(m);
  std::cout << "resealed " << dir << ": " << m.pieces.size() << " pieces\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trinity-train-check: runs trinity-train several ways and checks parity, memory and traffic"};
  std::string train, launcher;
  std::vector<std::string> setups, runs, plain_runs;
  double tolerance = 1e-6;
  bool check_model = false;
  app.add_option("--train", train, "path of trinity-train")->required();
  app.add_option("--launcher", launcher, "prefix of every command, e.g. \"mpirun -n 4\"");
  app.add_option("--setup", setups, "arguments of a run whose output is not checked (writes a checkpoint, say)");
  std::string reseal;
  app.add_option("--run", runs, "arguments of a checked run; the first is the baseline");
  app.add_option("--reseal", reseal,
                 "rewrite DIR's checkpoint manifest to list the files now in it (a forged checkpoint, for the tests "
                 "of the checks behind the manifest), and do nothing else");
  app.add_option("--plain-run", plain_runs, "arguments of a checked run started without the launcher");
  app.add_option("--tolerance", tolerance, "largest relative loss difference from the baseline");
  app.add_flag("--check-model", check_model, "check memory and traffic against model/sharding.hpp");
  CLI11_PARSE(app, argc, argv);
  if (!reseal.empty()) return reseal_manifest(reseal);
  if (runs.empty()) {
    std::cerr << "trinity-train-check: give --run (or --reseal)\n";
    return 2;
  }
  // The launcher's words, then the program: each an argument of its own, no shell between.
  std::vector<std::string> command;
  std::istringstream launcher_words(launcher);
  for (std::string w; launcher_words >> w;) command.push_back(w);
  command.push_back(train);
  int failures = 0;
  try {
    for (const auto& s : setups) run(command, s);
    std::vector<run_output> outs;
    for (const auto& r : runs) outs.push_back(run(command, r));
    for (const auto& r : plain_runs) outs.push_back(run({train}, r));
    const auto& base = outs.front();
    std::cout
        << "run | steps | last loss | max rel. loss diff | params/rank | grads/rank | optim/rank | offloaded/rank "
           "| peak/rank | sent/step/rank\n";
    for (const auto& o : outs) {
      double worst = 0;
      std::size_t common = 0;
      for (const auto& [step, loss] : o.loss) {
        const auto b = base.loss.find(step);
        if (b == base.loss.end()) continue;
        ++common;
        worst = std::max(worst, std::abs(loss - b->second) / std::abs(b->second));
      }
      const auto& last = o.summary["last_step"];
      const auto& res = last["resident_bytes"];
      std::cout << o.args << " | " << o.loss.size() << " | " << o.loss.rbegin()->second << " | " << worst << " | "
                << res["parameters"][0] << " | " << res["gradients"][0] << " | " << res["optimizer_states"][0] << " | "
                << res["offloaded"][0] << " | " << last["peak_bytes"]["device"][0] << " | " << last["sent_bytes"][0]
                << '\n';
      EXPECT(common > 0, o.args + ": no step in common with the baseline");
      EXPECT(worst <= tolerance,
             o.args + ": loss differs from the baseline by " + std::to_string(worst) + " (relative)");
      if (o.summary.contains("experts")) failures += check_experts(o);
      if (o.summary.contains("pipeline"))
        failures += check_model_parallel(o);
      else if (check_model)
        failures += check_sharding(o);
    }
  } catch (const std::exception& e) {
    std::cout << "FAIL: " << e.what() << '\n';
    return 1;
  }
  std::cout << (failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}
