#pragma once
//! \file
//! A serving stack: the engine constants a user's own serving runs set (`trinity fit` on serving runs,
//! plan/serving_stack_fit.hpp), in place of the device's calibration, which the presets carry from the
//! TensorRT-LLM runs it was fitted on (plan/detail/measured_serving.hpp). An engine differs from another in what it
//! costs beyond its bytes and FLOPs: a layer's launches, a sequence's bookkeeping, the share of HBM its kernels
//! stream at, its attention kernels. A stack states only the constants its runs pinned; every other one stays the
//! device's. Its bands give a serving prediction its interval, as a training stack's do (plan/training_stack.hpp).

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::plan {

//! One engine constant a stack may set: its name (as model::serving_calibration's field and a stack file's key),
//! the range a fit searches, and how to read and set it in base units (seconds, or a share).
struct serving_constant {
  std::string_view name;
  double low, high;
  double (*get)(const model::serving_calibration&);
  void (*set)(model::serving_calibration&, double);
};

namespace detail {
using calibration = model::serving_calibration;
template <double calibration::*Field>
double get_share(const calibration& c) {
  return c.*Field;
}
template <double calibration::*Field>
void set_share(calibration& c, double v) {
  c.*Field = v;
}
template <seconds calibration::*Field>
double get_time(const calibration& c) {
  return (c.*Field).value();
}
template <seconds calibration::*Field>
void set_time(calibration& c, double v) {
  c.*Field = seconds{v};
}
template <double calibration::*Field>
constexpr serving_constant share(std::string_view name, double low) {
  return {name, low, 1, get_share<Field>, set_share<Field>};
}
template <seconds calibration::*Field>
constexpr serving_constant time(std::string_view name, double high) {
  return {name, 0, high, get_time<Field>, set_time<Field>};
}
}  // namespace detail

//! The constants in the order a fit prefers them where runs can pin only some: the per-layer overhead (batch-1
//! decode), the HBM share (large batches), the per-sequence overhead, the KV read share (long contexts), then
//! prefill's (its per-layer overhead, fused attention) and the rarer fp8 GEMM share and all-reduce latency. The
//! ranges are those of the published fit (io/serving_runs.hpp), the overheads' ten times wider: an eager engine
//! pays milliseconds a layer where a captured graph pays microseconds.
inline constexpr std::array<serving_constant, 8> serving_constants{{
    detail::time<&detail::calibration::layer_overhead>("layer_overhead", 3e-3),
    detail::share<&detail::calibration::hbm_share>("hbm_share", 0.2),
    detail::time<&detail::calibration::sequence_overhead>("sequence_overhead", 5e-4),
    detail::share<&detail::calibration::kv_read_share>("kv_read_share", 0.05),
    detail::time<&detail::calibration::prefill_layer_overhead>("prefill_layer_overhead", 3e-3),
    detail::share<&detail::calibration::fused_attention_share>("fused_attention_share", 0.05),
    detail::share<&detail::calibration::fp8_gemm_share>("fp8_gemm_share", 0.3),
    detail::time<&detail::calibration::all_reduce_latency>("all_reduce_latency", 1e-3),
}};

//! The constant named `name`, or nullptr.
inline const serving_constant* find_serving_constant(std::string_view name) {
  const auto it = std::find_if(serving_constants.begin(), serving_constants.end(),
                               [&](const serving_constant& k) { return k.name == name; });
  return it == serving_constants.end() ? nullptr : &*it;
}

struct serving_stack {
  std::string name;
  std::string source;  //!< what set it: the built-in's runs, or the runs `trinity fit` was given
  std::vector<std::pair<std::string, double>> constants{};  //!< those it sets, by name, in base units
  residual_band ttft{}, tpot{}, throughput{};               //!< none known: the device's published bands
  std::vector<std::string> fitted_on{};
  std::vector<std::string> not_pinned{};  //!< constants the runs could not move, left as the device's
};

//! `c` with the stack's constants in place of its own.
inline model::serving_calibration with_stack(model::serving_calibration c, const serving_stack& s) {
  for (const auto& [name, value] : s.constants)
    if (const auto* k = find_serving_constant(name)) k->set(c, value);
  return c;
}

//! Each constant of `s` named and inside its range, or an invalid_input at `at`.`name` with the range.
inline void validate(const serving_stack& s, const std::string& at = "constants") {
  for (const auto& [name, value] : s.constants) {
    const auto* k = find_serving_constant(name);
    if (!k) {
      std::vector<std::string_view> names;
      for (const auto& c : serving_constants) names.push_back(c.name);
      throw invalid_input(at + "." + name,
                          "is no serving constant" + trinity::detail::suggestion(name, names) +
                              "; a serving stack sets layer_overhead, hbm_share, sequence_overhead, kv_read_share, "
                              "prefill_layer_overhead, fused_attention_share, fp8_gemm_share or all_reduce_latency");
    }
    trinity::detail::require(value >= k->low && value <= k->high, at + "." + name,
                             "is outside " + std::to_string(k->low) + " to " + std::to_string(k->high) +
                                 " (seconds for an overhead or latency, a share otherwise)");
  }
}

namespace serving_stacks {

//! TensorRT-LLM: the engine the device presets' serving constants were fitted on; it sets nothing of its own.
inline serving_stack tensorrt_llm() {
  serving_stack s;
  s.name = "tensorrt-llm";
  s.source = "the device's calibration, fitted on TensorRT-LLM 0.5 and 0.6.1 (bench/published/serving-runs.json)";
  return s;
}

inline std::vector<std::string_view> names() { return {"tensorrt-llm"}; }

//! The built-in serving stack named `name`, or nullopt.
inline std::optional<serving_stack> find(std::string_view name) {
  if (name == "tensorrt-llm") return tensorrt_llm();
  return std::nullopt;
}

}  // namespace serving_stacks
}  // namespace trinity::plan
