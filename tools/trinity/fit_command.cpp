// trinity fit --runs MEASURED.json --out STACK.json [--name NAME] [--json]: a stack's constants fitted to the user's
// own measured runs, the hardware fixed, written where `trinity plan --stack` reads it: a training stack from
// training runs (plan/stack_fit.hpp), a serving stack from llm-serve runs (plan/serving_stack_fit.hpp). Prints each
// run measured, predicted before and after, the constants, and what the runs left unpinned.

#include "cli.hpp"

#include <trinity/io/stack_file.hpp>
#include <trinity/plan/serving_stack_fit.hpp>
#include <trinity/plan/stack_fit.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/workloads/measured_runs.hpp>
#include <trinity/workloads/measured_serving_runs.hpp>
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

using reports::signed_percent;

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

// Serving: one row a figure a run measured; the held-out figures' mean error and interval count.
struct serving_row {
  std::string run, role, figure;
  double measured, before, after;
  bool inside_before, inside_after;
};

std::vector<serving_row> serving_rows(const std::vector<plan::measured_serving_run>& runs,
                                      const plan::serving_stack_fit& f) {
  std::vector<serving_row> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto intervals = [&](const plan::serving_stack& s, const plan::serving_prediction& p) {
      return plan::serving_intervals_of(r.on, s, p.ttft_s, p.tpot_s, p.throughput);
    };
    const auto before = intervals(plan::serving_stacks::tensorrt_llm(), f.before[i]),
               after = intervals(f.stack, f.after[i]);
    const auto inside = [](double v, const std::optional<plan::interval>& x) {
      return x && v >= x->low && v <= x->high;
    };
    const auto add = [&](const char* figure, const std::optional<double>& m, double b, double a,
                         const std::optional<plan::interval>& ib, const std::optional<plan::interval>& ia) {
      if (m)
        rows.push_back({r.name, r.held_out ? "held-out" : "fit", figure, *m, b, a, inside(*m, ib), inside(*m, ia)});
    };
    add("ttft_s", r.ttft_s, f.before[i].ttft_s, f.after[i].ttft_s, before.ttft, after.ttft);
    add("tpot_s", r.tpot_s, f.before[i].tpot_s, f.after[i].tpot_s, before.tpot, after.tpot);
    add("output_tokens_per_device_second", r.throughput, f.before[i].throughput, f.after[i].throughput,
        before.throughput, after.throughput);
  }
  return rows;
}

// The held-out figures' mean errors and interval counts, as summarise gives a training fit's.
held_out_summary summarise(const std::vector<serving_row>& rows) {
  held_out_summary h;
  for (const auto& x : rows) {
    if (x.role != "held-out") continue;
    ++h.runs, h.inside_before += x.inside_before, h.inside_after += x.inside_after;
    h.error_before += std::abs(x.before / x.measured - 1), h.error_after += std::abs(x.after / x.measured - 1);
  }
  if (h.runs) h.error_before /= static_cast<double>(h.runs), h.error_after /= static_cast<double>(h.runs);
  return h;
}

nlohmann::json serving_fit_json(const std::vector<serving_row>& rows, const plan::serving_stack_fit& f) {
  auto out = io::write_serving_stack(f.stack);
  out["runs"] = nlohmann::json::array();
  for (const auto& x : rows)
    out["runs"].push_back({{"name", x.run},
                           {"role", x.role},
                           {"figure", x.figure},
                           {"measured", x.measured},
                           {"before", x.before},
                           {"after", x.after}});
  if (const auto h = summarise(rows); h.runs)
    out["held_out"] = {{"figures", h.runs},
                       {"mean_error_before", h.error_before},
                       {"mean_error_after", h.error_after},
                       {"inside_interval_before", h.inside_before},
                       {"inside_interval_after", h.inside_after}};
  return out;
}

