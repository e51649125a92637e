#pragma once
//! \file
//! A plan run on the simulated fabric (fabric/), beside what the planner
//! predicted from its formulas. Training: the plan's data-parallel
//! collectives (the gradient all-reduce, or reduce-scatter plus the parameter
//! all-gathers of ZeRO) laid as rings over the fabric and run as flows with
//! max-min link sharing, flits and per-hop latencies; the planner's figure is
//! the α-β ring formula. Diffusion: one cached latent read across the fabric
//! from a memory tray, against the tier's latency + size / bandwidth.
//!
//! Edge: one second of the stream's frames sent over the uplink at the frame
//! rate, each against latency + size / bandwidth (a frame that waits behind the
//! last one shows as a ratio above 1).
//!
//! Training and diffusion need a fabric the system runs on, which it names
//! (`fabric`, and `fabric_memory_tier` for the tier its memory nodes stand
//! for): gb200-nvl72-cxl runs on the nvl72-cxl fabric, h100-ib-cluster on
//! rdma-cluster with one host per GPU NIC, a JSON system on any fabric preset.
//! An edge system needs none: its device, uplink and server are the fabric.
//!
//! Or bring your own topology: plan::bind(topology, ranks) places the ranks on
//! its accelerators (else hosts), and each simulate overload takes the binding:
//!
//!   auto f = plan::bind(io::read_topology(io::load("rack.json")), w.ranks(s), "rack-pool");
//!   auto pairs = plan::simulate(s, w, r, f);

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/collectives.hpp>
#include <trinity/fabric/presets.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/planner.hpp>

