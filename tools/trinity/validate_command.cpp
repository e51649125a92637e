// trinity validate --runs FILE --probe FILE [--json]: the parallel training model against measured runs.
// trinity validate --runs FILE --probe FILE --explain NAME [--json]: one of the runs, where its predicted step goes.
// trinity validate --serving --runs FILE [--explain NAME] [--json]: the serving model against published serving
// runs, or one of them with every figure the model gives it.
//
// Two kinds of measurement, and what each is used for:
//  - the probe (bench/gpu/transformer_probe.py on one H100): its GEMM sweep fits the H100's GEMM curve; its
//    layer stacks without recomputation fit κ, the memory traffic per byte of activations kept; the stacks
//    with selective and full recomputation are held out; every stack's stored activation bytes are compared
//    with the model's count, which has no free parameter;
//  - published runs (bench/published/training-runs.json): those marked "fit" fit the A100's GEMM curve (no
//    A100 was lent to sweep); those marked "held-out" judge the model.

#include "cli.hpp"

#include <trinity/io/parallel_calibration.hpp>
#include <trinity/io/priced_alike.hpp>
#include <trinity/io/serving_runs.hpp>
#include <trinity/reports/serving_stack_validation.hpp>
#include <trinity/reports/serving_validation.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/model/parallel_fit.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/units/format.hpp>
#include <trinity/workloads/parallel_breakdown.hpp>

#include <trinity/detail/nearest_name.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace trinity::cli {

namespace {

using reports::fixed;
using reports::signed_percent;

// A published run priced.
using priced_row = io::priced_run;

// The calibration, the runs priced, and the probe's stacks checked: what `trinity validate` prints.
struct validation {
  io::parallel_calibration cal;
  io::transformer_probe pr;
  std::vector<priced_row> rows;
  std::size_t fit_n, held_runs, exact, held_n;
  double fit_mean, fit_worst, held_mean, held_max, worst_bytes, held_sum, held_worst;
  // Held-out runs of the two kinds the 16-bit dense ones do not cover: fp8 dense, and mixtures of experts.
  std::tuple<std::size_t, double, double> fp8, moe;
};

// What a run exercises: a mixture of experts, fp8 GEMMs on a dense model, or a 16-bit dense model.
std::string kind_of(const io::published_run& r) { return r.job.shape.moe() ? "moe" : r.job.fp8 ? "fp8" : "dense"; }

// The text of the source a run names; empty where the file gives none.
std::string source_text(const io::published_runs& file, const io::published_run& r) {
  const auto source = file.sources.find(r.source);
  return source == file.sources.end() ? std::string() : source->second;
}

// A priced run as the table's JSON lists it, and as --explain --json prints it alone: its figures, where its
// predicted step goes, what it assumes and its source.
nlohmann::json run_json(const priced_row& x, const io::published_runs& file) {
  return {{"name", x.run->name},
          {"source", x.run->source},
          {"role", x.run->role},
          {"system", x.run->system},
          {"gpus", x.run->gpus},
          {"parallelism", model::to_string(x.run->layout)},
          // The fused attention kernel the run names; null: its system's own curve.
          {"attention_kernel",
           x.run->attention_kernel.empty() ? nlohmann::json() : nlohmann::json(x.run->attention_kernel)},
          {"cross_entropy", std::string(model::to_string(x.run->job.cross_entropy))},  // the loss's kernel
          {"kind", kind_of(*x.run)},
          {"published", x.run->published},
          {"published_step_time_s", x.run->iteration_s},
          {"predicted",
           workloads::parallel_predicted_json(
               x.cost, workloads::tokens_of(x.run->job, x.run->gpus))},  // the step, its breakdown, stages and bytes
          {"assumed", x.run->assumed},
          {"source_text", source_text(file, *x.run)},
          {"error", x.error},
          {"fits_device_memory", x.fits()},
          {"device_memory_bytes", x.memory.value()}};
}

// The runs the model puts over their device's memory, in the file's order. Each ran, so each fitted: every name
// here is the memory model counting more than the run kept.
std::vector<std::string> over_memory(const std::vector<priced_row>& rows) {
  std::vector<std::string> over;
  for (const auto& x : rows)
    if (!x.fits()) over.push_back(x.run->name);
  return over;
}

// Runs the model prices alike yet were measured apart (io/priced_alike.hpp): one prediction serves each group, so
// their spread is a floor under the errors that no constant of the model lifts.
std::string alike_lines(const std::vector<priced_row>& rows) {
  const auto alike = io::priced_alike(rows);
  if (alike.empty()) return {};
  std::string out =
      "Priced alike, measured apart (one prediction serves each group; only an input they differ in would part "
      "them):\n";
  for (const auto& g : alike) {
    out += " ";
    for (std::size_t i = 0; i < g.runs.size(); ++i)
      out += (i ? ", " : " ") + g.runs[i]->run->name + " " + fixed(g.runs[i]->run->iteration_s, 3) + " s";
    out += ": worst |error| at least " + fixed(g.least_worst_error * 100, 1) + "%, mean at least " +
           fixed(g.least_mean_error * 100, 1) + "%\n";
  }
  return out;
}

// Each source's runs, in the file's order: how many, their mean signed error (a source the model prices fast or
// slow throughout), mean |error| and worst. Sources that disagree on one shape show here as opposite signs.
struct source_summary {
  std::string source, roles;
  std::size_t runs = 0;
  double sum = 0, abs_sum = 0, worst = 0;
  [[nodiscard]] double mean() const { return sum / static_cast<double>(runs); }
  [[nodiscard]] double mean_abs() const { return abs_sum / static_cast<double>(runs); }
};
std::vector<source_summary> by_source(const std::vector<priced_row>& rows) {
  std::vector<source_summary> out;
  for (const auto& x : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& s) { return s.source == x.run->source; });
    if (it == out.end()) it = out.insert(out.end(), source_summary{x.run->source, x.run->role});
    if (it->roles.find(x.run->role) == std::string::npos) it->roles += "+" + x.run->role;
    ++it->runs;
    it->sum += x.error;
    it->abs_sum += std::abs(x.error);
    it->worst = std::max(it->worst, std::abs(x.error));
  }
  return out;
}

