#pragma once
//! \file
//! A workload description in JSON, read strictly: training (the default
//! "type"), diffusion, edge or llm-serve, each with one key table per object (the
//! workload, its precision, hit-rate curve, trace and encodings), validated
//! against the system it runs on. The schema is docs/planning.md §3, §6, §7.
//!
//!   auto file = io::read_workload(io::load("llm-13b.json"), system, "dir/of/the/file");
//!   auto& w = std::get<plan::training_workload>(file.workload);
//!
//! A diffusion workload may bring a request trace in place of its hit-rate
//! curve; it is returned as `trace`, with paths resolved against `base`, and
//! io/diffusion_trace.hpp replays it, fits the curve and validates.

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/plan/data_curation.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/hetero_train.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>

namespace trinity::io {

using any_workload = std::variant<plan::training_workload, plan::diffusion_workload, plan::edge_workload,
                                  plan::serving_workload, plan::hetero_train_workload,
                                  plan::data_curation_workload>;

//! A request trace to replay in place of a diffusion workload's hit-rate curve.
struct diffusion_trace {
  std::string requests;            //!< CSV of timestamp,row
  std::string embeddings;          //!< .fvecs
  std::vector<bytes> capacities;   //!< where to replay it (at least two)
  bool measure_reuse_depth = true;  //!< false when the workload gave its reuse_depth
};

struct workload_file {
  any_workload workload;
  //! Set for a diffusion workload that brought a trace: its hit_rate is not fitted yet, nor validated.
  std::optional<diffusion_trace> trace;
};

namespace detail {

inline constexpr key training_keys[] = {{"name", required},     {"type"},             {"model"},
                                        {"parameters"},         {"layers"},           {"hidden"},
                                        {"sequence", required},
                                        {"batch"},              {"data_parallel"},    {"precision"},
                                        {"error_budget"},       {"ffn_hidden"},       {"heads"},
                                        {"kv_heads"},           {"vocabulary"},       {"gated_mlp"},
                                        {"global_batch"},       {"flash_attention"},  {"dropout"},
                                        {"sequence_mix"}};
inline constexpr key bucket_keys[] = {{"name"}, {"sequence", required}, {"share", required}};
inline constexpr key precision_keys[] = {{"parameter", required}, {"gradient", required}, {"optimizer", required},
                                         {"compute"}};
inline constexpr key diffusion_keys[] = {{"name", required},   {"type", required}, {"steps", required},
                                         {"step_flops", required}, {"reuse_depth"},  {"latent_size", required},
                                         {"stored_depths"},    {"model_bytes"},    {"precision"},
                                         {"latent_element_bytes"}, {"error_budget"}, {"hit_rate"},
                                         {"trace"}};
inline constexpr key hit_rate_keys[] = {{"family"}, {"kappa_per_gb", required}, {"gamma", required}};
inline constexpr key trace_keys[] = {{"requests", required}, {"embeddings", required}, {"capacities"}};
inline constexpr key edge_keys[] = {{"name", required},   {"type", required},       {"frames_per_second", required},
                                    {"width"},            {"height"},               {"analysis_flops", required},
                                    {"head_fraction"},    {"feature_size", required}, {"result_size"},
                                    {"model_bytes"},      {"error_budget"},         {"precision"},
                                    {"encodings"},        {"bitrate"}};
inline constexpr key encoding_keys[] = {{"name", required}, {"bits_per_pixel", required}, {"encode_flops"},
                                        {"decode_flops"}, {"source"}};

inline constexpr key serving_keys[] = {{"name", required},   {"type", required},   {"model"},
                                       {"layers"},           {"hidden"},           {"ffn_hidden"},
                                       {"heads"},            {"kv_heads"},         {"vocabulary"},
                                       {"gated_mlp"},        {"prompt_tokens", required}, {"output_tokens", required},
                                       {"ttft_slo", required}, {"tpot_slo", required}, {"hit_rate", required},
                                       {"hit_rate_bound"},   {"prefill_efficiency"}, {"error_budget"},
                                       {"precision"}};
inline constexpr std::string_view shape_keys[] = {"layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocabulary"};

inline constexpr key hetero_train_keys[] = {{"name", required},       {"type", required},    {"consumers"},
                                            {"devices_per_node"},     {"producer", required}, {"max_producers"},
                                            {"link", required},
                                            {"stream_cap"},           {"max_streams"},       {"encode_high", required},
                                            {"encode_low", required}, {"phases", required}};
inline constexpr key producer_keys[] = {{"name", required}, {"power"}, {"price_per_hour"}, {"source"}};
inline constexpr key phase_keys[] = {{"samples"}, {"sample", required}, {"produce_per_second", required},
                                     {"consume_per_second", required}};

inline constexpr key data_curation_keys[] = {{"name", required},        {"type", required},   {"devices"},
                                             {"cpu_workers", required}, {"model_efficiency"}, {"sharing_efficiency"},
                                             {"operators", required}};
inline constexpr key curation_stage_keys[] = {{"name", required}, {"on", required}, {"seconds"},  {"flops"},
                                              {"efficiency"},     {"memory"},       {"share"},    {"source"}};

inline constexpr std::string_view workload_types[] = {"training", "diffusion", "edge", "llm-serve", "hetero-train",
                                                      "data-curation"};

inline std::string precision_name(const object& o, std::string_view k) {
  return choice(o.at(k), o.path(k), plan::precisions);
}

// Failures of plan::validate name "workload.<field>"; in a workload file the field is spelt without it.
template <class W>
W validated(W w, const plan::system& s) {
  try {
    plan::validate(w, s);
  } catch (const invalid_input& e) {
    std::string field = e.field();
    if (field.rfind("workload.", 0) == 0) field = field.substr(9);
    throw invalid_input(field, e.problem());
  }
  return w;
}

// A power-law hit-rate curve in bytes: {"family": "power-law", "kappa_per_gb": k, "gamma": g}.
inline model::power_law read_power_law(const object& o, const char* what) {
  const object h(o.at("hit_rate"), "hit_rate", hit_rate_keys, what);
  if (h.has("family")) {
    static constexpr std::string_view families[] = {"power-law"};
    (void)choice(h.at("family"), h.path("family"), families);
  }
  return {per_byte{h.number("kappa_per_gb") / 1e9}, h.number("gamma")};
}

// "\"llama2-7b\", \"llama2-13b\", ... or \"gpt3-175b\"": the named shapes, for a refusal.
inline std::string named_models() {
  std::string out;
  const auto names = model::named_shape_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "\"" : i + 1 == names.size() ? " or \"" : ", \"") + std::string(names[i]) + "\"";
  return out;
}

// A model named (its published shape, model/named_shapes.hpp) or spelt out, one of the two. What a spelt-out
// shape leaves to its defaults (kv_heads, gated_mlp) goes to `assumed` when given.
inline model::transformer_shape read_shape(const object& o, plan::assumptions* assumed = nullptr) {
  bool any = false;
  for (auto k : shape_keys) any |= o.has(k);
  if (o.has("model") == any)
    fail("model", "name a model (" + named_models() + ") or give its shape (layers, hidden, ffn_hidden, heads, "
                  "kv_heads, vocabulary), one of the two");
  if (o.has("model")) {
    const auto names = model::named_shape_names();
    const auto m = choice(o.at("model"), "model", names);
    if (o.has("gated_mlp")) fail("gated_mlp", "is part of the named model's shape; leave it out or spell the shape out");
    return model::find_named_shape(m)->shape;
  }
  model::transformer_shape m;
  m.layers = o.count("layers");
  m.hidden = o.count("hidden");
  m.ffn_hidden = o.count("ffn_hidden");
  m.heads = o.count("heads");
  m.kv_heads = o.has("kv_heads") ? o.count("kv_heads") : m.heads;
  m.vocabulary = o.count("vocabulary");
  if (assumed) {
    if (!o.has("kv_heads")) plan::assume(*assumed, o.path("kv_heads"), m.kv_heads);
    o.get("gated_mlp", m.gated_mlp, *assumed);
  } else {
    o.get("gated_mlp", m.gated_mlp);
  }
  model::validate(m);  // names the key, which is the JSON field here
  return m;
}

// Ψ from the shape, which determines it: a `parameters` given beside a shape is only a check, and one more than
// 1% off is refused, so the data-parallel planner (which reads Ψ) and the layout model (which reads the shape)
// cannot price two different models.
inline double shape_parameters(const object& o, const model::transformer_shape& m) {
  const double derived = model::parameters(m);
  if (!o.has("parameters")) return derived;
  const double given = o.number("parameters");
  if (!(std::abs(given - derived) <= 0.01 * derived))
    fail("parameters", units::detail::format_number(given) + " differs by " +
                           units::detail::format_number(100.0 * (given - derived) / derived) +
                           "% from the shape's " + units::detail::format_number(derived) +
                           " (its embeddings, attention, MLP and norms). Fix: leave parameters out "
                           "(the shape determines it), or correct the shape");
  return derived;
}

inline plan::training_workload read_training(const json& j, const plan::system& s) {
  const object o(j, "", training_keys, "a training workload");
  plan::training_workload w;
  auto& assumed = w.assumed;
  w.name = o.text("name");
  w.sequence = o.count("sequence");
  o.get("batch", w.batch, assumed);
  if (o.has("data_parallel")) w.data_parallel = o.count("data_parallel");
  else plan::assume(assumed, "data_parallel", s.device.count);  // 0 in the workload: every device
  o.get("error_budget", w.error_budget, assumed);
  // The transformer's shape, for the parallel step model: named, or heads, ffn_hidden and vocabulary together.
  const bool shaped = o.has("model") || o.has("heads") || o.has("ffn_hidden") || o.has("vocabulary") || o.has("kv_heads");
  if (shaped) {
    if (!o.has("model"))
      for (const char* k : {"heads", "ffn_hidden", "vocabulary"})
        if (!o.has(k)) fail(k, "missing; a transformer's shape needs heads, ffn_hidden and vocabulary (kv_heads "
                               "defaults to heads, gated_mlp to true), or name the model (\"model\": \"llama2-7b\")");
    w.shape = read_shape(o, &assumed);
    w.layers = w.shape->layers;
    w.hidden = w.shape->hidden;
    w.parameters = shape_parameters(o, *w.shape);
  } else {
    for (const char* k : {"gated_mlp", "global_batch", "flash_attention", "dropout", "sequence_mix"})
      if (o.has(k)) fail(k, "describes a transformer's shape; give heads, ffn_hidden and vocabulary too, or name the "
                            "model (\"model\": \"llama2-7b\")");
    for (const char* k : {"parameters", "layers", "hidden"})
      if (!o.has(k)) fail(k, "missing; a training workload without a transformer's shape needs parameters, layers "
                             "and hidden (or give the shape, heads, ffn_hidden and vocabulary, which determines "
                             "parameters, or name the model: \"model\": \"llama2-7b\")");
    w.parameters = o.number("parameters");
    w.layers = o.count("layers");
    w.hidden = o.count("hidden");
  }
  if (shaped) {
    if (o.has("global_batch")) w.global_batch = o.count("global_batch");
    else plan::assume(assumed, "global_batch", w.batch * (w.data_parallel ? w.data_parallel : s.device.count));
    o.get("flash_attention", w.flash_attention, assumed);
    o.get("dropout", w.dropout, assumed);
  }
  if (o.has("sequence_mix")) {
    // Shares of the global batch's sequences by length: each bucket a whole number of them, all of them in all.
    double total = 0;
    for_each(o.at("sequence_mix"), "sequence_mix", [&](const json& b, const std::string& at) {
      const object e(b, at, bucket_keys, "a bucket, {\"name\": \"720p\", \"sequence\": 75600, \"share\": 0.2}");
      plan::sequence_bucket x;
      x.name = "bucket " + std::to_string(w.sequence_mix.size());
      e.get("name", x.name);
      x.sequence = e.count("sequence");
      x.share = e.number("share");
      if (!(x.share > 0 && x.share <= 1)) fail(e.path("share"), "must lie in (0, 1]: the bucket's share of the sequences");
      total += x.share;
      w.sequence_mix.push_back(std::move(x));
    }, 64);
    if (w.sequence_mix.empty()) fail("sequence_mix", "give at least one bucket, or leave sequence_mix out");
    if (std::abs(total - 1.0) > 1e-9) fail("sequence_mix", "the shares add up to " + std::to_string(total) + "; they must add up to 1");
  }
  if (!o.has("precision")) plan::assume(assumed, "precision", "mixed");
  if (o.has("precision")) {
    const auto& p = o.at("precision");
    if (p.is_string()) {
      static constexpr std::string_view named[] = {"mixed", "fp32"};
      if (choice(p, "precision", named) == "mixed") w.precision = model::mixed_precision_adam;
      else w.precision = model::fp32_adam, w.compute_precision = "fp32";
    } else {
      const object q(p, "precision", precision_keys, "\"mixed\", \"fp32\" or a precision object");
      w.precision = {q.number("parameter"), q.number("gradient"), q.number("optimizer")};
      if (q.has("compute")) w.compute_precision = precision_name(q, "compute");
    }
  }
  return validated(std::move(w), s);
}

inline plan::diffusion_workload read_diffusion(const json& j, const plan::system& s, const std::filesystem::path& base,
                                               std::optional<diffusion_trace>& trace) {
  const object o(j, "", diffusion_keys, "a diffusion workload");
  plan::diffusion_workload w;
  w.name = o.text("name");
  w.steps = o.count("steps", 1'000'000);
  w.step_cost = o.quantity<flops>("step_flops");
  o.get("reuse_depth", w.reuse_depth);
  w.latent_size = o.quantity<bytes>("latent_size");
  o.get("stored_depths", w.stored_depths, w.assumed);
  o.get("model_bytes", w.model_bytes, w.assumed);
  if (o.has("precision")) w.precision = precision_name(o, "precision");
  else plan::assume(w.assumed, "precision", w.precision);
  o.get("latent_element_bytes", w.latent_element_bytes, w.assumed);
  o.get("error_budget", w.error_budget, w.assumed);
  if (o.has("trace") == o.has("hit_rate"))
    fail("hit_rate", "give a hit-rate curve (hit_rate) or a request trace to fit one from (trace), one of the two");
  if (o.has("hit_rate")) {
    w.hit_rate = read_power_law(o, "a power-law hit-rate curve");
    if (!o.has("reuse_depth"))
      fail("reuse_depth", "missing; with a hit_rate curve give the steps a hit skips (trinity cache replay prints "
                          "its mean), or bring the trace to measure it from");
    return validated(std::move(w), s);
  }
  if (w.steps < 25 || !(w.latent_size > bytes{}) || !(w.step_cost > flops{}))
    fail("trace", "replaying needs steps of at least 25 (Table 1's deepest reuse), a latent_size and step_flops");
  const object t(o.at("trace"), "trace", trace_keys, "{\"requests\": FILE.csv, \"embeddings\": FILE.fvecs, \"capacities\": [...]}");
  const auto resolve = [&](std::string_view k) {
    const std::filesystem::path p = t.text(k);
    return (p.is_absolute() || base.empty() ? p : base / p).string();
  };
  diffusion_trace d{resolve("requests"), resolve("embeddings"), {bytes{1e9}, bytes{1e10}, bytes{1e11}, bytes{1e12}},
                    !o.has("reuse_depth")};
  if (t.has("capacities")) {
    d.capacities.clear();
    for_each(t.at("capacities"), t.path("capacities"),
             [&](const json& c, const std::string& at) { d.capacities.push_back(quantity<bytes>(c, at)); }, 64);
    if (d.capacities.size() < 2)
      fail(t.path("capacities"), "expected at least two capacities, e.g. [\"1GB\", \"10GB\", \"100GB\"]");
  }
  trace = std::move(d);
  return w;
}

inline plan::edge_workload read_edge(const json& j, const plan::system& s) {
  const object o(j, "", edge_keys, "an edge workload");
  plan::edge_workload w;
  w.name = o.text("name");
  w.frames_per_second = o.number("frames_per_second");
  o.get("width", w.width, w.assumed);
  o.get("height", w.height, w.assumed);
  w.analysis = o.quantity<flops>("analysis_flops");
  o.get("head_fraction", w.head_fraction, w.assumed);
  w.feature_size = o.quantity<bytes>("feature_size");
  o.get("result_size", w.result_size, w.assumed);
  o.get("model_bytes", w.model_bytes, w.assumed);
  o.get("error_budget", w.error_budget, w.assumed);
  if (o.has("precision")) w.precision = precision_name(o, "precision");
  else plan::assume(w.assumed, "precision", w.precision);
  if (!o.has("encodings")) plan::assume(w.assumed, "encodings", plan::encoding_names(w.encodings));
  if (o.has("encodings")) {
    w.encodings.clear();
    for_each(o.at("encodings"), "encodings", [&](const json& e, const std::string& at) {
      const object x(e, at, encoding_keys, "an encoding");
      plan::video_encoding v;
      v.name = x.text("name");
      v.bits_per_pixel = x.number("bits_per_pixel");
      x.get("encode_flops", v.encode);
      x.get("decode_flops", v.decode);
      x.get("source", v.source);
      w.encodings.push_back(std::move(v));
    }, 256);
  }
  if (o.has("bitrate")) {
    // The camera's own stream: sets the first encoding's bits per pixel.
    const auto rate = o.quantity<bytes_per_second>("bitrate");
    if (w.encodings.empty()) fail("bitrate", "needs an encoding to apply to; give encodings or leave them out");
    if (!(w.frames_per_second > 0) || w.width == 0 || w.height == 0)
      fail("bitrate", "needs a positive frame rate and frame size to turn into bits per pixel");
    w.encodings[0].bits_per_pixel = rate.value() * 8.0 / (w.pixels() * w.frames_per_second);
  }
  return validated(std::move(w), s);
}

// Producers encode, consumers (the system's devices) train, over a link of capped streams (plan/hetero_train.hpp).
inline plan::hetero_train_workload read_hetero_train(const json& j, const plan::system& s) {
  const object o(j, "", hetero_train_keys, "a hetero-train workload");
  plan::hetero_train_workload w;
  w.name = o.text("name");
  if (o.has("consumers")) w.consumers = o.count("consumers");
  else plan::assume(w.assumed, "consumers", s.device.count);  // 0 in the workload: every device
  o.get("devices_per_node", w.devices_per_node, w.assumed);
  const object p(o.at("producer"), "producer", producer_keys, "a producer class");
  w.producer.name = p.text("name");
  p.get("power", w.producer.power, w.assumed);
  p.get("price_per_hour", w.producer.price_per_hour, w.assumed);
  p.get("source", w.producer.source);
  o.get("max_producers", w.max_producers, w.assumed);
  w.link = o.quantity<bytes_per_second>("link");
  o.get("stream_cap", w.stream_cap, w.assumed);
  o.get("max_streams", w.max_streams, w.assumed);
  w.encode_high = o.number("encode_high");
  w.encode_low = o.number("encode_low");
  for_each(o.at("phases"), "phases", [&](const json& e, const std::string& at) {
    const object x(e, at, phase_keys, "a phase");
    model::sample_phase ph;
    x.get("samples", ph.samples, w.assumed);
    ph.sample = x.quantity<bytes>("sample");
    ph.produce_per_second = x.number("produce_per_second");
    ph.consume_per_second = x.number("consume_per_second");
    w.phases.push_back(ph);
  }, 1024);
  return validated(std::move(w), s);
}

// CPU operators and models on the devices, in pipeline order (plan/data_curation.hpp).
inline plan::data_curation_workload read_data_curation(const json& j, const plan::system& s) {
  const object o(j, "", data_curation_keys, "a data-curation workload");
  plan::data_curation_workload w;
  w.name = o.text("name");
  if (o.has("devices")) w.devices = o.count("devices");
  else plan::assume(w.assumed, "devices", s.device.count);  // 0 in the workload: every device
  w.cpu_workers = o.count("cpu_workers");
  o.get("model_efficiency", w.model_efficiency, w.assumed);
  o.get("sharing_efficiency", w.sharing_efficiency, w.assumed);
  for_each(o.at("operators"), "operators", [&](const json& e, const std::string& at) {
    const object x(e, at, curation_stage_keys, "an operator");
    static constexpr std::string_view where[] = {"cpu", "device"};
    plan::curation_stage st;
    st.name = x.text("name");
    st.device = choice(x.at("on"), x.path("on"), where) == "device";
    // Each kind of operator has its own figures; one given to the other kind would be silently unused.
    for (const auto k : st.device ? std::vector<std::string_view>{"seconds"}
                                  : std::vector<std::string_view>{"flops", "efficiency", "memory"})
      if (x.has(k))
        fail(x.path(k), st.device ? "is for a CPU operator; a model (\"on\": \"device\") gives flops and memory"
                                  : "is for a model (\"on\": \"device\"); a CPU operator gives seconds");
    if (st.device) {
      st.work = x.quantity<flops>("flops");
      st.memory = x.quantity<bytes>("memory");
      x.get("efficiency", st.efficiency);
      if (!x.has("efficiency")) plan::assume(w.assumed, x.path("efficiency"), w.model_efficiency);  // the workload's
    } else {
      st.cpu_seconds = x.quantity<seconds>("seconds").value();
    }
    x.get("share", st.share, w.assumed);
    x.get("source", st.source);
    w.operators.push_back(std::move(st));
  }, 64);
  return validated(std::move(w), s);
}

inline plan::serving_workload read_serving(const json& j, const plan::system& s) {
  const object o(j, "", serving_keys, "an llm-serve workload");
  plan::serving_workload w;
  w.name = o.text("name");
  w.shape = read_shape(o, &w.assumed);
  w.prompt_tokens = o.number("prompt_tokens");
  w.output_tokens = o.number("output_tokens");
  w.ttft_slo = o.quantity<seconds>("ttft_slo");
  w.tpot_slo = o.quantity<seconds>("tpot_slo");
  w.hit_rate = read_power_law(o, "the prefix cache's power-law hit rate against bytes of 16-bit KV (trinity cache "
                                 "replay --format mooncake fits it)");
  o.get("hit_rate_bound", w.hit_rate_bound, w.assumed);
  o.get("prefill_efficiency", w.prefill_efficiency, w.assumed);
  o.get("error_budget", w.error_budget, w.assumed);
  if (o.has("precision")) w.precision = precision_name(o, "precision");
  else plan::assume(w.assumed, "precision", w.precision);
  return validated(std::move(w), s);
}

}  // namespace detail

//! A workload file's contents, checked against the system it will run on; relative trace paths are taken
//! from `base`, the file's folder.
inline workload_file read_workload(const json& j, const plan::system& s, const std::filesystem::path& base = {}) {
  if (!j.is_object()) fail("", "expected a workload (a JSON object), not " + kind_of(j));
  std::string type = "training";
  if (j.contains("type")) type = choice(j["type"], "type", detail::workload_types);
  workload_file out;
  if (type == "diffusion") out.workload = detail::read_diffusion(j, s, base, out.trace);
  else if (type == "edge") out.workload = detail::read_edge(j, s);
  else if (type == "llm-serve") out.workload = detail::read_serving(j, s);
  else if (type == "hetero-train") out.workload = detail::read_hetero_train(j, s);
  else if (type == "data-curation") out.workload = detail::read_data_curation(j, s);
  else out.workload = detail::read_training(j, s);
  return out;
}

}  // namespace trinity::io
