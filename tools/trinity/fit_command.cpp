// trinity fit --runs MEASURED.json --out STACK.json [--name NAME] [--json]: a training stack's constants fitted to
// the user's own measured runs, the hardware fixed (plan/stack_fit.hpp), written where `trinity plan --stack`
// reads it. Prints each run measured, predicted before and after, the constants, and what the runs left unpinned.

#include "cli.hpp"

#include <trinity/io/stack_file.hpp>
#include <trinity/plan/stack_fit.hpp>
#include <trinity/workloads/measured_runs.hpp>
#include <trinity/workloads/training_interval.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace trinity::cli {

namespace {

struct fit_flags {
  std::string runs, out, name = "fitted";
  bool json = false;
};

std::string signed_percent(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", v * 100);
  return b;
}

// "9.7 s", or "-" where the run did not measure it.
template <class Q>
std::string measured_text(const std::optional<double>& v) {
  return v ? to_string(Q{*v}) : "-";
}
template <class Q>
std::string error_text(const std::optional<double>& measured, Q predicted) {
  return measured ? to_string(predicted) + " (" + signed_percent(predicted.value() / *measured - 1) + ")" : "-";
}

// How the held-out runs' steps fare before and after the fit: mean |error|, and how many fall in their interval.
struct held_out_summary {
  std::size_t runs = 0, inside_before = 0, inside_after = 0;
  double error_before = 0, error_after = 0;
};

held_out_summary summarise(const std::vector<plan::measured_training_run>& runs, const plan::stack_fit& f) {
  held_out_summary h;
  const auto inside = [](double measured, const std::optional<plan::interval>& i) {
    return i && measured >= i->low && measured <= i->high;
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (!r.held_out || !r.step_time_s) continue;
    const auto unmeasured = workloads::unmeasured_curves(r.on, r.workload).size();
    ++h.runs;
    h.error_before += std::abs(f.before[i].step.value() / *r.step_time_s - 1);
    h.error_after += std::abs(f.after[i].step.value() / *r.step_time_s - 1);
    h.inside_before +=
        inside(*r.step_time_s, plan::interval_of(f.before[i].step.value(), r.workload.stack.step_time, unmeasured));
    h.inside_after += inside(*r.step_time_s, plan::interval_of(f.after[i].step.value(), f.stack.step_time, unmeasured));
  }
  if (h.runs) h.error_before /= static_cast<double>(h.runs), h.error_after /= static_cast<double>(h.runs);
  return h;
}

nlohmann::json fit_json(const std::vector<plan::measured_training_run>& runs, const plan::stack_fit& f) {
  auto out = io::write_stack(f.stack);
  out["runs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto or_null = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    out["runs"].push_back(
        {{"name", r.name},
         {"measured", {{"step_time_s", or_null(r.step_time_s)}, {"device_bytes", or_null(r.device_bytes)}}},
         {"before", {{"step_time_s", f.before[i].step.value()}, {"device_bytes", f.before[i].device_bytes.value()}}},
         {"after", {{"step_time_s", f.after[i].step.value()}, {"device_bytes", f.after[i].device_bytes.value()}}}});
  }
  if (const auto h = summarise(runs, f); h.runs)
    out["held_out"] = {{"runs", h.runs},
                       {"mean_error_before", h.error_before},
                       {"mean_error_after", h.error_after},
                       {"inside_interval_before", h.inside_before},
                       {"inside_interval_after", h.inside_after}};
  return out;
}

void print_fit(const std::vector<plan::measured_training_run>& runs, const plan::stack_fit& f, const std::string& out) {
  table t({"run", "role", "measured step", "before fit", "after fit", "measured bytes", "before fit", "after fit"});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    t.add({r.name, r.held_out ? "held-out" : "fit", measured_text<seconds>(r.step_time_s),
           error_text(r.step_time_s, f.before[i].step), error_text(r.step_time_s, f.after[i].step),
           measured_text<bytes>(r.device_bytes), error_text(r.device_bytes, f.before[i].device_bytes),
           error_text(r.device_bytes, f.after[i].device_bytes)});
  }
  t.print(std::cout);
  const auto& k = f.stack.constants;
  std::cout << "\nstack " << f.stack.name << ": matmul_share " << units::detail::format_number(k.matmul_share)
            << ", layer_overhead " << to_string(k.layer_overhead) << ", memory_factor "
            << units::detail::format_number(k.memory_factor) << ", memory_overhead " << to_string(k.memory_overhead)
            << '\n';
  std::string unpinned;
  for (const auto& n : f.stack.not_pinned) unpinned += (unpinned.empty() ? "" : ", ") + n;
  std::cout << "not pinned by these runs (kept at their defaults): " << (unpinned.empty() ? "none" : unpinned) << '\n';
  if (const auto h = summarise(runs, f); h.runs)
    std::cout << "held-out steps (" << h.runs << "): mean error " << units::detail::format_number(h.error_before * 100)
              << "% before the fit, " << units::detail::format_number(h.error_after * 100) << "% after; inside their "
              << units::detail::format_number(f.stack.step_time.coverage * 100) << "% interval: " << h.inside_before
              << " before, " << h.inside_after << " after\n";
  std::cout << "written to " << out << "; price with it: trinity plan --stack " << out << " ...\n";
}

void run_fit(const fit_flags& a) {
  trinity::detail::require_output_file("--out", a.out);
  const auto runs = from_file(a.runs, "--runs", {}, [&](const nlohmann::json& j) {
    return workloads::read_measured_runs(j, std::filesystem::path(a.runs).parent_path());
  });
  plan::stack_fit f;
  try {
    f = plan::fit_stack(runs, a.name);
  } catch (const invalid_input& e) {
    throw usage_error(a.runs + ": " + e.what());
  }
  const std::string runs_of = " measured runs";
  if (const auto at = f.stack.source.find(runs_of); at != std::string::npos)
    f.stack.source.insert(at + runs_of.size(), " of " + std::filesystem::path(a.runs).filename().string());
  trinity::detail::write_output_file("--out", a.out, io::write_stack(f.stack).dump(2) + "\n");
  if (a.json)
    std::cout << fit_json(runs, f).dump(2) << '\n';
  else
    print_fit(runs, f, a.out);
}

}  // namespace

void register_fit(CLI::App& app) {
  auto a = std::make_shared<fit_flags>();
  auto* cmd = app.add_subcommand(
      "fit", "Fit a training stack's constants to your own measured runs (two or more), for plan --stack");
  cmd->add_option("--runs", a->runs, "Measured runs: {\"runs\": [{name, system, workload, parallelism, measured}]}")
      ->type_name("MEASURED.json")
      ->required();
  cmd->add_option("--out", a->out, "Where to write the fitted stack")->type_name("STACK.json")->required();
  cmd->add_option("--name", a->name, "The stack's name (default: fitted)")
      ->type_name("NAME")
      ->check(non_empty("a name"));
  cmd->add_flag("--json", a->json, "Print JSON: the stack and each run before and after the fit");
  cmd->callback([a] { run_fit(*a); });
}

}  // namespace trinity::cli
