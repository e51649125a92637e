#pragma once
//! \file
//! A training stack as a file (`trinity fit --out`), read strictly and written back:
//!
//!   {"trinity_stack": 1, "name": "my-fsdp2", "source": "fitted by trinity fit on 2 measured runs",
//!    "constants": {"matmul_share": 0.74, "layer_overhead": 0.0002, "memory_factor": 1.06, "memory_overhead": 2.1e9},
//!    "interval": {"coverage": 0.8, "step_time": {"low": -0.21, "high": 0.21, "runs": 2}, "device_bytes": null},
//!    "fitted_on": ["13b-8gpu", "7b-8gpu"], "not_pinned": []}
//!
//! Quantities are numbers in base units (seconds, bytes) or with units ("0.2ms", "2.1GB"). A band is the natural
//! logarithms of measured / predicted (plan/training_stack.hpp); null where the runs said nothing of it.
//!
//! A serving stack (plan/serving_stack.hpp) says `"kind": "serving"`; its constants are those its runs pinned, and
//! its bands are by figure:
//!
//!   {"trinity_stack": 1, "kind": "serving", "name": "my-vllm", "constants": {"layer_overhead": "0.21ms"},
//!    "interval": {"coverage": 0.8, "ttft_s": null, "tpot_s": {"low": -0.1, "high": 0.12, "runs": 2},
//!                 "output_tokens_per_device_second": null}, "fitted_on": [...], "not_pinned": [...]}

#include <string>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/training_stack.hpp>
#include <trinity/plan/serving_stack.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::io {

namespace detail {
inline constexpr key stack_file_keys[] = {
    {"trinity_stack", required}, {"kind"},     {"name", required}, {"source"},
    {"constants", required},     {"interval"}, {"fitted_on"},      {"not_pinned"}};
inline constexpr key stack_constant_keys[] = {
    {"matmul_share"}, {"layer_overhead"}, {"memory_factor"}, {"memory_overhead"}};
inline constexpr key stack_interval_keys[] = {{"coverage", required}, {"step_time"}, {"device_bytes"}};
inline constexpr key band_keys[] = {{"low", required}, {"high", required}, {"runs", required}};
inline constexpr key serving_interval_keys[] = {
    {"coverage", required}, {"ttft_s"}, {"tpot_s"}, {"output_tokens_per_device_second"}};
inline constexpr std::string_view stack_kinds[] = {"training", "serving"};

//! The file's kind, checked against the one its reader reads.
inline void require_kind(const object& o, std::string_view kind) {
  const std::string given = o.has("kind") ? choice(o.at("kind"), o.path("kind"), stack_kinds) : "training";
  if (given != kind)
    fail(o.path("kind"), "is \"" + given + "\"; this prices a " + std::string(kind) +
                             " workload. Fix: the stack `trinity fit` wrote from " + std::string(kind) + " runs");
}

inline plan::residual_band read_band(const object& o, std::string_view k, double coverage) {
  if (!o.has(k) || o.at(k).is_null()) return {};
  const object b(o.at(k), o.path(k), band_keys, "a band, {\"low\": -0.2, \"high\": 0.2, \"runs\": 2}");
  plan::residual_band band{b.number("low"), b.number("high"), coverage, b.count("runs", 1'000'000, 1)};
  if (!(band.low <= band.high)) fail(b.path("high"), "is below low; a band runs from low to high");
  return band;
}

inline json band_json(const plan::residual_band& b) {
  if (!b.known()) return nullptr;
  return {{"low", b.low}, {"high", b.high}, {"runs", b.runs}};
}

inline std::vector<std::string> texts(const object& o, std::string_view k) {
  std::vector<std::string> out;
  if (o.has(k)) for_each(o.at(k), o.path(k), [&](const json& x, const std::string& at) { out.push_back(text(x, at)); });
  return out;
}

//! What either kind of stack file states first: its version, its kind, its name and source.
template <class Stack>
void read_head(const object& o, std::string_view kind, Stack& s) {
  if (o.count("trinity_stack") != 1) fail("trinity_stack", "is not 1: written by another version of trinity");
  require_kind(o, kind);
  s.name = o.text("name");
  o.get("source", s.source);
}

//! And last: the runs that fitted it and the constants they left.
template <class Stack>
void read_provenance(const object& o, Stack& s) {
  s.fitted_on = texts(o, "fitted_on");
  s.not_pinned = texts(o, "not_pinned");
}
}  // namespace detail

