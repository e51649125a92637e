#pragma once
//! \file
//! The hardware sections of the preset catalogue (reports/preset_catalogue.hpp): the tiers, the links, the routes
//! between tiers and the parameters the documents do not give, each as a table and as JSON, with its source.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include <trinity/documented_parameter.hpp>
#include <trinity/presets.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

namespace detail {

inline nlohmann::json tier_json(const tier_descriptor& t) {
  return {{"name", t.name},
          {"level", to_string(t.level)},
          {"capacity_bytes", t.capacity.value()},
          {"bandwidth_bytes_per_second", t.bandwidth.value()},
          {"latency_seconds", t.latency.value()},
          {"energy_joules_per_byte", t.energy.value()},
          {"byte_addressable", t.byte_addressable},
          {"source", t.source}};
}

inline nlohmann::json link_json(const link_descriptor& l) {
  return {{"name", l.name},
          {"family", to_string(l.family)},
          {"bandwidth_bytes_per_second", l.bandwidth.value()},
          {"collective_bytes_per_second", l.collective_rate().value()},
          {"latency_seconds", l.latency.value()},
          {"flit_bytes", l.flit.value()},
          {"max_endpoints", l.max_endpoints},
          {"coherent", l.coherent},
          {"energy_joules_per_byte", l.energy.value()},
          {"source", l.source}};
}

inline std::string unit_of(documented_parameter::kind k) {
  switch (k) {
    case documented_parameter::kind::latency:
      return "seconds";
    case documented_parameter::kind::bandwidth:
      return "bytes_per_second";
    case documented_parameter::kind::energy_per_byte:
      return "joules_per_byte";
  }
  return "";
}

inline std::string show(const documented_parameter& p) {
  switch (p.what) {
    case documented_parameter::kind::latency:
      return to_string(seconds{p.value});
    case documented_parameter::kind::bandwidth:
      return to_string(bytes_per_second{p.value});
    case documented_parameter::kind::energy_per_byte:
      return to_string(joules_per_byte{p.value});
  }
  return "";
}

//! The tiers, links, routes or parameters (`section`) as a table.
inline table fabric_section_table(std::string_view section) {
  if (section == "tiers") {
    table t({"tier", "level", "capacity", "bandwidth", "latency", "energy", "source"});
    for (const auto& x : preset_tiers)
      t.add({std::string(x.name), std::string(to_string(x.level)), to_string(x.capacity), to_string(x.bandwidth),
             to_string(x.latency), to_string(x.energy), std::string(x.source)});
    return t;
  }
  if (section == "links") {
    table t({"link", "family", "bandwidth/dir", "collectives/dir", "latency", "flit", "max endpoints", "coherent",
             "source"});
    for (const auto& l : preset_links)
      t.add({std::string(l.name), std::string(to_string(l.family)), to_string(l.bandwidth),
             to_string(l.collective_rate()), to_string(l.latency), to_string_iec(l.flit),
             l.max_endpoints ? std::to_string(l.max_endpoints) : "-", l.coherent ? "yes" : "no",
             std::string(l.source)});
    return t;
  }
  if (section == "routes") {
    table t({"from", "to", "over", "1 GB takes"});
    for (const auto& r : preset_routes)
      t.add({std::string(r.from), std::string(r.to),
             r.hops == 1 ? std::string(r.link) : "staged through " + std::string(r.staging),
             to_string(r.gigabyte_time)});
    return t;
  }
  table t({"parameter (not in the documents)", "value", "source"});
  for (const auto& p : preset_parameters) t.add({std::string(p.name), show(p), std::string(p.source)});
  return t;
}

//! The same as JSON, an array.
inline nlohmann::json fabric_section_json(std::string_view section) {
  using nlohmann::json;
  json out = json::array();
  if (section == "tiers")
    for (const auto& t : preset_tiers) out.push_back(tier_json(t));
  else if (section == "links")
    for (const auto& l : preset_links) out.push_back(link_json(l));
  else if (section == "routes")
    for (const auto& r : preset_routes)
      out.push_back({{"from", r.from},
                     {"to", r.to},
                     {"hops", r.hops},
                     {"link", r.link.empty() ? json(nullptr) : json(r.link)},
                     {"staging", r.staging.empty() ? json(nullptr) : json(r.staging)},
                     {"seconds_per_gigabyte", r.gigabyte_time.value()}});
  else
    for (const auto& p : preset_parameters)
      out.push_back({{"name", p.name}, {"value", p.value}, {"unit", unit_of(p.what)}, {"source", p.source}});
  return out;
}

}  // namespace detail

}  // namespace trinity::reports
