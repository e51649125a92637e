#pragma once
//! \file
//! Every preset a plan can name, section by section, each with its figures and sources: systems, devices, tiers,
//! links, the routes between tiers, the parameters the documents do not give, workloads (with the kind that
//! reads them), models (published transformer shapes) and stacks (training and serving). `trinity presets
//! [SECTION] [--json]` prints it; each section is read from the list its lookups read (plan::presets::names(),
//! workloads::preset_names(), model::named_shapes(), ...), so a preset added there is listed here, never missed.
//!
//!   workloads::print_presets(std::cout, "workloads");       // one section as a table
//!   workloads::presets_json("models");                      // {"models": [...]}
//!   workloads::presets_json("");                            // every section

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/io/write_system.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/plan/serving_stack.hpp>
#include <trinity/plan/training_stack.hpp>
#include <trinity/presets.hpp>
#include <trinity/reports/preset_sections.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>
#include <trinity/workloads/registry.hpp>

namespace trinity::workloads {

using reports::table;

//! The sections, in the order `trinity presets` prints them.
inline std::vector<std::string_view> preset_section_names() {
  return {"systems", "devices", "tiers", "links", "routes", "parameters", "workloads", "models", "stacks"};
}

namespace detail {

inline table systems_table() {
  table t({"system", "device", "count", "tiers", "interconnect", "scale-out"});
  for (const auto name : plan::presets::names()) {
    const auto s = *plan::presets::find(name);
    std::string tiers;
    for (const auto& x : s.tiers) tiers += (tiers.empty() ? "" : ", ") + x.name;
    t.add({std::string(name), s.device.name, std::to_string(s.device.count), tiers, s.interconnect.name,
           s.scale_out ? s.scale_out->name + " past " + std::to_string(plan::scale_up_devices(s)) : "-"});
  }
  return t;
}

inline table devices_table() {
  table t({"device", "bf16 dense", "power", "GEMM curve", "attention curve", "source"});
  for (const auto name : plan::presets::device_names()) {
    const auto d = *plan::presets::find_device(name);
    t.add({d.name, to_string(d.compute), to_string(d.power),
           d.gemm == model::gemm_efficiency{} ? "none (the peak)" : "measured",
           d.attention.measured() ? "measured" : "none (as GEMMs)", d.source});
  }
  return t;
}

inline table workloads_table() {
  table t({"workload", "type"});
  for (const auto& [name, type] : preset_types()) t.add({std::string(name), std::string(type)});
  return t;
}

inline table models_table() {
  table t({"model", "parameters", "layers", "hidden", "heads", "experts", "source"});
  for (const auto& m : model::named_shapes())
    t.add({std::string(m.name), units::detail::format_number(m.published_parameters / 1e9) + "B",
           std::to_string(m.shape.layers), std::to_string(m.shape.hidden),
           std::to_string(m.shape.heads) + " (" + std::to_string(m.shape.kv_heads) + " KV)",
           m.shape.experts ? std::to_string(m.shape.experts) + ", " + std::to_string(m.shape.top_k) + " a token" : "-",
           std::string(m.source)});
  return t;
}

inline table stacks_table() {
  table t({"stack", "for", "source"});
  for (const auto name : plan::stacks::names())
    t.add({std::string(name), "training", plan::stacks::find(name)->source});
  for (const auto name : plan::serving_stacks::names())
    t.add({std::string(name), "llm-serve", plan::serving_stacks::find(name)->source});
  return t;
}

inline table section_table(std::string_view section) {
  if (section == "systems") return systems_table();
  if (section == "devices") return devices_table();
  if (section == "workloads") return workloads_table();
  if (section == "models") return models_table();
  if (section == "stacks") return stacks_table();
  return reports::detail::fabric_section_table(section);
}

inline nlohmann::json section_json(std::string_view section) {
  using nlohmann::json;
  json out = json::array();
  if (section == "systems") {
    for (const auto name : plan::presets::names()) out.push_back(io::write_system(*plan::presets::find(name)));
  } else if (section == "devices") {
    for (const auto name : plan::presets::device_names())
      out.push_back(io::write_device(*plan::presets::find_device(name), "device", {}, false));
  } else if (section == "workloads") {
    for (const auto& [name, type] : preset_types()) out.push_back({{"name", name}, {"type", type}});
  } else if (section == "models") {
    for (const auto& m : model::named_shapes())
      out.push_back({{"name", m.name},
                     {"parameters", m.published_parameters},
                     {"layers", m.shape.layers},
                     {"hidden", m.shape.hidden},
                     {"heads", m.shape.heads},
                     {"kv_heads", m.shape.kv_heads},
                     {"experts", m.shape.experts},
                     {"top_k", m.shape.top_k},
                     {"source", m.source}});
  } else if (section == "stacks") {
    for (const auto name : plan::stacks::names())
      out.push_back({{"name", name}, {"for", "training"}, {"source", plan::stacks::find(name)->source}});
    for (const auto name : plan::serving_stacks::names())
      out.push_back({{"name", name}, {"for", "llm-serve"}, {"source", plan::serving_stacks::find(name)->source}});
  } else {
    out = reports::detail::fabric_section_json(section);
  }
  return out;
}

inline void require_section(std::string_view section, const std::vector<std::string_view>& names) {
  trinity::detail::require(
      section.empty() || std::find(names.begin(), names.end(), section) != names.end(), "section",
      "\"" + std::string(section) + "\" is none of the sections" + trinity::detail::suggestion(section, names));
}

}  // namespace detail

//! One section (empty: every one) as a table, or an invalid_input naming the sections there are.
inline void print_presets(std::ostream& out, std::string_view section) {
  const auto names = preset_section_names();
  detail::require_section(section, names);
  bool first = true;
  for (const auto name : names) {
    if (!section.empty() && name != section) continue;
    if (!first) out << '\n';
    first = false;
    detail::section_table(name).print(out);
  }
}

//! One section (empty: every one) as JSON, {"section": [...]}.
inline nlohmann::json presets_json(std::string_view section) {
  const auto names = preset_section_names();
  detail::require_section(section, names);
  nlohmann::json out = nlohmann::json::object();
  for (const auto name : names)
    if (section.empty() || name == section) out[std::string(name)] = detail::section_json(name);
  return out;
}

}  // namespace trinity::workloads
