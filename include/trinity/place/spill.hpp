#pragma once
//! \file
//! The report's spill rule (the report §6.3, L2117–2118, L2164–2167):
//! fill tier-1 first, in order of hotness (accesses per second per byte,
//! latency-critical objects first), and use each later tier only once the
//! tiers before it are full. Tiers are taken in the order given, fastest
//! first. Cheap, predictable, and what the optimal placement reduces to when
//! every object prefers faster tiers in the same order.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/place/problem.hpp>

namespace trinity::place {

inline placement spill(const placement_problem& p) {
  const std::size_t n = p.objects(), k = p.tiers();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const auto heat = [&](std::uint32_t i) {
    const auto& o = p.object(i);
    return o.accesses_per_second * std::max(o.latency_weight, 1e-9) / p.size(i);
  };
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return heat(a) > heat(b); });
  std::vector<double> room(k);
  for (std::size_t j = 0; j < k; ++j) room[j] = p.capacity(j);
  placement out;
  out.tier_of.assign(n, 0);
  for (const auto i : order) {
    std::size_t j = 0;
    while (j < k && p.size(i) > room[j]) ++j;  // the first tier, in order, with room
    if (j == k)
      throw invalid_input("objects[" + std::to_string(i) + "]",
                          "no tier has room left for " + p.object(i).name + "; add capacity");
    out.tier_of[i] = static_cast<std::uint32_t>(j);
    room[j] -= p.size(i);
  }
  out.cost = p.evaluate(out.tier_of);
  return out;
}

}  // namespace trinity::place
