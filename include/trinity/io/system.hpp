#pragma once
//! \file
//! A system description in JSON, read strictly into plan::system: one key
//! table per object (the system, its device and server, a tier, a link), an
//! unknown key refused with the nearest valid one, then plan::validate. The
//! schema is docs/planning.md §2:
//!
//!   {"name": "two-h100-box",
//!    "device": {"name": "h100-sxm", "compute": "989TFLOPs", "power": "700W", "idle_power": "90W", "count": 8},
//!    "tiers": ["h100-hbm3", {"preset": "host-ddr5", "capacity": "256GB"}],
//!    "interconnect": {"preset": "nvlink5-x18", "bandwidth": "450GB/s"}}
//!
//! A cluster of such nodes adds its scale-out link (per device and direction) and how many devices share the
//! interconnect: "scale_up_domain": 8, "scale_out": {"preset": "infiniband-400g"}. A device may carry its
//! GEMM curve for the parallel step model: "gemm": {"peak_fraction": 1, "half_size": 640, "ceiling": 0.695}
//! (a missing ceiling is 1, and assumed). A link may carry what NCCL's collectives move over it,
//! "collective_bandwidth": "370GB/s" (left out: its bandwidth; the NVLink and InfiniBand presets of the DGX
//! systems carry NCCL's measured rates, which a link that changes their bandwidth drops).
//!
//!   plan::system s = io::read_system(io::load("box.json"));

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>

