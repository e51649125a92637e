#pragma once
//! \file
//! Collectives on the simulated fabric: the ring all-reduce's 2(n − 1)
//! synchronous steps, each a flow from every rank to the next, so a ring laid
//! over a fabric shows the fabric's contention, not the textbook's α-β.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/simulator.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::fabric {

struct collective_result {
  seconds time{};
  std::uint64_t events = 0;
};

//! `steps` synchronous steps of `chunk` bytes from every member of every ring to the next, all rings at once,
//! on a fresh simulation: each step starts when the slowest chunk of the last has landed, so rings that share
//! a link slow each other. A reduce-scatter or an all-gather of n·chunk bytes is n − 1 steps, an all-reduce
//! 2(n − 1); a ring of one member sends nothing.
inline collective_result ring_steps(const topology& t, const std::vector<std::vector<std::uint32_t>>& rings,
                                    bytes chunk, std::size_t steps) {
  simulator sim(t);
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<std::size_t> flows;
    for (const auto& r : rings)
      for (std::size_t i = 0; r.size() > 1 && i < r.size(); ++i)
        flows.push_back(sim.transfer(r[i], r[(i + 1) % r.size()], chunk));
    if (flows.empty()) break;
    sim.run();
    double end = sim.now().value();
    for (const auto f : flows) end = std::max(end, sim.finish(f).value());
    sim.advance_to(seconds{end});
  }
  return {sim.now(), sim.events()};
}

//! ring_steps for steps that are alike, as a ring collective's are: each starts on an idle fabric (the last step's
//! flows have all landed) with the same flows on the same routes, so each takes the first step's time and
//! events. That one step is simulated and counted `steps` times: the time and events ring_steps gives (to
//! rounding), in the time and memory of one step, where a data-parallel ring of 4,096 ranks replayed step by step
//! is 8,190 steps of 4,096 flows (33 million flows kept).
inline collective_result repeated_ring_steps(const topology& t, const std::vector<std::vector<std::uint32_t>>& rings,
                                             bytes chunk, std::size_t steps) {
  if (steps == 0) return {};
  const auto one = ring_steps(t, rings, chunk, 1);
  return {one.time * static_cast<double>(steps), one.events * steps};
}

//! The same for one ring.
inline collective_result ring_steps(const topology& t, const std::vector<std::uint32_t>& ranks, bytes chunk,
                                    std::size_t steps) {
  trinity::detail::require(ranks.size() >= 1, "ranks", "at least one");
  return ring_steps(t, std::vector<std::vector<std::uint32_t>>{ranks}, chunk, steps);
}

//! A ring all-reduce of `size` bytes over `ranks` (in ring order), on a fresh simulation of the fabric.
inline collective_result ring_all_reduce(const topology& t, const std::vector<std::uint32_t>& ranks, bytes size) {
  trinity::detail::require(ranks.size() >= 1, "ranks", "at least one");
  const std::size_t n = ranks.size();
  return ring_steps(t, ranks, size / static_cast<double>(n), 2 * (n - 1));
}

//! A ring reduce-scatter (or all-gather: the same traffic) of `size` bytes over `ranks`.
inline collective_result ring_reduce_scatter(const topology& t, const std::vector<std::uint32_t>& ranks, bytes size) {
  trinity::detail::require(ranks.size() >= 1, "ranks", "at least one");
  const std::size_t n = ranks.size();
  return ring_steps(t, ranks, size / static_cast<double>(n), n - 1);
}

}  // namespace trinity::fabric
