#pragma once
//! \file
//! `trinity validate --serving`: the serving model against measured serving runs. Each engine family is calibrated
//! on its runs marked fit (io/serving_runs.hpp) and every run is priced as `trinity plan --parallelism` prices its
//! configuration; the constants, the runs beside their predictions, and the mean and worst error of each family's
//! fit and held-out runs, as JSON and as text. With `--explain`, one run spelt out.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <trinity/io/serving_runs.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/reports/serving_time.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

struct serving_validation {
  io::serving_calibrations fits;
  struct row {
    const io::serving_run* run;
    double predicted, error;  //!< error: predicted over measured, less one
  };
  std::vector<row> rows;
  struct summary {
    std::size_t runs = 0;
    double mean_abs_error = 0, max_abs_error = 0;
  };
  //! One engine family's runs of one role ("fit" or "held-out").
  [[nodiscard]] summary of(const std::string& family, const std::string& role) const {
    summary s;
    double sum = 0;
    for (const auto& x : rows)
      if (x.run->role == role && x.run->engine_family == family)
        sum += std::abs(x.error), s.max_abs_error = std::max(s.max_abs_error, std::abs(x.error)), ++s.runs;
    s.mean_abs_error = s.runs ? sum / static_cast<double>(s.runs) : 0.0;
    return s;
  }
};

//! Calibrates each engine family and prices every run of `file` (which must outlive the result).
[[nodiscard]] inline serving_validation validate_serving(const io::serving_runs& file) {
  serving_validation v{io::calibrate_serving(file), {}};
  for (const auto& r : file.runs) {
    const double p = io::predict(r, io::serving_system(r, v.fits));
    v.rows.push_back({&r, p, p / r.value - 1.0});
  }
  return v;
}

namespace detail {
inline nlohmann::json constants_json(const model::serving_calibration& c) {
  return {{"hbm_share", c.hbm_share},
          {"kv_read_share", c.kv_read_share},
          {"layer_overhead_s", c.layer_overhead.value()},
          {"prefill_layer_overhead_s", c.prefill_layer_overhead.value()},
          {"sequence_overhead_s", c.sequence_overhead.value()},
          {"all_reduce_latency_s", c.all_reduce_latency.value()},
          {"fp8_gemm_share", c.fp8_gemm_share},
          {"fused_attention_share", c.fused_attention_share}};
}
inline nlohmann::json summary_json(const serving_validation::summary& s) {
  return {{"runs", s.runs}, {"mean_abs_error", s.mean_abs_error}, {"max_abs_error", s.max_abs_error}};
}
inline std::string summary_text(const serving_validation::summary& s) {
  return fixed(s.mean_abs_error * 100, 1) + "% (" + std::to_string(s.runs) + " runs, worst " +
         fixed(s.max_abs_error * 100, 1) + "%)";
}
}  // namespace detail

namespace detail {
inline void print_calibration(std::ostream& out, const std::string& family, const io::serving_calibration_fit& f) {
  out << family << ": calibrated to its " << f.runs << " runs marked fit (root-mean-square log error "
      << fixed(f.rms_log_error, 3) << ")\n";
  for (const auto& [device, c] : {std::pair{"A100", f.a100}, std::pair{"H100", f.h100}, std::pair{"H200", f.h200}})
    out << "  " << device << "  HBM share " << fixed(c.hbm_share, 3) << ", layer overhead "
        << fixed(c.layer_overhead.value() * 1e6, 1) << " us (prefill "
        << fixed((c.layer_overhead + c.prefill_layer_overhead).value() * 1e6, 1) << " us)\n";
  const auto& c = f.h100;
  out << "  all   KV read share " << fixed(c.kv_read_share, 3) << ", per sequence per step "
      << fixed(c.sequence_overhead.value() * 1e6, 2) << " us, per all-reduce "
      << fixed(c.all_reduce_latency.value() * 1e6, 1) << " us, fp8 GEMM share " << fixed(c.fp8_gemm_share, 3)
      << ", fused attention " << fixed(c.fused_attention_share, 3) << " of the 16-bit peak\n";
  if (f.unfitted.empty()) return;
  out << "  not fitted (no run moves it):";
  for (std::size_t i = 0; i < f.unfitted.size(); ++i) out << (i ? ", " : " ") << f.unfitted[i];
  out << '\n';
}

inline std::string metric_name(const std::string& metric) {
  if (metric == "ttft_s") return "TTFT";
  if (metric == "tpot_s") return "TPOT";
  return metric == "output_tokens_per_second" ? "tok/s" : "tok/s/GPU";
}
}  // namespace detail

