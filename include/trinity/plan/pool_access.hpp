#pragma once
//! \file
//! A capacity pool as the CXL report's workloads reach it: where an index's lists or a recommender's tables live,
//! the same pool reached over RDMA instead of its own link (the report's baseline), the plan `trinity simulate`
//! and `verify` lay out (the choice where it reads a pool, else the best that does), and its reads on the
//! simulated fabric beside an RDMA memory server's.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/presets.hpp>
#include <trinity/fabric/simulator.hpp>
#include <trinity/links/parameters.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/model/vector_index.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

//! Where an index's lists (or a recommender's tables) live: in every device's memory, sharded over the scale-up
//! domain's memory, or in a capacity tier (a pool).
enum class list_home { replicated, sharded, pooled };

inline const char* home_name(list_home h) {
  return h == list_home::replicated ? "replicated" : h == list_home::sharded ? "sharded" : "pooled";
}

//! The pool reached over RDMA instead of its own link, as the report's baseline reaches it: each access at RDMA's
//! latency (links::parameters::rdma_latency, 2 µs: the report's "RDMA (>1µs)"), which is 8.3 times the CXL pool
//! tier's 240 ns, the gap DirectCXL measured between RDMA-disaggregated and CXL memory (Gouk et al., USENIX ATC
//! 2022: up to 8.3x shorter access time over CXL); bytes at the lesser of the pool's bandwidth and one 400G RDMA
//! NIC's (links::rdma).
inline model::tier_access rdma_pool_access(const priced_tier& pool) {
  trinity::detail::require(pool.level == tier_level::capacity_pool, "tier",
                           pool.name + " is not a capacity pool; the report's RDMA baseline stands in for one");
  return {links::parameters::rdma_latency, std::min(pool.bandwidth, links::rdma::descriptor.bandwidth)};
}

//! The candidate `trinity simulate` lays on the fabric: the choice where it reads a capacity pool, else the best
//! feasible plan that does (none where none fits).
template <class Result>
std::optional<std::size_t> pooled_candidate(const system& s, const Result& r, objective o) {
  const auto in_pool = [&](const auto& e) {
    return e.plan.home == list_home::pooled && s.tiers[e.plan.pool].level == tier_level::capacity_pool;
  };
  if (in_pool(r.chosen())) return r.choice;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].fits() && in_pool(r.candidates[i]) &&
        (!best || detail::score(r.candidates[i].cost, o) < detail::score(r.candidates[*best].cost, o)))
      best = i;
  return best;
}

namespace detail {

//! What every plan that puts its data on the tiers must keep, checked in order: each tier's bytes a device within
//! its capacity, the devices its rate keeps busy within the system's (`rate` says the rate: "query rate: 20
//! queries/s"), and what it reads from the pool within the links'. Empty when it keeps all three.
inline std::string tiers_fit(const system& s, const std::vector<bytes>& tier_bytes, double devices_busy,
                             const std::string& rate, bytes_per_second pool_rate, bytes_per_second pool_limit) {
  for (std::size_t t = 0; t < s.tiers.size(); ++t)
    if (tier_bytes[t] > s.tiers[t].capacity)
      return s.tiers[t].name + " capacity: needs " + to_string(tier_bytes[t]) + " a device of " +
             to_string(s.tiers[t].capacity);
  if (devices_busy > static_cast<double>(s.device.count))
    return rate + " keep " + units::detail::format_number(devices_busy) + " devices busy, of " +
           std::to_string(s.device.count);
  if (pool_rate > pool_limit)
    return "pool bandwidth: " + to_string(pool_rate) + " read, more than the links' " + to_string(pool_limit);
  return {};
}

}  // namespace detail

//! `reads` reads of `each` bytes from `pool` on the fabric: from the system's memory node where its fabric has one
//! standing for the pool, then from an RDMA memory server (rdma-cluster), each beside its model (latency plus
//! bytes over bandwidth, a read at a time). `what` names the reads; `note` follows both rows.
inline std::vector<simulated_pair> simulate_pool_reads(const system& s, const priced_tier& pool, bytes each,
                                                       double reads, const std::string& what,
                                                       const std::string& note = {}) {
  const auto one = [&](const fabric::topology& t, std::uint32_t from, std::uint32_t to) {
    fabric::simulator sim(t);
    const auto flow = sim.transfer(from, to, each);
    sim.run();
    return std::pair{sim.finish(flow), sim.events()};
  };
  std::vector<simulated_pair> out;
  if (auto f = fabric_for(s, 2); f && f->memory && f->memory_tier == pool.name) {
    const auto [time, events] = one(f->topology, *f->memory, f->ranks.front());
    out.push_back(
        {what + " from " + pool.name + note, reads * (pool.latency + each / pool.bandwidth), reads * time, events});
  }
  const auto rdma = fabric::presets::rdma_cluster(2, 1);
  const auto access = rdma_pool_access(pool);
  const auto [time, events] =
      one(rdma, rdma.of_kind(fabric::node_kind::memory).front(), rdma.of_kind(fabric::node_kind::host).front());
  out.push_back({"the same from an RDMA memory server", reads * (access.latency + each / access.bandwidth),
                 reads * time, events});
  return out;
}

}  // namespace trinity::plan
