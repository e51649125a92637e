// trinity presets [--json]: every tier, link, device and system preset with its figures and sources;
// --system NAME or --device NAME writes one as the JSON a system file or a device profile file holds, to edit.

#include "cli.hpp"

#include <trinity/io/write_system.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>
#include <trinity/units/format.hpp>

namespace trinity::cli {

namespace {

nlohmann::json to_json(const tier_descriptor& t) {
  return {{"name", t.name},
          {"level", to_string(t.level)},
          {"capacity_bytes", t.capacity.value()},
          {"bandwidth_bytes_per_second", t.bandwidth.value()},
          {"latency_seconds", t.latency.value()},
          {"energy_joules_per_byte", t.energy.value()},
          {"byte_addressable", t.byte_addressable},
          {"source", t.source}};
}

nlohmann::json to_json(const link_descriptor& l) {
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

std::string unit_of(documented_parameter::kind k) {
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

std::string show(const documented_parameter& p) {
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

// One preset as the file that holds it: a system file, or a device profile (a device without its count).
void write_one(const std::string& system, const std::string& device) {
  if (!system.empty()) {
    const auto s = plan::presets::find(system);
    if (!s)
      throw bad_flag("--system", system,
                     "is not a system preset" + trinity::detail::suggestion(system, plan::presets::names()));
    std::cout << io::write_system(*s).dump(2) << '\n';
    return;
  }
  const auto d = plan::presets::find_device(device);
  if (!d)
    throw bad_flag("--device", device,
                   "is not a device preset" + trinity::detail::suggestion(device, plan::presets::device_names()));
  std::cout << io::write_device(*d, "device", {}, false).dump(2) << '\n';
}

void run(bool json) {
  if (json) {
    nlohmann::json out{{"systems", plan::presets::names()}, {"devices", nlohmann::json::array()},
                       {"tiers", nlohmann::json::array()},  {"links", nlohmann::json::array()},
                       {"routes", nlohmann::json::array()}, {"parameters", nlohmann::json::array()}};
    for (const auto name : plan::presets::device_names())
      out["devices"].push_back(io::write_device(*plan::presets::find_device(name), "device", {}, false));
    for (const auto& t : preset_tiers) out["tiers"].push_back(to_json(t));
    for (const auto& l : preset_links) out["links"].push_back(to_json(l));
    for (const auto& r : preset_routes)
      out["routes"].push_back({{"from", r.from},
                               {"to", r.to},
                               {"hops", r.hops},
                               {"link", r.link.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.link)},
                               {"staging", r.staging.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.staging)},
                               {"seconds_per_gigabyte", r.gigabyte_time.value()}});
    for (const auto& p : preset_parameters)
      out["parameters"].push_back(
          {{"name", p.name}, {"value", p.value}, {"unit", unit_of(p.what)}, {"source", p.source}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  table systems({"system", "device", "count", "tiers", "interconnect"});
  for (const auto name : plan::presets::names()) {
    const auto sys = *plan::presets::find(name);
    std::string tier_names;
    for (const auto& t : sys.tiers) tier_names += (tier_names.empty() ? "" : ", ") + t.name;
    systems.add(
        {std::string(name), sys.device.name, std::to_string(sys.device.count), tier_names, sys.interconnect.name});
  }
  systems.print(std::cout);
  std::cout << '\n';
  table devices({"device", "bf16 dense", "power", "GEMM curve", "attention curve", "source"});
  for (const auto name : plan::presets::device_names()) {
    const auto d = *plan::presets::find_device(name);
    devices.add({d.name, to_string(d.compute), to_string(d.power),
                 d.gemm == model::gemm_efficiency{} ? "none (the peak)" : "measured",
                 d.attention.measured() ? "measured" : "none (as GEMMs)", d.source});
  }
  devices.print(std::cout);
  std::cout << '\n';
  table tiers({"tier", "level", "capacity", "bandwidth", "latency", "energy", "source"});
  for (const auto& t : preset_tiers)
    tiers.add({std::string(t.name), std::string(to_string(t.level)), to_string(t.capacity), to_string(t.bandwidth),
               to_string(t.latency), to_string(t.energy), std::string(t.source)});
  tiers.print(std::cout);
  std::cout << '\n';
  table links(
      {"link", "family", "bandwidth/dir", "collectives/dir", "latency", "flit", "max endpoints", "coherent", "source"});
  for (const auto& l : preset_links)
    links.add({std::string(l.name), std::string(to_string(l.family)), to_string(l.bandwidth),
               to_string(l.collective_rate()), to_string(l.latency), to_string_iec(l.flit),
               l.max_endpoints ? std::to_string(l.max_endpoints) : "-", l.coherent ? "yes" : "no",
               std::string(l.source)});
  links.print(std::cout);
  std::cout << '\n';
  table routes({"from", "to", "over", "1 GB takes"});
  for (const auto& r : preset_routes)
    routes.add({std::string(r.from), std::string(r.to),
                r.hops == 1 ? std::string(r.link) : "staged through " + std::string(r.staging),
                to_string(r.gigabyte_time)});
  routes.print(std::cout);
  std::cout << '\n';
  table params({"parameter (not in the documents)", "value", "source"});
  for (const auto& p : preset_parameters) params.add({std::string(p.name), show(p), std::string(p.source)});
  params.print(std::cout);
}

}  // namespace

void register_presets(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets",
                                 "List the system, device, tier and link presets, the routes between tiers, and the "
                                 "parameters, with sources");
  auto json = std::make_shared<bool>(false);
  auto system = std::make_shared<std::string>();
  auto device = std::make_shared<std::string>();
  cmd->add_flag("--json", *json, "Print JSON instead of tables");
  auto* one = cmd->add_option("--system", *system, "Write this system preset as a system file (JSON) to edit")
                  ->type_name("PRESET")
                  ->check(non_empty("a system preset's name"));
  cmd->add_option("--device", *device, "Write this device preset as a device profile file (JSON) to edit")
      ->type_name("PRESET")
      ->check(non_empty("a device preset's name"))
      ->excludes(one);
  cmd->callback([json, system, device] {
    if (!system->empty() || !device->empty())
      write_one(*system, *device);
    else
      run(*json);
  });
}

}  // namespace trinity::cli
