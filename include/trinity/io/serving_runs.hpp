#pragma once
//! \file
//! Published serving runs, read strictly (bench/published/serving-runs.json), priced, and the serving
//! calibration fitted to the ones marked fit:
//!  - a run: the system it ran on (a preset), the model (a named shape; `layers` where only some of its layers
//!    ran, with the head), the configuration (tp, batch, weights, kv), the prompt and output lengths, and what
//!    was measured (`ttft_s`, `tpot_s`, `output_tokens_per_device_second` or `output_tokens_per_second`, one
//!    replica's);
//!  - priced through plan::price_configuration, what `trinity plan --parallelism` runs, as static batches;
//!  - the fit, per engine family (a source says its engine's: "tensorrt-llm", or "torch-cuda-graphs" for
//!    bench/gpu/serving_probe.py's runs of our own), since what an engine costs beyond its bytes and FLOPs is the
//!    engine's: per device kind its HBM share; shared by the devices, the per-layer overhead, the KV read share,
//!    the per-sequence overhead, the all-reduce latency, fp8's GEMM share and fused attention's share. It
//!    minimises the squared log error over the family's fit runs (a run 2x slow weighs as one 2x fast), one
//!    constant at a time in halving steps from the middle of its range (coordinate descent: a smooth objective,
//!    no library). A device kind with no fit run takes the H100's constants (the H200: the same SMs, its own HBM
//!    bandwidth). The presets carry the tensorrt-llm family's: a production engine's.
//! trinity validate --serving prints the table; trinity-docgen writes the constants into
//! plan/detail/measured_serving.hpp, which the device presets read, and fails its check when they disagree.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/serving_configuration.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>