inline void print(std::ostream& out, const serving_validation& v) {
  for (const auto& [family, f] : v.fits) detail::print_calibration(out, family, f);
  out << '\n';
  table t({"source", "role", "system", "model", "configuration", "in/out", "metric", "measured", "predicted", "error"});
  for (const auto& x : v.rows) {
    const auto& r = *x.run;
    const bool time = r.metric == "ttft_s" || r.metric == "tpot_s";
    const auto shown = [&](double value) { return time ? fixed(value * 1e3, 2) + " ms" : fixed(value, 0); };
    t.add({r.source, r.role, r.system, r.model + (r.layers ? " (" + std::to_string(r.layers) + " layers)" : ""),
           r.configuration(), fixed(r.prompt_tokens, 0) + "/" + fixed(r.output_tokens, 0),
           detail::metric_name(r.metric), shown(r.value), shown(x.predicted), signed_percent(x.error)});
  }
  t.print(out);
  out << "\nMean |error|, by engine family:\n";
  for (const auto& [family, f] : v.fits)
    out << "  " << family << ": fit " << detail::summary_text(v.of(family, "fit")) << "; held out "
        << detail::summary_text(v.of(family, "held-out")) << '\n';
}

//! One run of the table spelt out: the configuration priced again on its calibrated preset, every figure the
//! model gives it (the run's metric among them), and the constants its engine family's fit gives its device.
struct serving_explained {
  const serving_validation::row* row;
  const io::serving_source* source;  //!< null where the file names none
  plan::priced_configuration priced;
  model::serving_calibration constants;
  serving_time time;  //!< the TTFT's prefill and the TPOT's decode step, part by part
};

[[nodiscard]] inline serving_explained explain(const serving_validation& v, const io::serving_runs& file,
                                               const serving_validation::row& x) {
  const auto& r = *x.run;
  const auto s = io::serving_system(r, v.fits);
  const auto source = file.sources.find(r.source);
  serving_explained e{
      &x, source == file.sources.end() ? nullptr : &source->second, io::configuration_of(r, s), s.device.serving, {}};
  const auto& p = e.priced.configuration.plan;
  e.time = serving_time_of(s, e.priced.workload, p, e.priced.codecs.at(p.codec), e.priced.cost.hit_rate);
  return e;
}

[[nodiscard]] inline nlohmann::json to_json(const serving_explained& e) {
  const auto& r = *e.row->run;
  const auto& k = e.priced.cost;
  const auto& c = e.constants;
  nlohmann::json j{{"name", r.name},
                   {"source", r.source},
                   {"source_title", e.source ? e.source->title : std::string()},
                   {"engine_family", r.engine_family},
                   {"role", r.role},
                   {"system", r.system},
                   {"model", r.model},
                   {"parallelism", r.configuration()},
                   {"prompt_tokens", r.prompt_tokens},
                   {"output_tokens", r.output_tokens},
                   {"metric", r.metric},
                   {"measured", r.value},
                   {"predicted", e.row->predicted},
                   {"error", e.row->error},
                   {"figures",
                    {{"ttft_s", k.ttft.value()},
                     {"tpot_s", k.tpot.value()},
                     {"prefill_s", k.prefill.value()},
                     {"prefix_load_s", k.load.value()},
                     {"output_tokens_per_device_second", k.tokens_per_second},
                     {"output_tokens_per_second", k.replica_tokens_per_second},
                     {"device_bytes", k.tier_bytes.empty() ? 0.0 : k.tier_bytes[0].value()}}},
                   {"constants", detail::constants_json(c)},
                   {"kv_read_per_query_head", c.kv_read_per_query_head}};
  j.update(to_json(e.time));  // "prefill" and "decode_step"
  return j;
}

