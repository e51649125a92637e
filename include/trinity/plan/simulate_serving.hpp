#pragma once
//! \file
//! A serving plan on the simulated fabric, beside what the planner priced:
//!  - the KV loads of a replayed trace (plan::replay_serving's `loads`): each
//!    request's cached prefix leaves the fabric's memory nodes (striped over
//!    all of them) for its replica's t accelerators (the system's replicas
//!    take the requests in turn), a 1/t share to each, at
//!    the request's arrival, as flows sharing the links max-min; the planner's
//!    figure per request is the tier's latency + share / bandwidth, each
//!    device on a link of its own with nothing else on it, so a ratio above 1
//!    is devices sharing a link to the pool (two Blackwells behind one Grace
//!    on nvl72-cxl) and loads of requests that arrive together queueing;
//!  - the tensor-parallel all-reduces of a prefill (two per layer, of the
//!    uncached tokens' 16-bit activations) as rings over the fabric's
//!    scale-up links, against model::tensor_parallel_time.
//! The loads need the plan's cache in the tier the fabric's memory nodes
//! stand for (system::fabric_memory_tier); best_by_cache_tier finds the best
//! such plan when the chosen one keeps its cache elsewhere.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/collectives.hpp>
#include <trinity/fabric/simulator.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/serving_replay.hpp>
#include <trinity/plan/simulate.hpp>

namespace trinity::plan {

inline std::vector<simulated_pair> simulate(const system& s, const serving_workload& w, const serving_evaluated& e,
                                            const std::vector<model::compressor_cost>& codecs,
                                            const std::vector<prefix_load>& loads, const fabric_binding& f) {
  const auto& p = e.plan;
  const std::size_t t = p.tensor_parallel;
  trinity::detail::require(
      f.ranks.size() >= t, "fabric",
      "places " + std::to_string(f.ranks.size()) + " ranks; the replica spans " + std::to_string(t));
  // The system's replicas, t consecutive ranks each; requests go to them in turn, as a load balancer would.
  const std::size_t replicas = f.ranks.size() / t;
  const auto replica = [&](std::size_t k) {
    return std::vector<std::uint32_t>(f.ranks.begin() + static_cast<std::ptrdiff_t>(k * t),
                                      f.ranks.begin() + static_cast<std::ptrdiff_t>((k + 1) * t));
  };
  std::vector<simulated_pair> out;
  if (!loads.empty()) {
    trinity::detail::require(
        p.cache > bytes{} && p.cache_tier != 0 && f.memory && s.tiers[p.cache_tier].name == f.memory_tier, "plan",
        "keeps its prefix cache off the fabric's memory nodes (" + f.memory_tier +
            "): its loads do not cross the fabric");
    const auto& tier = s.tiers[p.cache_tier];
    fabric::simulator sim(f.topology);
    std::vector<std::vector<std::size_t>> flows(loads.size());
    // The pool interleaves its blocks over every memory node, as a pooled tier stripes its pages.
    const auto trays = f.topology.of_kind(fabric::node_kind::memory);
    const double pieces = static_cast<double>(t * trays.size());
    for (std::size_t i = 0; i < loads.size(); ++i)
      for (const auto m : trays)
        for (const auto r : replica(i % replicas))
          flows[i].push_back(sim.transfer(m, r, loads[i].size / pieces, loads[i].at));
    sim.run();
    seconds predicted_sum{}, simulated_sum{}, worst{}, worst_predicted{};
    double worst_ratio = -1;
    for (std::size_t i = 0; i < loads.size(); ++i) {
      seconds done{};
      for (const auto fl : flows[i]) done = std::max(done, sim.finish(fl) - loads[i].at);
      const seconds priced = tier.latency + loads[i].size / static_cast<double>(t) / tier.bandwidth;
      predicted_sum += priced;
      simulated_sum += done;
      if (done / priced > worst_ratio) worst_ratio = done / priced, worst = done, worst_predicted = priced;
    }
    const double n = static_cast<double>(loads.size());
    bytes total{};
    for (const auto& l : loads) total += l.size;
    out.push_back({"mean cached-prefix load of " + std::to_string(loads.size()) + " requests from " + tier.name + " (" +
                       to_string(total / n) + " each on average, over " + std::to_string(t) + " links; " +
                       std::to_string(replicas) + " replicas in turn)",
                   predicted_sum / n, simulated_sum / n, sim.events()});
    out.push_back({"the load furthest from its prediction", worst_predicted, worst, 0});
  }
  if (t > 1) {
    const auto r = replica_of(s, w, p, codecs.at(p.codec));
    const double fresh = w.prompt_tokens * (1.0 - e.cost.hit_rate);
    const bytes activations{fresh * static_cast<double>(w.shape.hidden) * 2.0};
    const auto ar = fabric::ring_all_reduce(f.topology, replica(0), activations);
    const double per_prefill = 2.0 * static_cast<double>(w.shape.layers);
    out.push_back({"a prefill's tensor-parallel all-reduces (" + std::to_string(2 * w.shape.layers) + " x " +
                       to_string(activations) + " over " + std::to_string(t) + " devices)",
                   model::tensor_parallel_time(r, fresh), per_prefill * ar.time,
                   static_cast<std::uint64_t>(per_prefill) * ar.events});
  }
  return out;
}

}  // namespace trinity::plan