namespace trinity::io {

struct serving_run {
  std::string name, source, role, system, model, weights, kv, metric;
  std::size_t tp = 1, batch = 1;
  double prompt_tokens = 0, output_tokens = 0, value = 0;
  bool kv_read_per_query_head = false;  //!< its source's engine's attention kernel, as the source says
  std::string engine_family;            //!< its source's
  std::size_t layers = 0;               //!< the layers run, with the head (0: the model's all)
  //! What `trinity plan --parallelism` takes for it.
  [[nodiscard]] std::string configuration() const {
    return "tp=" + std::to_string(tp) + ",batch=" + std::to_string(batch) + ",weights=" + weights + ",kv=" + kv;
  }
};

struct serving_source {
  std::string title, url, engine, metric_note;
  //! "per-query-head": the engine's decode attention reads each KV head once per query head it serves (no
  //! grouped-query kernel); "per-kv-head": once.
  bool kv_read_per_query_head = false;
  std::string engine_family;  //!< "tensorrt-llm" or "torch-cuda-graphs": whose calibration prices its runs
};

struct serving_runs {
  std::map<std::string, serving_source> sources;
  std::vector<serving_run> runs;
};

namespace detail {
inline constexpr key serving_runs_keys[] = {{"about"}, {"sources", required}, {"excluded"}, {"runs", required}};
inline constexpr key serving_source_keys[] = {{"title", required},    {"url", required},           {"engine", required},
                                              {"kv_reads", required}, {"engine_family", required}, {"metric_note"}};
inline constexpr std::string_view kv_reads[] = {"per-query-head", "per-kv-head"};
inline constexpr std::string_view engine_families[] = {"tensorrt-llm", "torch-cuda-graphs"};
inline constexpr key serving_run_keys[] = {{"name", required},
                                           {"source", required},
                                           {"role", required},
                                           {"system", required},
                                           {"model", required},
                                           {"tp", required},
                                           {"batch", required},
                                           {"prompt_tokens", required},
                                           {"output_tokens", required},
                                           {"weights", required},
                                           {"kv", required},
                                           {"metric", required},
                                           {"value", required},
                                           {"layers"}};
inline constexpr std::string_view serving_roles[] = {"fit", "held-out"};
inline constexpr std::string_view serving_metrics[] = {"ttft_s", "tpot_s", "output_tokens_per_device_second",
                                                       "output_tokens_per_second"};
inline constexpr std::string_view serving_systems[] = {"dgx-a100", "dgx-h100", "dgx-h200"};

inline serving_run read_serving_run(const json& j, const std::string& path, const serving_runs& file) {
  const object o(j, path, serving_run_keys, "a published serving run");
  serving_run r;
  r.name = o.text("name");
  r.source = o.text("source");
  if (!file.sources.contains(r.source)) fail(o.path("source"), "\"" + r.source + "\" is none of the file's sources");
  r.kv_read_per_query_head = file.sources.at(r.source).kv_read_per_query_head;
  r.engine_family = file.sources.at(r.source).engine_family;
  r.role = choice(o.at("role"), o.path("role"), serving_roles);
  r.system = choice(o.at("system"), o.path("system"), serving_systems);
  r.model = o.text("model");
  if (!model::find_named_shape(r.model)) {
    std::string names;
    for (const auto n : model::named_shape_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    fail(o.path("model"), "\"" + r.model + "\" is not a named model; one of " + names);
  }
  if (model::find_named_shape(r.model)->shape.moe())
    fail(o.path("model"), "\"" + r.model + "\" is a mixture of experts; the serving model prices dense models only");
  r.tp = o.count("tp", 1024);
  r.batch = o.count("batch", 1'000'000);
  r.prompt_tokens = static_cast<double>(o.count("prompt_tokens", 10'000'000));
  r.output_tokens = static_cast<double>(o.count("output_tokens", 10'000'000));
  if (r.tp == 0 || r.batch == 0 || r.prompt_tokens < 1 || r.output_tokens < 1)
    fail(path, "tp, batch, prompt_tokens and output_tokens must each be at least 1");
  r.weights = o.text("weights");
  r.kv = o.text("kv");
  r.metric = choice(o.at("metric"), o.path("metric"), serving_metrics);
  r.value = o.number("value");
  if (!(r.value > 0)) fail(o.path("value"), "must be positive");
  const auto& shape = model::find_named_shape(r.model)->shape;
  if (o.has("layers")) {
    r.layers = o.count("layers", shape.layers);
    if (r.layers == 0) fail(o.path("layers"), "must be 1 to the model's " + std::to_string(shape.layers));
  }
  return r;
}
}  // namespace detail

//! From parsed JSON (io::load or io::parse): errors name the JSON path.
inline serving_runs read_serving_runs(const json& j) {
  const object o(j, "", detail::serving_runs_keys, "a file of published serving runs");
  serving_runs file;
  if (!o.at("sources").is_object()) fail("sources", "expected an object of source names and their citations");
  for (auto it = o.at("sources").begin(); it != o.at("sources").end(); ++it) {
    const object s(it.value(), join("sources", it.key()), detail::serving_source_keys, "a source");
    serving_source x{s.text("title"),
                     s.text("url"),
                     s.text("engine"),
                     "",
                     choice(s.at("kv_reads"), s.path("kv_reads"), detail::kv_reads) == "per-query-head",
                     choice(s.at("engine_family"), s.path("engine_family"), detail::engine_families)};
    if (s.has("metric_note")) x.metric_note = s.text("metric_note");
    file.sources[it.key()] = std::move(x);
  }
  for_each(o.at("runs"), "runs", [&](const json& r, const std::string& path) {
    file.runs.push_back(detail::read_serving_run(r, path, file));
  });
  if (file.runs.empty()) fail("runs", "no run to price");
  return file;
}

//! The workload a run describes: its model at its lengths, with objectives no configuration misses (a run is
//! priced as measured, not judged) and no prefix cache.
inline plan::serving_workload serving_run_workload(const serving_run& r) {
  plan::serving_workload w;
  w.name = r.model + " " + std::to_string(static_cast<long>(r.prompt_tokens)) + "/" +
           std::to_string(static_cast<long>(r.output_tokens));
  w.shape = model::find_named_shape(r.model)->shape;
  if (r.layers) w.shape.layers = r.layers;
  w.prompt_tokens = r.prompt_tokens;
  w.output_tokens = r.output_tokens;
  w.ttft_slo = seconds{1e9};
  w.tpot_slo = seconds{1e9};
  w.hit_rate = model::power_law{per_byte{1e-30}, 1.0};  // never read: no run has a prefix cache
  w.error_budget = 1;                                   // a run's KV precision is as it ran
  w.precision = r.weights;
  return w;
}

//! The figure of a priced configuration that a run measured.
inline double metric_of(const serving_run& r, const plan::serving_cost& c) {
  if (r.metric == "ttft_s") return c.ttft.value();
  if (r.metric == "tpot_s") return c.tpot.value();
  if (r.metric == "output_tokens_per_second") return c.replica_tokens_per_second;
  return c.tokens_per_second;
}

//! A run's configuration priced on system `s` (its preset, calibrated as given).
inline plan::priced_configuration configuration_of(const serving_run& r, const plan::system& s) {
  return plan::price_configuration(s, serving_run_workload(r), r.configuration(), "runs[" + r.name + "]");
}

//! What the model predicts for a run's metric on system `s`.
inline double predict(const serving_run& r, const plan::system& s) { return metric_of(r, configuration_of(r, s).cost); }

//! The run's error: predicted over measured, less one. A time and a rate are both judged this way.
inline double serving_error(const serving_run& r, const plan::system& s) { return predict(r, s) / r.value - 1.0; }

//! The fitted constants of one engine family.
struct serving_calibration_fit {
  model::serving_calibration a100, h100, h200;
  std::size_t runs = 0;
  double rms_log_error = 0;  //!< over the fit runs
  //! What no fit run could move, left where it starts or tied: a device kind with no run (the H100's constants),
  //! the all-reduce's latency with no run at TP above 1, fp8's share with no fp8 run.
  std::vector<std::string> unfitted;
};

//! Every engine family's fit, by name.
using serving_calibrations = std::map<std::string, serving_calibration_fit>;

namespace detail {

struct serving_knob {
  const char* name;
  double low, high;
};
// Per device kind (A100, H100, H200) its HBM share; then what the engine costs on any of them.
inline constexpr std::array<serving_knob, 10> serving_knobs{{{"a100.hbm_share", 0.2, 1},
                                                             {"h100.hbm_share", 0.2, 1},
                                                             {"h200.hbm_share", 0.2, 1},
                                                             {"layer_overhead", 0, 300e-6},
                                                             {"kv_read_share", 0.05, 1},
                                                             {"sequence_overhead", 0, 50e-6},
                                                             {"all_reduce_latency", 0, 100e-6},
                                                             {"fp8_gemm_share", 0.3, 1},
                                                             {"fused_attention_share", 0.05, 1},
                                                             {"prefill_layer_overhead", 0, 300e-6}}};
using serving_point = std::array<double, serving_knobs.size()>;

inline serving_calibration_fit serving_fit_of(const serving_point& x) {
  serving_calibration_fit f;
  for (auto* c : {&f.a100, &f.h100, &f.h200}) {
    c->layer_overhead = seconds{x[3]};
    c->kv_read_share = x[4];
    c->sequence_overhead = seconds{x[5]};
    c->all_reduce_latency = seconds{x[6]};
    c->fp8_gemm_share = x[7];
    c->fused_attention_share = x[8];
    c->prefill_layer_overhead = seconds{x[9]};
  }
  f.a100.hbm_share = x[0];
  f.h100.hbm_share = x[1];
  f.h200.hbm_share = x[2];
  return f;
}

// A device kind's HBM share.
inline std::size_t device_knob(const std::string& system) {
  return system == "dgx-a100" ? 0 : system == "dgx-h100" ? 1 : 2;
}

}  // namespace detail

//! A family's calibration for the device a run ran on, with the run's engine's KV reads.
inline model::serving_calibration calibration_of(const serving_run& r, const serving_calibration_fit& f) {
  auto c = r.system == "dgx-a100" ? f.a100 : r.system == "dgx-h100" ? f.h100 : f.h200;
  c.kv_read_per_query_head = r.kv_read_per_query_head;
  return c;
}

//! The preset a run ran on, with its engine family's calibration in place of its own.
inline plan::system serving_system(const serving_run& r, const serving_calibrations& fits) {
  auto s = *plan::presets::find(r.system);
  const auto it = fits.find(r.engine_family);
  trinity::detail::require(it != fits.end(), "runs[" + r.name + "].source",
                           "its engine family, " + r.engine_family + ", has no run marked fit to calibrate it");
  s.device.serving = calibration_of(r, it->second);
  return s;
}

//! One family's constants from its runs marked fit.
inline serving_calibration_fit calibrate_serving_family(const serving_runs& file, const std::string& family) {
  std::vector<const serving_run*> fit;
  for (const auto& r : file.runs)
    if (r.role == "fit" && r.engine_family == family) fit.push_back(&r);
  trinity::detail::require(fit.size() >= 8, "runs", family + " needs at least 8 runs marked fit");
  // A device kind with no fit run takes the H100's constants, not constants no run moves.
  bool seen[3] = {};
  for (const auto* r : fit) seen[detail::device_knob(r->system)] = true;
  const auto tied = [&](detail::serving_point x) {
    for (const std::size_t d : {std::size_t{0}, std::size_t{2}})
      if (!seen[d]) x[d] = x[1];
    return x;
  };
  // Each run's configuration parsed and checked once; a trial calibration only reprices it (plan::price, what
  // price_configuration ends in).
  struct prepared {
    plan::system system;
    plan::priced_configuration configuration;
  };
  std::vector<prepared> runs;
  for (const auto* r : fit) {
    auto s = *plan::presets::find(r->system);
    auto c = configuration_of(*r, s);
    runs.push_back({std::move(s), std::move(c)});
  }
  const auto loss = [&](const detail::serving_point& x) {
    const auto f = detail::serving_fit_of(tied(x));
    double sum = 0;
    for (std::size_t i = 0; i < fit.size(); ++i) {
      auto& [s, c] = runs[i];
      s.device.serving = calibration_of(*fit[i], f);
      const auto cost = plan::price(s, c.workload, c.configuration.plan, c.codecs);
      const double e = std::log(metric_of(*fit[i], cost) / fit[i]->value);
      sum += e * e;
    }
    return sum;
  };
  detail::serving_point x{}, step{};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto& k = detail::serving_knobs[i];
    x[i] = (k.low + k.high) / 2;
    step[i] = (k.high - k.low) / 4;
  }
  double best = loss(x);
  for (int round = 0; round < 60; ++round) {
    bool moved = false;
    for (std::size_t i = 0; i < x.size(); ++i)
      for (const double sign : {1.0, -1.0}) {
        auto y = x;
        const auto& k = detail::serving_knobs[i];
        y[i] = std::clamp(y[i] + sign * step[i], k.low, k.high);
        if (const double l = loss(y); l < best) best = l, x = y, moved = true;
      }
    if (!moved)
      for (auto& s : step) s /= 2;
  }
  auto f = detail::serving_fit_of(tied(x));
  f.runs = fit.size();
  if (!seen[0]) f.unfitted.emplace_back("a100 (the H100's)");
  if (!seen[2]) f.unfitted.emplace_back("h200 (the H100's)");
  if (std::none_of(fit.begin(), fit.end(), [](const serving_run* r) { return r->tp > 1; }))
    f.unfitted.emplace_back("all_reduce_latency");
  if (std::none_of(fit.begin(), fit.end(), [](const serving_run* r) { return r->weights == "fp8"; }))
    f.unfitted.emplace_back("fp8_gemm_share");
  f.rms_log_error = std::sqrt(best / static_cast<double>(fit.size()));
  return f;
}

//! Every engine family with runs marked fit, calibrated.
inline serving_calibrations calibrate_serving(const serving_runs& file) {
  serving_calibrations out;
  for (const auto& r : file.runs)
    if (r.role == "fit" && !out.contains(r.engine_family))
      out[r.engine_family] = calibrate_serving_family(file, r.engine_family);
  return out;
}

}  // namespace trinity::io