//! The table as JSON: each engine family's fitted constants and summary, and every run as --explain --json
//! prints it alone (explain below): its figures, the constants and the time's parts.
[[nodiscard]] inline nlohmann::json to_json(const serving_validation& v, const io::serving_runs& file) {
  nlohmann::json out;
  for (const auto& [family, f] : v.fits) {
    out["calibration"][family] = {{"a100", detail::constants_json(f.a100)},
                                  {"h100", detail::constants_json(f.h100)},
                                  {"h200", detail::constants_json(f.h200)},
                                  {"runs_fitted", f.runs},
                                  {"unfitted", f.unfitted},
                                  {"rms_log_error", f.rms_log_error}};
    out["summary"][family] = {{"fit", detail::summary_json(v.of(family, "fit"))},
                              {"held_out", detail::summary_json(v.of(family, "held-out"))}};
  }
  for (const auto& x : v.rows) out["runs"].push_back(to_json(explain(v, file, x)));
  return out;
}

inline void print(std::ostream& out, const serving_explained& e) {
  const auto& r = *e.row->run;
  const auto& k = e.priced.cost;
  const auto& c = e.constants;
  const bool time = r.metric == "ttft_s" || r.metric == "tpot_s";
  const auto shown = [&](double value) { return time ? fixed(value * 1e3, 2) + " ms" : fixed(value, 0); };
  out << r.name << " (" << r.role << ", " << r.source << ", " << r.engine_family << "): " << r.model << " on "
      << r.system << ", " << r.configuration() << ", " << fixed(r.prompt_tokens, 0) << " tokens in, "
      << fixed(r.output_tokens, 0) << " out\n"
      << "  measured   " << detail::metric_name(r.metric) << " " << shown(r.value) << "\n"
      << "  predicted  " << shown(e.row->predicted) << ", " << signed_percent(e.row->error) << "\n";
  if (e.source) out << "  source     " << e.source->title << " (" << e.source->url << ")\n";
  out << '\n';
  table t({"figure", "predicted"});
  const auto mark = [&](const char* metric) { return r.metric == metric ? "  <- the run's metric" : ""; };
  t.add({"time to first token", to_string(k.ttft) + mark("ttft_s")});
  t.add({"  its prompt's prefill", to_string(k.prefill)});
  if (k.load > seconds{}) t.add({"  its cached prefix's load", to_string(k.load)});
  t.add({"time per output token", to_string(k.tpot) + mark("tpot_s")});
  t.add({"output tokens per device-second",
         units::detail::format_number(k.tokens_per_second) + mark("output_tokens_per_device_second")});
  t.add({"output tokens per second of a replica",
         units::detail::format_number(k.replica_tokens_per_second) + mark("output_tokens_per_second")});
  if (!k.tier_bytes.empty()) t.add({"device memory", to_string(k.tier_bytes[0]) + " per device"});
  t.print(out);
  out << '\n';
  print(out, e.time);
  out << "\nConstants (" << r.engine_family << "'s fit, for " << r.system << "): HBM share " << fixed(c.hbm_share, 3)
      << ", KV read share " << fixed(c.kv_read_share, 3) << ", layer overhead "
      << fixed(c.layer_overhead.value() * 1e6, 1) << " us (prefill "
      << fixed((c.layer_overhead + c.prefill_layer_overhead).value() * 1e6, 1) << " us), per sequence per step "
      << fixed(c.sequence_overhead.value() * 1e6, 2) << " us, per all-reduce "
      << fixed(c.all_reduce_latency.value() * 1e6, 1) << " us, fp8 GEMM share " << fixed(c.fp8_gemm_share, 3)
      << ", fused attention " << fixed(c.fused_attention_share, 3) << "; KV read once per "
      << (c.kv_read_per_query_head ? "query head" : "KV head") << "\n";
  if (!e.priced.violation.empty()) out << "Does not fit: " << e.priced.violation << "\n";
}

}  // namespace trinity::reports
