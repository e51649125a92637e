#pragma once
//! \file
//! A device in JSON, read strictly into plan::device_spec and written back. A device names its figures, or starts
//! from a device preset (plan/device_presets.hpp) or a profile file and overrides what it gives:
//!
//!   "device": {"preset": "h100-sxm", "count": 8}
//!   "device": {"profile": "h100.json", "count": 8, "idle_power": "75W"}
//!   "device": {"name": "box-gpu", "compute": {"bf16": "989TFLOPs", "fp8": "1979TFLOPs"}, "power": "700W",
//!              "count": 8, "gemm": {"peak_fraction": 1, "half_size": 639, "ceiling": 0.695},
//!              "attention": "cudnn", "serving": {"hbm_share": 0.8, "layer_overhead": "0.2ms"}}
//!
//! A profile file is a device object without its count (`trinity presets --device h100-sxm` writes one), found
//! beside the system file. "attention" is a measured kernel's name (plan/attention_kernel.hpp) or a curve's five
//! constants (model/fused_attention.hpp); "serving" overrides the constants of model::serving_calibration it
//! names. A given "compute" replaces every rate the preset had: a device's rates are stated together.

#include <filesystem>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/detail/measured_attention.hpp>
#include <trinity/plan/device.hpp>
#include <trinity/plan/device_presets.hpp>