std::string source_lines(const std::vector<priced_row>& rows) {
  table t({"source", "role", "runs", "mean error", "mean |error|", "worst |error|"});
  for (const auto& s : by_source(rows))
    t.add({s.source, s.roles, std::to_string(s.runs), signed_percent(s.mean()), fixed(s.mean_abs() * 100, 1) + "%",
           fixed(s.worst * 100, 1) + "%"});
  std::ostringstream out;
  out << "By source (a mean error far from zero: the model prices that source's runs fast or slow throughout):\n";
  t.print(out);
  return out.str();
}

nlohmann::json source_json(const std::vector<priced_row>& rows) {
  auto out = nlohmann::json::array();
  for (const auto& s : by_source(rows))
    out.push_back({{"source", s.source},
                   {"runs", s.runs},
                   {"mean_error", s.mean()},
                   {"mean_abs_error", s.mean_abs()},
                   {"max_abs_error", s.worst}});
  return out;
}

nlohmann::json alike_json(const std::vector<priced_row>& rows) {
  auto out = nlohmann::json::array();
  for (const auto& g : io::priced_alike(rows)) {
    auto names = nlohmann::json::array(), steps = nlohmann::json::array();
    for (const auto* x : g.runs) names.push_back(x->run->name), steps.push_back(x->run->iteration_s);
    out.push_back({{"runs", names},
                   {"published_step_time_s", steps},
                   {"least_worst_error", g.least_worst_error},
                   {"least_mean_error", g.least_mean_error}});
  }
  return out;
}