void print_serving_fit(const std::vector<serving_row>& rows, const plan::serving_stack_fit& f, const std::string& out) {
  table t({"run", "role", "figure", "measured", "before fit", "after fit"});
  const auto shown = [](double v, double m) {
    return units::detail::format_number(v) + " (" + signed_percent(v / m - 1) + ")";
  };
  for (const auto& x : rows)
    t.add({x.run, x.role, x.figure, units::detail::format_number(x.measured), shown(x.before, x.measured),
           shown(x.after, x.measured)});
  t.print(std::cout);
  std::string set;
  for (const auto& [name, value] : f.stack.constants)
    set += (set.empty() ? "" : ", ") + name + " " +
           (name.ends_with("share") ? units::detail::format_number(value) : to_string(seconds{value}));
  std::string unpinned;
  for (const auto& n : f.stack.not_pinned) unpinned += (unpinned.empty() ? "" : ", ") + n;
  std::cout << "\nserving stack " << f.stack.name << " sets " << (set.empty() ? "nothing" : set)
            << "\nnot pinned by these runs (kept at the device's): " << (unpinned.empty() ? "none" : unpinned) << '\n';
  if (const auto h = summarise(rows); h.runs)
    std::cout << "held-out figures (" << h.runs << "): mean error " << reports::fixed(h.error_before * 100, 1)
              << "% before the fit, " << reports::fixed(h.error_after * 100, 1)
              << "% after; inside their interval: " << h.inside_before << " before, " << h.inside_after << " after\n";
  std::cout << "written to " << out << "; price with it: trinity plan --stack " << out << " ...\n";
}

// The stack's source names the runs' file: "... on 2 measured runs of m.json; its band: ...".
template <class Stack>
void name_the_file(Stack& s, const std::string& runs) {
  if (const auto at = s.source.find(';'); at != std::string::npos)
    s.source.insert(at, " of " + std::filesystem::path(runs).filename().string());
}

template <class Fit, class Runs>
Fit fitted(const fit_flags& a, const Runs& runs,
           Fit (*fit)(std::span<const typename Runs::value_type>, const std::string&)) {
  try {
    auto f = fit(runs, a.name);
    name_the_file(f.stack, a.runs);
    return f;
  } catch (const invalid_input& e) {
    throw usage_error(a.runs + ": " + e.what());
  }
}

void run_fit(const fit_flags& a) {
  trinity::detail::require_output_file("--out", a.out);
  const auto base = std::filesystem::path(a.runs).parent_path();
  std::vector<plan::measured_training_run> training;
  std::vector<plan::measured_serving_run> serving;
  from_file(a.runs, "--runs", {}, [&](const nlohmann::json& j) {
    if (workloads::holds_serving_runs(j))
      serving = workloads::read_measured_serving_runs(j, base);
    else
      training = workloads::read_measured_runs(j, base);
    return 0;
  });
  if (!serving.empty()) {
    const auto f = fitted(a, serving, &plan::fit_serving_stack);
    trinity::detail::write_output_file("--out", a.out, io::write_serving_stack(f.stack).dump(2) + "\n");
    const auto rows = serving_rows(serving, f);
    if (a.json)
      std::cout << serving_fit_json(rows, f).dump(2) << '\n';
    else
      print_serving_fit(rows, f, a.out);
    return;
  }
  const auto f = fitted(a, training, &plan::fit_stack);
  trinity::detail::write_output_file("--out", a.out, io::write_stack(f.stack).dump(2) + "\n");
  if (a.json)
    std::cout << fit_json(training, f).dump(2) << '\n';
  else
    print_fit(training, f, a.out);
}

}  // namespace

void register_fit(CLI::App& app) {
  auto a = std::make_shared<fit_flags>();
  auto* cmd = app.add_subcommand(
      "fit", "Fit a training or serving stack's constants to your own measured runs (two or more), for plan --stack");
  cmd->add_option("--runs", a->runs,
                  "Measured runs, all training or all llm-serve: {\"runs\": [{name, system, workload, parallelism, "
                  "measured}]}")
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