namespace trinity::plan {

//! The fabric a preset system runs on, and the nodes its ranks sit at.
struct fabric_binding {
  std::string name;
  fabric::topology topology;
  std::vector<std::uint32_t> ranks;     //!< one per data-parallel rank, in ring order
  std::optional<std::uint32_t> memory;  //!< a memory node tier-2 caches live on
  std::string memory_tier;              //!< the system tier that node is (empty: none of the system's tiers)
};

//! A topology with `ranks` ranks placed on its accelerators (or its hosts, where it has too few accelerators),
//! its first memory node standing for the system tier named `memory_tier` (empty: none).
inline fabric_binding bind(fabric::topology t, std::size_t ranks, std::string memory_tier = {},
                           std::string name = "custom") {
  t.validate();
  auto at = t.of_kind(fabric::node_kind::accelerator);
  if (at.size() < ranks) at = t.of_kind(fabric::node_kind::host);
  trinity::detail::require(at.size() >= ranks, "fabric",
                           "the " + name + " fabric has " + std::to_string(at.size()) + " places for " +
                               std::to_string(ranks) + " ranks; choose a fabric that scales with them");
  at.resize(ranks);
  const auto mem = t.of_kind(fabric::node_kind::memory);
  return fabric_binding{std::move(name), std::move(t), std::move(at),
                        mem.empty() ? std::nullopt : std::optional(mem.front()), std::move(memory_tier)};
}

//! The system's fabric preset built for this many ranks: ranks on its accelerators (or hosts, where it has
//! none), its first memory node standing for the tier the system names. None when the system names no fabric.
inline std::optional<fabric_binding> fabric_for(const system& s, std::size_t ranks) {
  if (!s.fabric.empty()) {
    const auto& known = fabric::presets::names();
    if (std::find(known.begin(), known.end(), s.fabric) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw invalid_input("fabric", "\"" + s.fabric + "\" is not a fabric preset; choose one of " + list);
    }
    const int n = static_cast<int>(std::max<std::size_t>(ranks, 2));
    fabric::topology t = s.fabric == "nvl72-cxl"           ? fabric::presets::nvl72_cxl(n)
                         : s.fabric == "rdma-cluster"      ? fabric::presets::rdma_cluster(n, 1)
                         : s.fabric == "ualink-pod"        ? fabric::presets::ualink_pod(n)
                         : s.fabric == "cxl-single-switch" ? fabric::presets::cxl_single_switch(n)
                         : s.fabric == "cxl-two-level"     ? fabric::presets::cxl_two_level(n)
                                                           : fabric::presets::by_name(s.fabric);
    return bind(std::move(t), ranks, s.fabric_memory_tier, s.fabric);
  }
  return std::nullopt;
}

struct simulated_pair {
  std::string what;
  seconds predicted{}, simulated{};
  std::uint64_t events = 0;
  [[nodiscard]] double ratio() const noexcept { return simulated.value() / predicted.value(); }
};

namespace detail {
inline fabric_binding require_fabric(const system& s, std::size_t ranks) {
  auto f = fabric_for(s, ranks);
  trinity::detail::require(f.has_value(), "system",
                           s.name +
                               " names no simulated fabric. Fix: add \"fabric\": one of the fabric presets "
                               "(trinity fabric --help lists them), and \"fabric_memory_tier\" if its memory "
                               "nodes stand for one of your tiers");
  return std::move(*f);
}
}  // namespace detail

//! The chosen training plan's collectives on a fabric, simulated and predicted.
inline std::vector<simulated_pair> simulate(const system& s, const training_workload& w, const plan_result& r,
                                            const fabric_binding& f) {
  const auto& p = r.chosen().plan;
  const std::size_t n = w.ranks(s);
  trinity::detail::require(f.ranks.size() == n, "fabric",
                           "places " + std::to_string(f.ranks.size()) + " ranks; the plan runs " + std::to_string(n));
  const model::collective_link link{s.interconnect.latency, s.interconnect.collective_rate(), {}};
  const bytes grads{w.parameters * detail::wire_bytes(r.codecs[p.codec], w.precision)};
  const bytes params{w.parameters * w.precision.parameter};
  std::vector<simulated_pair> out;
  if (r.codecs[p.codec].gathered) {
    // Every rank's frame to every other: an all-gather of n frames, which moves what a reduce-scatter does.
    const bytes all = static_cast<double>(n) * grads;
    const auto sim = fabric::ring_reduce_scatter(f.topology, f.ranks, all);
    out.push_back({"gradient frames all-gathered (" + std::to_string(n) + " x " + to_string(grads) + ")",
                   model::ring_all_gather_time(n, all, link), sim.time, sim.events});
  } else if (p.stage == 0) {
    const auto sim = fabric::ring_all_reduce(f.topology, f.ranks, grads);
    out.push_back({"gradient all-reduce (" + to_string(grads) + ")", model::ring_all_reduce_time(n, grads, link),
                   sim.time, sim.events});
  } else {
    const auto rs = fabric::ring_reduce_scatter(f.topology, f.ranks, grads);
    out.push_back({"gradient reduce-scatter (" + to_string(grads) + ")",
                   model::ring_reduce_scatter_time(n, grads, link), rs.time, rs.events});
  }
  if (p.stage > 0) {
    const auto ag = fabric::ring_reduce_scatter(f.topology, f.ranks, params);  // an all-gather moves the same bytes
    const int gathers = p.stage == 3 ? 2 : 1;
    out.push_back(
        {std::to_string(gathers) + " parameter all-gather" + (gathers > 1 ? "s" : "") + " (" + to_string(params) + ")",
         static_cast<double>(gathers) * model::ring_all_gather_time(n, params, link),
         static_cast<double>(gathers) * ag.time, static_cast<std::uint64_t>(gathers) * ag.events});
  }
  return out;
}

//! The same on the fabric the system names.
inline std::vector<simulated_pair> simulate(const system& s, const training_workload& w, const plan_result& r) {
  return simulate(s, w, r, detail::require_fabric(s, w.ranks(s)));
}

//! The chosen cache plan's read of one latent, across the fabric from a memory tray, and as predicted.
//! Empty when there is no cache, or when it lives in a tier the fabric does not carry (device or host memory).
inline std::vector<simulated_pair> simulate(const system& s, const diffusion_workload& w, const cache_plan_result& r,
                                            const fabric_binding& f) {
  const auto& p = r.chosen().plan;
  std::vector<simulated_pair> out;
  if (p.capacity <= bytes{}) return out;
  const auto& t = s.tiers[p.tier];
  if (!f.memory || t.name != f.memory_tier) return out;
  const bytes latent = w.latent_size / storage_ratio(w, r.codecs.at(p.codec));  // as stored
  fabric::simulator sim(f.topology);
  const auto flow = sim.transfer(*f.memory, f.ranks.front(), latent);
  sim.run();
  out.push_back({"one cached latent read from " + t.name + " (" + to_string(latent) + ")",
                 t.latency + latent / t.bandwidth, sim.finish(flow), sim.events()});
  return out;
}

//! The same on the fabric the system names.
inline std::vector<simulated_pair> simulate(const system& s, const diffusion_workload& w, const cache_plan_result& r) {
  if (r.chosen().plan.capacity <= bytes{}) return {};
  return simulate(s, w, r, detail::require_fabric(s, 2));
}

//! The chosen edge plan's uplink: a second of frames (at least one) sent at the frame rate from the device to
//! the server, the slowest frame's time against the planner's latency + size / bandwidth.
inline std::vector<simulated_pair> simulate(const system& s, const edge_workload& w, const edge_plan_result& r) {
  const auto& c = r.chosen().cost;
  fabric::topology t;
  const auto device = t.add_host(s.device.name), server = t.add_host(s.server->name);
  t.connect(device, server,
            link_descriptor{s.interconnect.name, link_family::ethernet, s.interconnect.bandwidth,
                            s.interconnect.latency, bytes{1}, 2, false, s.interconnect.energy, s.interconnect.source});
  fabric::simulator sim(t);
  const auto frames = static_cast<std::size_t>(std::max(1.0, std::floor(w.frames_per_second)));
  std::vector<std::size_t> flows;
  for (std::size_t i = 0; i < frames; ++i)
    flows.push_back(sim.transfer(device, server, c.sent, static_cast<double>(i) * w.frame_interval()));
  sim.run();
  seconds worst{};
  for (std::size_t i = 0; i < frames; ++i)
    worst = std::max(worst, sim.finish(flows[i]) - static_cast<double>(i) * w.frame_interval());
  return {{"slowest of " + std::to_string(frames) + " frames over " + s.interconnect.name + " (" + to_string(c.sent) +
               " each)",
           c.uplink_time, worst, sim.events()}};
}

}  // namespace trinity::plan
