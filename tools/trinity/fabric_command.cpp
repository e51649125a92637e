// trinity fabric: a fabric from a preset or a JSON topology, and what the
// simulator measures on it from every compute device (host, accelerator) to
// every memory device: idle latency, loaded latency (every compute device
// streaming to the same device at once), and the bandwidth one 1 GB transfer
// gets alone.
//
//   trinity fabric --preset cxl-single-switch
//   trinity fabric --topology rack.json --json
//
// A topology file is read by io::read_topology (io/topology.hpp has the schema).

#include "cli.hpp"

#include <trinity/fabric.hpp>
#include <trinity/io/topology.hpp>
#include <trinity/presets.hpp>
#include <trinity/units/format.hpp>

#include <fstream>
#include <map>

namespace trinity::cli {
namespace {

fabric::topology from_json(const std::string& file) {
  if (const auto problem = trinity::detail::input_file_problem(file)) throw bad_flag("--topology", file, *problem);
  try {
    return io::read_topology(io::load(file));
  } catch (const invalid_input& e) {
    if (e.field() == file) throw usage_error(file + ": " + e.problem());
    throw usage_error(file + ": " + e.what());
  }
}

struct measurement {
  std::string from, to;
  double idle_ns, loaded_ns, bandwidth_gbps;
  std::size_t hops;
};

std::vector<measurement> measure(const fabric::topology& t) {
  std::vector<std::uint32_t> compute = t.of_kind(fabric::node_kind::host);
  for (auto a : t.of_kind(fabric::node_kind::accelerator)) compute.push_back(a);
  std::vector<measurement> out;
  for (const auto m : t.of_kind(fabric::node_kind::memory)) {
    for (const auto c : compute) {
      fabric::path p;
      try {
        p = t.route(c, m);
      } catch (const invalid_input&) {
        continue;  // not reachable from this device
      }
      measurement r{t.at(c).name, t.at(m).name, t.idle_latency(c, p).value() * 1e9, 0, 0, t.switch_hops(c, p)};
      {  // loaded: every other compute device streams 1 GB to the same memory device while c reads 64 B
        fabric::simulator sim(t);
        for (const auto o : compute)
          if (o != c) {
            try {
              sim.transfer(o, m, bytes{1e9});
            } catch (const invalid_input&) {
            }
          }
        const auto probe = sim.transfer(c, m, bytes{64});
        sim.run();
        r.loaded_ns = sim.finish(probe).value() * 1e9;
      }
      {  // bandwidth alone
        fabric::simulator sim(t);
        const auto f = sim.transfer(c, m, bytes{1e9});
        sim.run();
        r.bandwidth_gbps = 1.0 / sim.finish(f).value();
      }
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

void register_fabric(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "fabric",
      "a simulated fabric: its devices, and latency and bandwidth from each compute device to each memory device");
  auto preset = std::make_shared<std::string>();
  auto topology_file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  std::string names;
  for (auto n : fabric::presets::names()) names += (names.empty() ? "" : ", ") + std::string(n);
  cmd->add_option("--preset", *preset, "a built-in fabric: " + names);
  cmd->add_option("--topology", *topology_file, "a JSON topology file (see docs/placement.md)");
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([=] {
    if (preset->empty() == topology_file->empty())
      throw usage_error("fabric: give exactly one of --preset NAME or --topology FILE");
    const fabric::topology t = preset->empty() ? from_json(*topology_file) : fabric::presets::by_name(*preset);
    t.validate();
    const auto rows = measure(t);
    const std::string name = preset->empty() ? *topology_file : *preset;
    if (*json) {
      nlohmann::json j{{"fabric", name},
                       {"cxl_version", t.settings().cxl_version},
                       {"pbr", t.settings().pbr},
                       {"hosts", t.of_kind(fabric::node_kind::host).size()},
                       {"accelerators", t.of_kind(fabric::node_kind::accelerator).size()},
                       {"switches", t.of_kind(fabric::node_kind::switch_node).size()},
                       {"memory_devices", t.of_kind(fabric::node_kind::memory).size()},
                       {"links", t.edges()}};
      for (const auto& r : rows)
        j["paths"].push_back({{"from", r.from},
                              {"to", r.to},
                              {"switch_hops", r.hops},
                              {"idle_latency_ns", r.idle_ns},
                              {"loaded_latency_ns", r.loaded_ns},
                              {"bandwidth_GBps", r.bandwidth_gbps}});
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return;
    }
    std::cout << name << ": CXL " << t.settings().cxl_version << (t.settings().pbr ? " (PBR)" : " (HBR)") << ", "
              << t.of_kind(fabric::node_kind::host).size() << " hosts, "
              << t.of_kind(fabric::node_kind::accelerator).size() << " accelerators, "
              << t.of_kind(fabric::node_kind::switch_node).size() << " switches, "
              << t.of_kind(fabric::node_kind::memory).size() << " memory devices, " << t.edges() << " links\n\n";
    table tab({"from", "to", "switch hops", "idle latency", "loaded latency", "bandwidth"});
    std::size_t shown = 0;
    for (const auto& r : rows) {
      if (++shown > 24) break;
      char idle[32], loaded[32], bw[32];
      std::snprintf(idle, sizeof idle, "%.0f ns", r.idle_ns);
      std::snprintf(loaded, sizeof loaded, "%.0f ns", r.loaded_ns);
      std::snprintf(bw, sizeof bw, "%.1f GB/s", r.bandwidth_gbps);
      tab.add({r.from, r.to, std::to_string(r.hops), idle, loaded, bw});
    }
    if (rows.empty())
      std::cout << "(no memory device is reachable from a compute device here)\n";
    else
      tab.print(std::cout);
    if (rows.size() > 24) std::cout << "... and " << rows.size() - 24 << " more paths (--json lists them all)\n";
    std::cout << "\nLoaded: every other compute device streams 1 GB to the same memory device while this one reads "
                 "64 B; links are shared max-min fairly.\n";
  });
}

}  // namespace trinity::cli