//! A stack file, validated: any failure is an invalid_input whose field is the JSON path.
inline plan::training_stack read_stack(const json& j) {
  const object o(j, "", detail::stack_file_keys, "a training stack (trinity fit --out writes one)");
  plan::training_stack s;
  detail::read_head(o, "training", s);
  const object k(o.at("constants"), o.path("constants"), detail::stack_constant_keys, "the stack's constants");
  k.get("matmul_share", s.constants.matmul_share);
  k.get("layer_overhead", s.constants.layer_overhead);
  k.get("memory_factor", s.constants.memory_factor);
  k.get("memory_overhead", s.constants.memory_overhead);
  model::validate(s.constants, "constants");
  if (o.has("interval")) {
    const object i(o.at("interval"), o.path("interval"), detail::stack_interval_keys, "the stack's interval");
    const double coverage = i.positive_number("coverage", 0.999);
    s.step_time = detail::read_band(i, "step_time", coverage);
    s.device_bytes = detail::read_band(i, "device_bytes", coverage);
  }
  detail::read_provenance(o, s);
  return s;
}

//! The file read_stack reads back into `s`.
inline json write_stack(const plan::training_stack& s) {
  const double coverage = s.step_time.known() ? s.step_time.coverage : s.device_bytes.coverage;
  return {{"trinity_stack", 1},
          {"name", s.name},
          {"source", s.source},
          {"constants",
           {{"matmul_share", s.constants.matmul_share},
            {"layer_overhead", s.constants.layer_overhead.value()},
            {"memory_factor", s.constants.memory_factor},
            {"memory_overhead", s.constants.memory_overhead.value()}}},
          {"interval",
           {{"coverage", coverage > 0 ? coverage : 0.8},
            {"step_time", detail::band_json(s.step_time)},
            {"device_bytes", detail::band_json(s.device_bytes)}}},
          {"fitted_on", s.fitted_on},
          {"not_pinned", s.not_pinned}};
}

//! A serving stack file, validated as read_stack validates a training one.
inline plan::serving_stack read_serving_stack(const json& j) {
  const object o(j, "", detail::stack_file_keys, "a serving stack (trinity fit --out writes one)");
  plan::serving_stack s;
  detail::read_head(o, "serving", s);
  const auto& k = o.at("constants");
  if (!k.is_object()) fail(o.path("constants"), "expected the stack's constants (a JSON object), not " + kind_of(k));
  for (auto it = k.begin(); it != k.end(); ++it) {
    const std::string at = join(o.path("constants"), it.key());
    const auto* c = plan::find_serving_constant(it.key());
    s.constants.emplace_back(
        it.key(), c && c->name.ends_with("share") ? number(it.value(), at) : quantity<seconds>(it.value(), at).value());
  }
  plan::validate(s, "constants");
  if (o.has("interval")) {
    const object i(o.at("interval"), o.path("interval"), detail::serving_interval_keys, "the stack's interval");
    const double coverage = i.positive_number("coverage", 0.999);
    s.ttft = detail::read_band(i, "ttft_s", coverage);
    s.tpot = detail::read_band(i, "tpot_s", coverage);
    s.throughput = detail::read_band(i, "output_tokens_per_device_second", coverage);
  }
  detail::read_provenance(o, s);
  return s;
}

//! The file read_serving_stack reads back into `s`.
inline json write_serving_stack(const plan::serving_stack& s) {
  json constants = json::object();
  for (const auto& [name, value] : s.constants) constants[name] = value;
  double coverage = 0.8;
  for (const auto* b : {&s.ttft, &s.tpot, &s.throughput})
    if (b->known()) coverage = b->coverage;
  return {{"trinity_stack", 1},
          {"kind", "serving"},
          {"name", s.name},
          {"source", s.source},
          {"constants", constants},
          {"interval",
           {{"coverage", coverage},
            {"ttft_s", detail::band_json(s.ttft)},
            {"tpot_s", detail::band_json(s.tpot)},
            {"output_tokens_per_device_second", detail::band_json(s.throughput)}}},
          {"fitted_on", s.fitted_on},
          {"not_pinned", s.not_pinned}};
}

}  // namespace trinity::io
