// The placement tutorial of docs/placement.md, as a program: a 140 GB model
// served on a GB200-class GPU (192 GB HBM3e), with its weights, activations
// and KV cache, placed across HBM, CXL-coherent and CXL-capacity memory. The
// CXL tiers' latencies are measured on the simulated NVL72 fabric, not
// assumed; then the spill rule, the greedy and the exact solver place it,
// and a day of shifting KV hotness shows dynamic tiering at work.

#include <trinity/fabric.hpp>
#include <trinity/place.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

#include <cstdio>
#include <random>
#include <vector>

using namespace trinity;
using namespace trinity::literals;

int main() {
  // 1. The fabric: what a GPU of an NVL72 rack pays to reach its CXL pool (through Grace, C2C + one CXL switch).
  const auto rack = fabric::presets::nvl72_cxl();
  const auto gpu = rack.find("gpu0"), tray = rack.find("tray0");
  const seconds cxl_latency = rack.idle_latency(gpu, tray);
  fabric::simulator sim(rack);
  const auto probe = sim.transfer(gpu, tray, 1_GB);
  sim.run();
  const bytes_per_second cxl_bandwidth = 1_GB / sim.finish(probe);
  std::printf("fabric nvl72-cxl: gpu0 -> tray0 idle latency %.0f ns, 1 GB at %.1f GB/s\n", cxl_latency.value() * 1e9,
              cxl_bandwidth.value() / 1e9);

  // 2. The tiers, fastest first: HBM from its preset; the CXL tiers with the fabric's figures on top of the
  //    GPU's own load path (a remote load first misses in the GPU's memory system, which costs what an HBM
  //    load does). The coherent tier is the pool's share mapped coherently, one switch hop closer than
  //    capacity memory.
  const seconds gpu_load = tiers::gb200_hbm3e::descriptor.latency;
  std::vector<place::tier_slot> tiers{
      place::tier_slot::from(tiers::gb200_hbm3e::descriptor, 160_GB),  // 32 GB kept for the runtime
      {"cxl-coherent", 64_GB, gpu_load + cxl_latency, gpu_load + cxl_latency, cxl_bandwidth},
      {"cxl-capacity", 1_TB, gpu_load + cxl_latency + fabric::parameters::cxl_switch_hop,
       gpu_load + cxl_latency + fabric::parameters::cxl_switch_hop, cxl_bandwidth}};
  for (const auto& t : tiers)
    std::printf("tier %-13s %4.0f GB  %4.0f ns  %7.1f GB/s\n", t.name.c_str(), t.capacity.value() / 1e9,
                t.read_latency.value() * 1e9, t.bandwidth.value() / 1e9);

  // 3. The objects: 10 weight shards (140 GB, read every token), 4 activation buffers (hot, half writes),
  //    and 12 KV-cache groups whose heat falls off with age (a Zipf-like tail).
  std::vector<place::object_profile> objects;
  for (int i = 0; i < 10; ++i) objects.push_back({"weights" + std::to_string(i), 14_GB, 4e6, 4_KiB, 0.0, 1.0});
  for (int i = 0; i < 4; ++i) objects.push_back({"activations" + std::to_string(i), 2_GB, 2e7, 64_B, 0.5, 1.0});
  for (int i = 0; i < 12; ++i) objects.push_back({"kv" + std::to_string(i), 6_GB, 8e6 / (i + 1), 4_KiB, 0.1, 1.0});
  const place::placement_problem problem(objects, tiers);

  const auto show = [&](const char* name, const place::placement& p) {
    double used[3] = {0, 0, 0};
    for (std::size_t i = 0; i < objects.size(); ++i) used[p.tier_of[i]] += objects[i].size.value();
    std::printf("%-7s cost %.4f s of access per s  (HBM %.0f GB, CXL-coherent %.0f GB, CXL-capacity %.0f GB)%s\n", name,
                p.cost, used[0] / 1e9, used[1] / 1e9, used[2] / 1e9, p.optimal ? "  [proven optimal]" : "");
  };
  const auto spilled = place::spill(problem);
  const auto greedy = place::greedy(problem);
  const auto exact = place::exact(problem);
  show("spill", spilled);
  show("greedy", greedy);
  show("exact", exact);
  std::printf("greedy's proven gap: at most %.3f%% above the optimum (bound %.4f)\n", greedy.gap() * 100,
              greedy.lower_bound);
  std::printf("exact placement:");
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (exact.tier_of[i] != 0) std::printf(" %s->%s", objects[i].name.c_str(), tiers[exact.tier_of[i]].name.c_str());
  std::printf(" (everything else in HBM)\n");

  // 4. Hotness shifts: the KV groups' popularity rotates every phase; dynamic tiering follows it within its
  //    migration budget, 40 GB per epoch (both directions counted).
  std::vector<double> sizes;
  for (const auto& o : objects) sizes.push_back(o.size.value());
  place::dynamic_tiering policy(
      sizes, {160e9, 64e9, 1e12},
      {.epoch = 2000, .sample_period = 1, .decay = 0.3, .hysteresis = 1.5, .migration_budget = 40e9});
  std::mt19937 gen(1);
  double fast_hits = 0, accesses = 0;
  for (int phase = 0; phase < 6; ++phase)
    for (int a = 0; a < 20000; ++a) {
      const std::uint32_t id =
          a % 3 == 0 ? static_cast<std::uint32_t>(gen() % 14)
                     : static_cast<std::uint32_t>(14 + (static_cast<std::uint32_t>(phase) * 4 + gen() % 3) % 12);
      fast_hits += policy.tier_of(id) == 0;
      accesses += 1;
      policy.access(id);
    }
  std::printf("dynamic tiering: %.1f%% of accesses served from HBM, %llu migrations, %.0f GB moved\n",
              100 * fast_hits / accesses, static_cast<unsigned long long>(policy.migrations()),
              policy.migrated_bytes() / 1e9);
  return exact.cost <= greedy.cost * (1 + 1e-12) && greedy.cost <= spilled.cost * (1 + 1e-12) ? 0 : 1;
}