// The intervals plans print (plan/training_stack.hpp), judged on the held-out runs, each by a band it did not shape.
constexpr double interval_coverage = plan::detail::held_out_coverage;
nlohmann::json intervals_json(const std::vector<priced_row>& rows) {
  const auto c = io::check_intervals(rows, interval_coverage);
  return {{"coverage", interval_coverage}, {"runs", c.runs}, {"inside", c.inside}};
}
std::string interval_line(const std::vector<priced_row>& rows) {
  const auto c = io::check_intervals(rows, interval_coverage);
  return "Intervals: " + std::to_string(c.inside) + " of " + std::to_string(c.runs) + " held-out runs inside their " +
         fixed(interval_coverage * 100, 0) + "% interval, each judged by the band of the others\n";
}

void print_validation_json(const validation& v, const io::published_runs& file, const std::string& probe_path) {
  const auto& [cal, pr, rows, fit_n, held_runs, exact, held_n, fit_mean, fit_worst, held_mean, held_max, worst_bytes,
               held_sum, held_worst, fp8, moe] = v;
  const auto& gemm_h100 = cal.h100;
  const auto& gemm_a100 = cal.a100;
  const double kappa = cal.elementwise_traffic;
  const auto summary_json = [](const std::tuple<std::size_t, double, double>& x) {
    return nlohmann::json{
        {"runs", std::get<0>(x)}, {"mean_abs_error", std::get<1>(x)}, {"max_abs_error", std::get<2>(x)}};
  };
  nlohmann::json out;
  out["calibration"] = {
      {"h100_gemm",
       {{"peak_fraction", gemm_h100.model.peak_fraction},
        {"half_size", gemm_h100.model.half_size},
        {"ceiling", gemm_h100.model.ceiling},
        {"median_error", gemm_h100.median_error},
        {"points", gemm_h100.points},
        {"from", probe_path}}},
      {"elementwise_traffic", {{"value", kappa}, {"from", probe_path + " (stacks without recomputation)"}}},
      {"a100_gemm",
       {{"peak_fraction", gemm_a100.peak_fraction},
        {"half_size", gemm_a100.half_size},
        {"from", "the runs marked fit"}}}};
  for (const auto& x : rows) out["runs"].push_back(run_json(x, file));
  out["summary"] = {{"fit", {{"runs", fit_n}, {"mean_abs_error", fit_mean}, {"max_abs_error", fit_worst}}},
                    {"held_out", {{"runs", held_runs}, {"mean_abs_error", held_mean}, {"max_abs_error", held_max}}},
                    {"held_out_fp8", summary_json(fp8)},
                    {"held_out_moe", summary_json(moe)},
                    {"device_memory", {{"runs", rows.size()}, {"over", over_memory(rows)}}},
                    {"intervals", intervals_json(rows)},
                    {"priced_alike", alike_json(rows)},
                    {"by_source", source_json(rows)},
                    {"probe_memory", {{"stacks", pr.stacks.size()}, {"exact", exact}, {"max_abs_error", worst_bytes}}},
                    {"probe_time_held_out",
                     {{"stacks", held_n},
                      {"mean_abs_error", held_n ? held_sum / static_cast<double>(held_n) : 0.0},
                      {"max_abs_error", held_worst}}}};
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

// Every published run ran, so it fitted its GPUs: the memory model is judged by how many it puts over.
std::string memory_line(const std::vector<priced_row>& rows) {
  const auto over = over_memory(rows);
  std::string line = "Device memory: every run ran, so each fitted; the model puts " + std::to_string(over.size()) +
                     " of " + std::to_string(rows.size()) + " over their GPUs' memory";
  for (std::size_t i = 0; i < over.size(); ++i) line += (i ? ", " : ": ") + over[i];
  return line + '\n';
}

void print_validation_text(const validation& v) {
  const auto& [cal, pr, rows, fit_n, held_runs, exact, held_n, fit_mean, fit_worst, held_mean, held_max, worst_bytes,
               held_sum, held_worst, fp8, moe] = v;
  const auto& gemm_h100 = cal.h100;
  const auto& gemm_a100 = cal.a100;
  const double kappa = cal.elementwise_traffic;
  std::cout << "Calibration\n"
            << "  H100 GEMM curve   e = " << fixed(gemm_h100.model.peak_fraction, 4)
            << ", x0 = " << fixed(gemm_h100.model.half_size, 1) << ", c = " << fixed(gemm_h100.model.ceiling, 4)
            << "   fitted to " << gemm_h100.points << " cuBLAS GEMMs of the probe (" << pr.device << ", " << pr.date
            << "); median error " << fixed(gemm_h100.median_error * 100, 1) << "%\n"
            << "  memory traffic    kappa = " << fixed(kappa, 2) << "   fitted to the probe's " << cal.stacks_fitted
            << " layer stacks without recomputation\n"
            << "  A100 GEMM curve   e = " << fixed(gemm_a100.peak_fraction, 3)
            << ", x0 = " << fixed(gemm_a100.half_size, 0) << "   fitted to the " << fit_n << " runs marked fit\n\n";
  table t({"run", "source", "role", "layout", "published", "step s", "predicted s", "error", "GB/GPU"});
  for (const auto& x : rows) {
    const auto& l = x.run->layout;
    const std::string layout =
        "t" + std::to_string(l.tp) + " p" + std::to_string(l.pp) + (l.vpp > 1 ? "x" + std::to_string(l.vpp) : "") +
        (l.flushes > 1 ? "/" + std::to_string(l.flushes) + "f" : "") + (l.cp > 1 ? " c" + std::to_string(l.cp) : "") +
        " d" + std::to_string(l.dp) + (l.ep > 1 ? " e" + std::to_string(l.ep) : "") +
        (l.etp > 1 ? "x" + std::to_string(l.etp) : "") +
        (l.dispatcher == model::token_dispatcher::by_node ? "/deepep" : "") + " " + model::to_string(l.recompute) +
        (l.recompute_layers ? std::to_string(*l.recompute_layers) : "") +
        (l.recompute_layers && l.recompute_method == model::recompute_method::uniform ? "u" : "") +
        (l.modules.empty() ? "" : "+" + model::to_string(l.modules)) + (l.sequence_parallel ? "+sp" : "") +
        (x.run->job.fp8 ? " fp8" : "");
    t.add({x.run->name, x.run->source, x.run->role, layout, x.run->published, fixed(x.run->iteration_s, 3),
           fixed(x.cost.step.value(), 3), signed_percent(x.error),
           fixed(x.cost.device_bytes.value() / 1e9, 1) +
               (x.fits() ? "" : " (over " + units::detail::format_number(x.memory.value() / 1e9) + ")")});
  }
  t.print(std::cout);
  std::cout << "\nStep time, mean |error|: fit " << fixed(fit_mean * 100, 1) << "% (" << fit_n << " runs, worst "
            << fixed(fit_worst * 100, 1) << "%); held out " << fixed(held_mean * 100, 1) << "% (" << held_runs
            << " runs, worst " << fixed(held_max * 100, 1) << "%)\n"
            << "Held out by kind: fp8 " << fixed(std::get<1>(fp8) * 100, 1) << "% (" << std::get<0>(fp8)
            << " runs, worst " << fixed(std::get<2>(fp8) * 100, 1) << "%); mixtures of experts "
            << fixed(std::get<1>(moe) * 100, 1) << "% (" << std::get<0>(moe) << " runs, worst "
            << fixed(std::get<2>(moe) * 100, 1) << "%)\n"
            << memory_line(rows) << interval_line(rows) << "Probe, activation bytes kept: " << exact << " of "
            << pr.stacks.size() << " stacks exact to the byte (worst " << fixed(worst_bytes * 100, 3) << "%)\n"
            << "Probe, step time with recomputation (held out): mean |error| "
            << fixed(held_n ? held_sum / static_cast<double>(held_n) * 100 : 0.0, 1) << "% over " << held_n
            << " stacks, worst " << fixed(held_worst * 100, 1) << "%\n"
            << alike_lines(rows) << '\n'
            << source_lines(rows);
}

// The run named `name` (a training or a serving row), or the refusal that names the nearest run: a name is long
// and easy to mistype.
template <class Row>
const Row& named_row(const std::vector<Row>& rows, const std::string& name, const std::string& runs_path) {
  std::vector<std::string_view> names;
  for (const auto& x : rows) {
    if (x.run->name == name) return x;
    names.push_back(x.run->name);
  }
  if (const auto near = trinity::detail::nearest_name(name, names))
    throw bad_flag("--explain", name,
                   "is not a run of " + runs_path + "; did you mean \"" + std::string(*near) + "\"?");
  throw bad_flag("--explain", name,
                 "is not a run of " + runs_path + ": give the \"name\" of one of its " + std::to_string(names.size()) +
                     " runs (--json prints each run's)");
}

// One run priced as the table prices it, and where its predicted step goes: what to read when a run misses.
void print_explained(const priced_row& x, const io::published_runs& file, const model::training_cluster& c,
                     bool as_json) {
  if (as_json) {
    std::cout << run_json(x, file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const auto& r = *x.run;
  const std::string source = source_text(file, r);
  std::cout << r.name << " (" << r.role << ", " << r.source << "): " << r.gpus << " GPUs of " << r.system << ", "
            << model::to_string(r.layout) << (r.job.fp8 ? ", fp8" : "")
            << (r.job.fp8_params ? " (weights in fp8 alone)" : "")
            << (r.attention_kernel.empty() ? "" : ", " + r.attention_kernel)
            << (r.job.cross_entropy == model::loss_kernel::native ? "" : ", Transformer Engine's loss") << "\n"
            << "  published  " << r.published << ": a step of " << fixed(r.iteration_s, 3) << " s\n"
            << "  predicted  " << fixed(x.cost.step.value(), 3) << " s, " << signed_percent(x.error) << "\n";
  if (!r.assumed.empty()) std::cout << "  assumed    " << r.assumed << "\n";
  if (!source.empty()) std::cout << "  source     " << source << "\n";
  std::cout << '\n';
  workloads::print_parallel_breakdown(std::cout, x.cost, c.memory, workloads::tokens_of(r.job, r.gpus));
}

void run_validate(const std::string& runs_path, const std::string& probe_path, bool as_json,
                  const std::string& explain) {
  const auto file =
      from_file(runs_path, "--runs", {}, [](const nlohmann::json& j) { return io::read_published_runs(j); });
  const auto pr =
      from_file(probe_path, "--probe", {}, [](const nlohmann::json& j) { return io::read_transformer_probe(j); });

  const auto cal = io::calibrate(pr, file);
  const auto probe_cluster =
      plan::cluster_of(*plan::presets::find("dgx-h100"), cal.h100.model, cal.elementwise_traffic);

  auto rows = io::price_runs(file, cal);
  if (!explain.empty()) {
    const auto& x = named_row(rows, explain, runs_path);
    return print_explained(x, file, cal.cluster(*x.run), as_json);
  }
  // The runs of a role (and, held out, of a kind), their mean and worst |error|. "held-out" alone: the 16-bit
  // dense runs, the set the step model was first judged on.
  const auto summary = [&](const std::string& role, const std::string& kind) {
    double sum = 0, worst = 0;
    std::size_t n = 0;
    for (const auto& x : rows)
      if (x.run->role == role && (role == "fit" || kind_of(*x.run) == kind))
        sum += std::abs(x.error), worst = std::max(worst, std::abs(x.error)), ++n;
    return std::tuple{n, n ? sum / static_cast<double>(n) : 0.0, worst};
  };

  // --- the probe's stacks ---
  std::size_t exact = 0;
  double worst_bytes = 0;
  for (std::size_t i = 0; i < pr.stacks.size(); ++i) {
    const double want = pr.stored_bytes[i], have = io::modelled_stored_bytes(pr.stacks[i]);
    worst_bytes = std::max(worst_bytes, std::abs(have / want - 1.0));
    exact += have == want;
  }
  double held_sum = 0, held_worst = 0;
  std::size_t held_n = 0;
  for (const auto& m : pr.stacks) {
    if (m.layout.recompute == model::recomputation::none) continue;
    const double e = std::abs(model::predicted(m, probe_cluster).value() / m.measured.value() - 1.0);
    held_sum += e, held_worst = std::max(held_worst, e), ++held_n;
  }

  const auto [fit_n, fit_mean, fit_worst] = summary("fit", "");
  const auto [held_runs, held_mean, held_max] = summary("held-out", "dense");
  const auto fp8 = summary("held-out", "fp8"), moe = summary("held-out", "moe");
  const validation v{cal,       pr,        std::move(rows), fit_n,       held_runs, exact,      held_n, fit_mean,
                     fit_worst, held_mean, held_max,        worst_bytes, held_sum,  held_worst, fp8,    moe};
  if (as_json)
    print_validation_json(v, file, probe_path);
  else
    print_validation_text(v);
}

// trinity validate --serving --runs FILE: the serving model against measured serving runs
// (reports/serving_validation.hpp); with --explain NAME, that run spelt out.
void run_validate_serving(const std::string& runs_path, bool as_json, const std::string& explain) {
  const auto file =
      from_file(runs_path, "--runs", {}, [](const nlohmann::json& j) { return io::read_serving_runs(j); });
  const auto v = reports::validate_serving(file);
  if (!explain.empty()) {
    const auto e = reports::explain(v, file, named_row(v.rows, explain, runs_path));
    if (as_json)
      std::cout << reports::to_json(e).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    else
      reports::print(std::cout, e);
    return;
  }
  const auto two_run_fits = reports::judge_two_run_fits(file);
  if (as_json) {
    auto j = reports::to_json(v, file);
    j["two_run_fits"] = nlohmann::json::array();
    for (const auto& f : two_run_fits) j["two_run_fits"].push_back(reports::to_json(f));
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  reports::print(std::cout, v);
  reports::print(std::cout, two_run_fits);
}

}  // namespace

void register_validate(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate",
                                 "the parallel training model against measured runs (published A100 and "
                                 "H100 training runs, a probe of one H100); --serving: the serving model against "
                                 "published and probed serving runs");
  static std::string runs, probe_file, explain;
  static bool as_json = false;
  static bool serving = false;
  cmd->add_option("--runs", runs,
                  "published runs (bench/published/training-runs.json; with --serving, "
                  "bench/published/serving-runs.json)")
      ->required();
  cmd->add_option("--probe", probe_file,
                  "a transformer_probe.py result (bench/results/transformer-probe-h100.json); training only");
  cmd->add_flag("--serving", serving,
                "the serving model instead: each run priced as `trinity plan --parallelism` prices a configuration");
  cmd->add_option("--explain", explain,
                  "one run by its name in the table (\"gpt-oss-120b/64\"): training, where its predicted step goes "
                  "beside the published figure and what the run assumes; --serving, every figure the model gives "
                  "its configuration and its engine's fitted constants")
      ->check(non_empty("a run's name as the table prints it"));
  cmd->add_flag("--json", as_json,
                "print JSON: the calibration, the summaries and every run as --explain --json prints it alone");
  cmd->callback([] {
    if (serving) {
      if (!probe_file.empty())
        throw bad_flag("--probe", probe_file, "is the training model's probe; --serving takes the runs alone");
      return run_validate_serving(runs, as_json, explain);
    }
    if (probe_file.empty())
      throw usage_error("--probe is required: the training model's probe (bench/results/transformer-probe-h100.json)");
    run_validate(runs, probe_file, as_json, explain);
  });
}

}  // namespace trinity::cli