namespace trinity::io {

//! Where a device is read: its JSON path, whether it is an edge system's server (one machine: no count), the
//! folder a profile file's name is relative to, and where the defaults it takes are recorded.
struct device_context {
  std::string path = "device";
  bool server = false;
  std::filesystem::path base = {};
  plan::assumptions* assumed = nullptr;
};

namespace detail {

inline constexpr key device_keys[] = {
    {"name"},           {"preset"}, {"profile"}, {"compute"}, {"power"},     {"idle_power"}, {"count", required},
    {"price_per_hour"}, {"gpu"},    {"source"},  {"gemm"},    {"attention"}, {"serving"},    {"unmeasured"}};
// A server is one machine: no count. A profile file is a device without its count, and names no other file.
inline constexpr key server_keys[] = {{"name"},       {"preset"},         {"profile"}, {"compute"}, {"power"},
                                      {"idle_power"}, {"price_per_hour"}, {"gpu"},     {"source"}};
inline constexpr key device_profile_keys[] = {{"name"},       {"preset"},         {"compute"}, {"power"},
                                              {"idle_power"}, {"price_per_hour"}, {"gpu"},     {"source"},
                                              {"gemm"},       {"attention"},      {"serving"}, {"unmeasured"}};
inline constexpr key device_gemm_keys[] = {{"peak_fraction", required}, {"half_size", required}, {"ceiling"}};
inline constexpr key device_attention_keys[] = {{"forward", required},
                                                {"forward_knee", required},
                                                {"backward", required},
                                                {"backward_knee", required},
                                                {"head_dim_knee", required}};
inline constexpr key device_serving_keys[] = {{"hbm_share"},
                                              {"kv_read_share"},
                                              {"layer_overhead"},
                                              {"prefill_layer_overhead"},
                                              {"sequence_overhead"},
                                              {"all_reduce_latency"},
                                              {"fp8_gemm_share"},
                                              {"fused_attention_share"},
                                              {"kv_read_per_query_head"}};

//! A dense rate, or one per precision ({"bf16": ..., "fp32": ...}); bf16's (else the first) is `compute`, the
//! others are listed.
inline void read_compute(const json& c, const std::string& path, plan::device_spec& d) {
  d.compute_by_precision.clear();
  if (!c.is_object()) {
    d.compute = quantity<flops_per_second>(c, path);
    return;
  }
  if (c.empty()) fail(path, "name at least one precision, e.g. {\"bf16\": \"989TFLOPs\"}");
  for (auto it = c.begin(); it != c.end(); ++it) {
    const std::string at = join(path, it.key());
    if (!plan::known_precision(it.key()))
      fail(at, "unknown precision" + trinity::detail::suggestion(it.key(), plan::precisions));
    const auto rate = quantity<flops_per_second>(it.value(), at);
    if (it.key() != "bf16") d.compute_by_precision.emplace_back(it.key(), rate);
  }
  d.compute = c.contains("bf16") ? quantity<flops_per_second>(c.at("bf16"), join(path, "bf16"))
                                 : d.compute_by_precision.front().second;
}

inline model::gemm_efficiency read_gemm(const object& o, plan::assumptions* assumed) {
  const object g(o.at("gemm"), o.path("gemm"), device_gemm_keys,
                 "a GEMM curve, {\"peak_fraction\": 1, \"half_size\": 640, \"ceiling\": 0.695}");
  model::gemm_efficiency e;
  e.peak_fraction = g.number("peak_fraction");
  e.half_size = g.number("half_size");
  if (assumed)
    g.get("ceiling", e.ceiling, *assumed);
  else
    g.get("ceiling", e.ceiling);
  model::validate(e, o.path("gemm"));
  return e;
}

//! A measured kernel's name, or a curve's constants.
inline model::fused_attention_efficiency read_attention(const json& j, const std::string& path) {
  if (j.is_string()) {
    const std::string name = text(j, path);
    std::vector<std::string_view> names;
    for (const auto& k : plan::detail::measured_h100_attention_kernels) {
      if (k.name == name) return k.curve;
      names.push_back(k.name);
    }
    fail(path, "\"" + name + "\" is no measured kernel" + trinity::detail::suggestion(name, names) +
                   "; or give the curve's constants (forward, forward_knee, backward, backward_knee, head_dim_knee)");
  }
  const object a(j, path, device_attention_keys, "a measured kernel's name or a fused attention curve");
  model::fused_attention_efficiency e{a.number("forward"), a.number("forward_knee"), a.number("backward"),
                                      a.number("backward_knee"), a.number("head_dim_knee")};
  model::validate(e, path);
  return e;
}

//! The serving constants the object names, over `c`.
inline model::serving_calibration read_serving(const json& j, const std::string& path, model::serving_calibration c) {
  const object s(j, path, device_serving_keys, "a serving engine's constants on this device");
  s.get("hbm_share", c.hbm_share);
  s.get("kv_read_share", c.kv_read_share);
  s.get("layer_overhead", c.layer_overhead);
  s.get("prefill_layer_overhead", c.prefill_layer_overhead);
  s.get("sequence_overhead", c.sequence_overhead);
  s.get("all_reduce_latency", c.all_reduce_latency);
  s.get("fp8_gemm_share", c.fp8_gemm_share);
  s.get("fused_attention_share", c.fused_attention_share);
  s.get("kv_read_per_query_head", c.kv_read_per_query_head);
  model::validate(c, path);
  return c;
}

//! "gb200-gpu, h100-sxm, ...": the device presets, for an error to list.
inline std::string device_preset_list() {
  std::string out;
  for (const auto x : plan::presets::device_names()) out += (out.empty() ? "" : ", ") + std::string(x);
  return out;
}

inline plan::device_spec preset_device(const object& o) {
  const std::string name = o.text("preset");
  if (auto d = plan::presets::find_device(name)) return *d;
  fail(o.path("preset"),
       "\"" + name + "\" is not a device preset" + trinity::detail::suggestion(name, plan::presets::device_names()));
}

//! The curves a device may carry, and say were not measured on it.
inline constexpr std::string_view curve_names[] = {"gemm", "attention", "serving"};

//! Which of its curves a device read from `o` did not measure: those it gives are measured (drop them from
//! `d`'s list); an "unmeasured" list, where given, is the list.
inline void read_unmeasured(const object& o, plan::device_spec& d) {
  for (const auto curve : curve_names)
    if (o.has(curve)) std::erase(d.unmeasured, std::string(curve));
  if (!o.has("unmeasured")) return;
  d.unmeasured.clear();
  for_each(
      o.at("unmeasured"), o.path("unmeasured"),
      [&](const json& x, const std::string& at) {
        auto name = choice(x, at, curve_names);
        if (!d.measured(name)) fail(at, "\"" + name + "\" is listed twice");
        d.unmeasured.push_back(std::move(name));
      },
      3);
}

//! The fields `o` gives, over device `d`.
inline plan::device_spec read_device_fields(const object& o, plan::device_spec d, const device_context& c) {
  o.get("name", d.name);
  if (o.has("compute")) read_compute(o.at("compute"), o.path("compute"), d);
  o.get("power", d.power);
  o.get("price_per_hour", d.price_per_hour);
  o.get("gpu", d.gpu);
  o.get("source", d.source);
  if (o.has("gemm")) d.gemm = read_gemm(o, c.assumed);
  if (o.has("attention")) d.attention = read_attention(o.at("attention"), o.path("attention"));
  if (o.has("serving")) d.serving = read_serving(o.at("serving"), o.path("serving"), d.serving);
  read_unmeasured(o, d);
  return d;
}

//! A profile file named at `o`'s "profile", resolved against the system file's folder.
inline plan::device_spec profile_device(const object& o, const device_context& c) {
  const std::string name = o.text("profile");
  const std::string file = (c.base / name).string();
  json j;
  try {
    j = load(file);
  } catch (const invalid_input& e) {
    fail(o.path("profile"), "\"" + name + "\": " + e.problem());
  }
  const object p(j, file, device_profile_keys, "a device profile (a device without its count)");
  plan::device_spec d = p.has("preset") ? preset_device(p) : plan::device_spec{};
  device_context in_file = c;
  in_file.assumed = nullptr;  // the profile's own figures are the device's: nothing of it is a default
  d = read_device_fields(p, std::move(d), in_file);
  p.get("idle_power", d.idle_power);
  return d;
}

}  // namespace detail

//! A device or a server, validated. A device that names no preset and no profile gives its compute and power; the
//! defaults it takes (its idle power, its GEMM curve) are recorded in `c.assumed`.
inline plan::device_spec read_device(const json& j, const device_context& c) {
  const std::span<const key> keys = c.server ? std::span<const key>(detail::server_keys) : detail::device_keys;
  const object o(j, c.path, keys, c.server ? "a server" : "a device");
  if (o.has("preset") && o.has("profile"))
    fail(o.path("profile"), "a device starts from a preset or from a profile file, not both. Fix: keep one");
  const bool based = o.has("preset") || o.has("profile");
  plan::device_spec d = o.has("preset")    ? detail::preset_device(o)
                        : o.has("profile") ? detail::profile_device(o, c)
                                           : plan::device_spec{};
  if (!based) {
    d.name = c.path;
    if (!c.server) d.unmeasured.assign(std::begin(detail::curve_names), std::end(detail::curve_names));
    for (const auto k : {"compute", "power"})
      if (!o.has(k))
        fail(o.path(k), "missing; a device needs it, or a \"preset\" (" + detail::device_preset_list() +
                            ") or a \"profile\" file to start from");
  }
  d = detail::read_device_fields(o, std::move(d), c);
  if (based || !c.assumed)
    o.get("idle_power", d.idle_power);
  else
    o.get("idle_power", d.idle_power, *c.assumed);
  if (!c.server) d.count = o.count("count", 1'000'000);
  if (!c.server && !based && !o.has("gemm") && c.assumed) {
    plan::assume(*c.assumed, o.path("gemm.peak_fraction"), d.gemm.peak_fraction);
    plan::assume(*c.assumed, o.path("gemm.half_size"), d.gemm.half_size);
    plan::assume(*c.assumed, o.path("gemm.ceiling"), d.gemm.ceiling);
  }
  plan::detail::validate(d, c.path);
  return d;
}

}  // namespace trinity::io
