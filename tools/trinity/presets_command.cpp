// trinity presets [SECTION] [--json]: every preset, or one section of them (workloads/preset_catalogue.hpp), with its
// figures and sources;
// --system NAME or --device NAME writes one as the JSON a system file or a device profile file holds, to edit.

#include "cli.hpp"

#include <trinity/io/write_system.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>
#include <trinity/workloads/preset_catalogue.hpp>

namespace trinity::cli {

namespace {

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

void run(const std::string& section, bool json) {
  try {
    if (json)
      std::cout << workloads::presets_json(section).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    else
      workloads::print_presets(std::cout, section);
  } catch (const invalid_input& e) {
    throw bad_flag("SECTION", section, e.problem());
  }
}

}  // namespace

void register_presets(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets",
                                 "List the presets with their sources: systems, devices, tiers, links, routes between "
                                 "tiers, parameters, workloads, models and stacks");
  auto json = std::make_shared<bool>(false);
  auto section = std::make_shared<std::string>();
  std::string sections;  // from the catalogue's own list: none missing, none stale
  for (const auto n : workloads::preset_section_names()) sections += (sections.empty() ? "" : "|") + std::string(n);
  cmd->add_option("section", *section, "Only this section (default: every one)")->type_name(sections);
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
  cmd->callback([json, system, device, section] {
    if (!system->empty() || !device->empty())
      write_one(*system, *device);
    else
      run(*section, *json);
  });
}

}  // namespace trinity::cli
