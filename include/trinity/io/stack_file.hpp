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

#include <string>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/training_stack.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::io {

namespace detail {
inline constexpr key stack_file_keys[] = {{"trinity_stack", required},
                                          {"name", required},
                                          {"source"},
                                          {"constants", required},
                                          {"interval"},
                                          {"fitted_on"},
                                          {"not_pinned"}};
inline constexpr key stack_constant_keys[] = {
    {"matmul_share"}, {"layer_overhead"}, {"memory_factor"}, {"memory_overhead"}};
inline constexpr key stack_interval_keys[] = {{"coverage", required}, {"step_time"}, {"device_bytes"}};
inline constexpr key band_keys[] = {{"low", required}, {"high", required}, {"runs", required}};

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
}  // namespace detail

//! A stack file, validated: any failure is an invalid_input whose field is the JSON path.
inline plan::training_stack read_stack(const json& j) {
  const object o(j, "", detail::stack_file_keys, "a training stack (trinity fit --out writes one)");
  if (o.count("trinity_stack") != 1) fail("trinity_stack", "is not 1: written by another version of trinity");
  plan::training_stack s;
  s.name = o.text("name");
  o.get("source", s.source);
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
  s.fitted_on = detail::texts(o, "fitted_on");
  s.not_pinned = detail::texts(o, "not_pinned");
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

}  // namespace trinity::io
