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
//! interconnect: "scale_up_domain": 8, "scale_out": {"preset": "infiniband-400g"}. A device may start from a
//! device preset or a profile file and carry its measured curves (io/device.hpp): `{"preset": "h100-sxm",
//! "count": 8}` prices as the DGX presets' H100 does. A link may carry what NCCL's collectives move over it,
//! "collective_bandwidth": "370GB/s" (left out: its bandwidth; the NVLink and InfiniBand presets of the DGX
//! systems carry NCCL's measured rates, which a link that changes their bandwidth drops).
//!
//!   plan::system s = io::read_system(io::load("box.json"));

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/device.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>

namespace trinity::io {

namespace detail {

inline constexpr key system_keys[] = {{"name", required},         {"device", required}, {"tiers", required},
                                      {"interconnect", required}, {"server"},           {"fabric"},
                                      {"fabric_memory_tier"},     {"scale_up_domain"},  {"scale_out"}};
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

//! A whole system, validated: any failure is an invalid_input whose field is the JSON path. A device's "profile"
//! file is found in `base`, the system file's folder.
inline plan::system read_system(const json& j, const std::filesystem::path& base = {}) {
  const object o(j, "", detail::system_keys, "a system");
  plan::system s;
  s.name = o.text("name");
  s.device = read_device(o.at("device"), {"device", false, base, &s.assumed});
  if (o.has("server")) s.server = read_device(o.at("server"), {"server", true, base, &s.assumed});
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
