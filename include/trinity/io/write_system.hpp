#pragma once
//! \file
//! A system written as the JSON io::read_system reads back into the same system: every figure as a number in
//! base units (nlohmann/json writes a double with the digits that read back to it), the device with its curves
//! (io/device.hpp), a tier or link by its preset where it is one, with every figure stated. What the system took
//! by default (its `assumed` list) is left out, so that the copy takes, and lists, the same defaults. This is how
//! a preset becomes a file a user edits (`trinity presets --system dgx-h100`), and how a test holds a preset and
//! its JSON copy to one price.
//!
//!   const json j = io::write_system(*plan::presets::find("dgx-h100"));
//!   assert(io::read_system(j) prices as the preset);
//!
//! Not expressible in a system file, and so not written: a tier's level or a link's family other than a
//! preset's (a tier without a preset reads as host memory, a link as a packet network), and a server's curves.

#include <string>
#include <string_view>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>

namespace trinity::io {

namespace detail {

inline bool assumed_field(const plan::assumptions& a, std::string_view field) {
  for (const auto& x : a)
    if (x.field == field) return true;
  return false;
}

//! One rate, or bf16's and the others listed.
inline json compute_json(const plan::device_spec& d) {
  if (d.compute_by_precision.empty()) return d.compute.value();
  json c = json::object();
  c["bf16"] = d.compute.value();
  for (const auto& [precision, rate] : d.compute_by_precision) c[precision] = rate.value();
  return c;
}

inline json curves_json(const plan::device_spec& d, const std::string& path, const plan::assumptions& a) {
  json o = json::object();
  if (!assumed_field(a, path + ".gemm.peak_fraction")) {
    o["gemm"] = {{"peak_fraction", d.gemm.peak_fraction}, {"half_size", d.gemm.half_size}};
    if (!assumed_field(a, path + ".gemm.ceiling")) o["gemm"]["ceiling"] = d.gemm.ceiling;
  }
  if (d.attention != model::fused_attention_efficiency{})
    o["attention"] = {{"forward", d.attention.forward},
                      {"forward_knee", d.attention.forward_knee},
                      {"backward", d.attention.backward},
                      {"backward_knee", d.attention.backward_knee},
                      {"head_dim_knee", d.attention.head_dim_knee}};
  if (const auto& c = d.serving; c != model::serving_calibration{})
    o["serving"] = {{"hbm_share", c.hbm_share},
                    {"kv_read_share", c.kv_read_share},
                    {"layer_overhead", c.layer_overhead.value()},
                    {"prefill_layer_overhead", c.prefill_layer_overhead.value()},
                    {"sequence_overhead", c.sequence_overhead.value()},
                    {"all_reduce_latency", c.all_reduce_latency.value()},
                    {"fp8_gemm_share", c.fp8_gemm_share},
                    {"fused_attention_share", c.fused_attention_share},
                    {"kv_read_per_query_head", c.kv_read_per_query_head}};
  return o;
}

//! What a device and a server both state: its name, rates, power, price and source.
inline json device_fields(const plan::device_spec& d, const std::string& path, const plan::assumptions& a) {
  json o = {{"name", d.name}, {"compute", compute_json(d)}, {"power", d.power.value()}};
  if (!assumed_field(a, path + ".idle_power")) o["idle_power"] = d.idle_power.value();
  o["price_per_hour"] = d.price_per_hour;
  o["gpu"] = d.gpu;
  o["source"] = d.source;
  return o;
}

//! A tier's or a link's latency and energy, where they were given, not assumed.
template <class Descriptor>
void latency_energy(json& o, const Descriptor& x, const std::string& path, const plan::assumptions& a) {
  if (!assumed_field(a, path + ".latency")) o["latency"] = x.latency.value();
  if (!assumed_field(a, path + ".energy")) o["energy"] = x.energy.value();
}

}  // namespace detail

//! What a device is, its curves included, at JSON path `path` of a system whose defaults are `a`: a system's
//! "device" (`count` true) or a profile file (`count` false, the file a device's "profile" names).
inline json write_device(const plan::device_spec& d, const std::string& path = "device",
                         const plan::assumptions& a = {}, bool count = true) {
  json o = detail::device_fields(d, path, a);
  if (count) o["count"] = d.count;
  o.update(detail::curves_json(d, path, a));
  o["unmeasured"] = d.unmeasured;
  return o;
}

//! An edge system's server: one machine, priced by its rates and power alone.
inline json write_server(const plan::device_spec& d, const plan::assumptions& a = {}) {
  return detail::device_fields(d, "server", a);
}

//! A tier: its preset where it is one (the preset fixes its level), every figure stated.
inline json write_tier(const plan::priced_tier& t, const std::string& path, const plan::assumptions& a = {}) {
  json o = json::object();
  const auto p = find_tier(t.name);
  o[p && p->level == t.level && p->byte_addressable == t.byte_addressable ? "preset" : "name"] = t.name;
  o["capacity"] = t.capacity.value();
  o["bandwidth"] = t.bandwidth.value();
  detail::latency_energy(o, t, path, a);
  o["price_per_gb_hour"] = t.price_per_gb_hour;
  o["source"] = t.source;
  return o;
}

//! A link: its preset where it is one (the preset fixes its family, flit and coherence), every figure stated.
inline json write_link(const plan::priced_link& l, const std::string& path, const plan::assumptions& a = {}) {
  json o = json::object();
  const auto p = find_link(l.name);
  const bool preset = p && p->family == l.family && p->flit == l.flit && p->max_endpoints == l.max_endpoints &&
                      p->coherent == l.coherent;
  o[preset ? "preset" : "name"] = l.name;
  o["bandwidth"] = l.bandwidth.value();
  if (l.collective_bandwidth > bytes_per_second{}) o["collective_bandwidth"] = l.collective_bandwidth.value();
  detail::latency_energy(o, l, path, a);
  o["price_per_gb"] = l.price_per_gb;
  o["source"] = l.source;
  return o;
}

//! The whole system.
inline json write_system(const plan::system& s) {
  json o = {{"name", s.name}, {"device", write_device(s.device, "device", s.assumed)}};
  o["tiers"] = json::array();
  for (std::size_t i = 0; i < s.tiers.size(); ++i)
    o["tiers"].push_back(write_tier(s.tiers[i], index("tiers", i), s.assumed));
  o["interconnect"] = write_link(s.interconnect, "interconnect", s.assumed);
  if (s.server) o["server"] = write_server(*s.server, s.assumed);
  if (!s.fabric.empty()) o["fabric"] = s.fabric;
  if (!s.fabric_memory_tier.empty()) o["fabric_memory_tier"] = s.fabric_memory_tier;
  if (s.scale_up_domain > 0) o["scale_up_domain"] = s.scale_up_domain;
  if (s.scale_out) o["scale_out"] = write_link(*s.scale_out, "scale_out", s.assumed);
  return o;
}

}  // namespace trinity::io