namespace trinity::io {

namespace detail {

inline constexpr key system_keys[] = {{"name", required},         {"device", required}, {"tiers", required},
                                      {"interconnect", required}, {"server"},           {"fabric"},
                                      {"fabric_memory_tier"},     {"scale_up_domain"},  {"scale_out"}};
inline constexpr key device_keys[] = {{"name"},
                                      {"compute", required},
                                      {"power", required},
                                      {"idle_power"},
                                      {"count", required},
                                      {"price_per_hour"},
                                      {"gpu"},
                                      {"source"},
                                      {"gemm"}};
inline constexpr key gemm_keys[] = {{"peak_fraction", required}, {"half_size", required}, {"ceiling"}};
// A server is one machine: no count.
inline constexpr key server_keys[] = {
    {"name"}, {"compute", required}, {"power", required}, {"idle_power"}, {"price_per_hour"}, {"gpu"}, {"source"}};
inline constexpr key tier_keys[] = {{"preset"},  {"name"},   {"capacity"},          {"bandwidth"},
                                    {"latency"}, {"energy"}, {"price_per_gb_hour"}, {"source"}};
inline constexpr key link_keys[] = {{"preset"},  {"name"},   {"bandwidth"},    {"collective_bandwidth"},
                                    {"latency"}, {"energy"}, {"price_per_gb"}, {"source"}};

template <class Array>
std::vector<std::string_view> names_of(const Array& presets) {
  std::vector<std::string_view> v;
  for (const auto& p : presets) v.push_back(p.name);
  return v;
}

inline plan::priced_tier tier_preset(const json& j, const std::string& path) {
  const std::string name = text(j, path);
  if (const auto d = find_tier(name)) return plan::tier_of(*d);
  fail(path, "\"" + name + "\" is not a tier preset" + trinity::detail::suggestion(name, names_of(preset_tiers)));
}
inline plan::priced_link link_preset(const json& j, const std::string& path) {
  const std::string name = text(j, path);
  if (const auto d = find_link(name)) return plan::link_of(*d);
  fail(path, "\"" + name + "\" is not a link preset" + trinity::detail::suggestion(name, names_of(preset_links)));
}

//! A dense rate, or one per precision ({"bf16": ..., "fp32": ...}); bf16's (else the first) is the default.
inline void read_compute(const json& c, const std::string& path, plan::device_spec& d) {
  if (!c.is_object()) {
    d.compute = quantity<flops_per_second>(c, path);
    return;
  }
  if (c.empty()) fail(path, "name at least one precision, e.g. {\"bf16\": \"989TFLOPs\"}");
  for (auto it = c.begin(); it != c.end(); ++it) {
    const std::string at = join(path, it.key());
    if (!plan::known_precision(it.key()))
      fail(at, "unknown precision" + trinity::detail::suggestion(it.key(), plan::precisions));
    d.compute_by_precision.emplace_back(it.key(), quantity<flops_per_second>(it.value(), at));
  }
  d.compute = c.contains("bf16") ? d.rate("bf16") : d.compute_by_precision.front().second;
}

inline plan::device_spec read_device(const json& j, const std::string& path, bool server, plan::assumptions& assumed) {
  const object o(j, path, server ? std::span<const key>(server_keys) : std::span<const key>(device_keys),
                 server ? "a server" : "a device");
  plan::device_spec d;
  d.name = path;
  o.get("name", d.name);
  read_compute(o.at("compute"), o.path("compute"), d);
  d.power = o.quantity<watts>("power");
  o.get("idle_power", d.idle_power, assumed);
  if (!server) d.count = o.count("count", 1'000'000);
  o.get("price_per_hour", d.price_per_hour);
  o.get("gpu", d.gpu);
  o.get("source", d.source);
  if (!server && o.has("gemm")) {
    // The share of peak a GEMM gets by its shape (model/gemm.hpp): what the parallel step model prices with.
    const object g(o.at("gemm"), o.path("gemm"), gemm_keys,
                   "a GEMM curve, {\"peak_fraction\": 1, \"half_size\": 640, \"ceiling\": 0.695}");
    d.gemm.peak_fraction = g.number("peak_fraction");
    d.gemm.half_size = g.number("half_size");
    g.get("ceiling", d.gemm.ceiling, assumed);
    model::validate(d.gemm, o.path("gemm"));
  } else if (!server) {
    plan::assume(assumed, o.path("gemm.peak_fraction"), d.gemm.peak_fraction);
    plan::assume(assumed, o.path("gemm.half_size"), d.gemm.half_size);
    plan::assume(assumed, o.path("gemm.ceiling"), d.gemm.ceiling);
  }
  return d;
}

// A tier's or link's latency and energy: given, a preset's, or zero (recorded as assumed).
template <class Spec>
void get_latency_energy(const object& o, Spec& x, plan::assumptions* assumed) {
  const bool preset = o.has("preset");
  for (const auto k : {"latency", "energy"}) {
    if (o.has(k) || preset || !assumed) continue;
    plan::assume(*assumed, o.path(k), 0.0);
  }
  o.get("latency", x.latency);
  o.get("energy", x.energy);
}

}  // namespace detail

//! A tier: a preset's name, or an object that may start from a preset and override its fields.
//! A field left out of a tier or link with no preset behind it is zero, and recorded in `assumed` when given.
//! A tier with no preset sits at `level` (the planner reads none of it: a system's tiers[0] is the device's own
//! memory, the rest are where state may go) and is byte-addressable memory.
inline plan::priced_tier read_tier(const json& j, const std::string& path, plan::assumptions* assumed = nullptr,
                                   tier_level level = tier_level::host) {
  if (j.is_string()) return detail::tier_preset(j, path);
  const object o(j, path, detail::tier_keys, "a tier preset's name or a tier");
  plan::priced_tier t{};
  t.level = level;
  t.byte_addressable = true;
  if (o.has("preset")) t = detail::tier_preset(o.at("preset"), o.path("preset"));
  o.get("name", t.name);
  o.get("capacity", t.capacity);
  o.get("bandwidth", t.bandwidth);
  detail::get_latency_energy(o, t, assumed);
  o.get("price_per_gb_hour", t.price_per_gb_hour);
  o.get("source", t.source);
  return t;
}

//! A link: a preset's name, or an object that may start from a preset and override its fields.
//! A link with no preset is taken as a packet network (Ethernet's family), with no granule of its own (1 B), no
//! limit on its endpoints and no coherence: the planner reads only its bandwidth, latency, energy and price.
inline plan::priced_link read_link(const json& j, const std::string& path, plan::assumptions* assumed = nullptr) {
  if (j.is_string()) return detail::link_preset(j, path);
  const object o(j, path, detail::link_keys, "a link preset's name or a link");
  plan::priced_link l{};
  l.family = link_family::ethernet;
  l.flit = bytes{1};
  if (o.has("preset")) l = detail::link_preset(o.at("preset"), o.path("preset"));
  o.get("name", l.name);
  // A preset's collective rate was measured on its own line rate: another bandwidth leaves none measured.
  if (o.has("bandwidth")) l.collective_bandwidth = {};
  o.get("bandwidth", l.bandwidth);
  o.get("collective_bandwidth", l.collective_bandwidth);
  detail::get_latency_energy(o, l, assumed);
  o.get("price_per_gb", l.price_per_gb);
  o.get("source", l.source);
  return l;
}

//! A whole system, validated: any failure is an invalid_input whose field is the JSON path.
inline plan::system read_system(const json& j) {
  const object o(j, "", detail::system_keys, "a system");
  plan::system s;
  s.name = o.text("name");
  s.device = detail::read_device(o.at("device"), "device", false, s.assumed);
  if (o.has("server")) s.server = detail::read_device(o.at("server"), "server", true, s.assumed);
  o.get("fabric", s.fabric);
  o.get("fabric_memory_tier", s.fabric_memory_tier);
  for_each(
      o.at("tiers"), "tiers",
      [&](const json& t, const std::string& at) {
        const auto level = s.tiers.empty() ? tier_level::accelerator_local : tier_level::host;
        s.tiers.push_back(read_tier(t, at, &s.assumed, level));
      },
      64);
  s.interconnect = read_link(o.at("interconnect"), "interconnect", &s.assumed);
  if (o.has("scale_up_domain"))
    s.scale_up_domain = o.count("scale_up_domain", 1'000'000);
  else if (o.has("scale_out"))
    plan::assume(s.assumed, "scale_up_domain", s.device.count);  // 0: one domain of all
  if (o.has("scale_out")) s.scale_out = read_link(o.at("scale_out"), "scale_out", &s.assumed);
  plan::validate(s);
  return s;
}

}  // namespace trinity::io
