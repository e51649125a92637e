#pragma once
//! \file
//! Fast placement: objects in order of benefit density (what the best tier
//! saves over the worst, per byte), each into its cheapest tier that still has
//! room, then single moves to a cheaper tier while any helps. O(n log n + n·k).
//! The result carries a Lagrangian lower bound, so its gap to the optimum is
//! known, not hoped for: placement::gap().

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/place/detail/lagrangian.hpp>
#include <trinity/place/problem.hpp>

namespace trinity::place {

struct greedy_options {
  bool bound = true;    //!< compute the Lagrangian lower bound (costs a few hundred passes over the objects)
  int swap_rounds = 2;  //!< rounds of pairwise swaps after the moves; each is O(n²), so large n gets fewer
};

//! Local search: single moves to a cheaper tier with room, then swaps of two objects between two tiers,
//! while any strictly lowers the cost. Swaps run only for n ≤ 4096 (they are O(n²) a round).
inline void improve(const placement_problem& p, std::vector<std::uint32_t>& tier_of, std::vector<double>& room,
                    int swap_rounds) {
  const std::size_t n = p.objects(), k = p.tiers();
  const auto moves = [&] {
    bool any = false;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < k; ++j)
          if (j != tier_of[i] && p.size(i) <= room[j] && p.cost(i, j) < p.cost(i, tier_of[i])) {
            room[tier_of[i]] += p.size(i);
            room[j] -= p.size(i);
            tier_of[i] = static_cast<std::uint32_t>(j);
            moved = any = true;
          }
    }
    return any;
  };
  moves();
  if (n > 4096) return;
  for (int round = 0; round < swap_rounds; ++round) {
    bool swapped = false;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) {
        const auto ta = tier_of[a], tb = tier_of[b];
        if (ta == tb) continue;
        const double delta = p.cost(a, tb) + p.cost(b, ta) - p.cost(a, ta) - p.cost(b, tb);
        if (delta >= -1e-15 * (p.cost(a, ta) + p.cost(b, tb))) continue;
        // After the swap tier ta holds b instead of a, tier tb holds a instead of b.
        if (room[ta] + p.size(a) - p.size(b) < 0 || room[tb] + p.size(b) - p.size(a) < 0) continue;
        room[ta] += p.size(a) - p.size(b);
        room[tb] += p.size(b) - p.size(a);
        tier_of[a] = tb;
        tier_of[b] = ta;
        swapped = true;
      }
    if (!moves() && !swapped) break;
  }
}

inline placement greedy(const placement_problem& p, greedy_options opts = {}) {
  const std::size_t n = p.objects(), k = p.tiers();
  std::vector<double> density(n);
  for (std::size_t i = 0; i < n; ++i) {
    double lo = p.cost(i, 0), hi = p.cost(i, 0);
    for (std::size_t j = 1; j < k; ++j) lo = std::min(lo, p.cost(i, j)), hi = std::max(hi, p.cost(i, j));
    density[i] = (hi - lo) / p.size(i);
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return density[a] > density[b]; });
  // Tiers by cost for each object would be n·k log k; k is small, so scan.
  std::vector<double> room(k);
  for (std::size_t j = 0; j < k; ++j) room[j] = p.capacity(j);
  placement out;
  out.tier_of.assign(n, 0);
  for (const auto i : order) {
    std::size_t pick = k;
    for (std::size_t j = 0; j < k; ++j)
      if (p.size(i) <= room[j] && (pick == k || p.cost(i, j) < p.cost(i, pick))) pick = j;
    if (pick == k)
      throw invalid_input("objects[" + std::to_string(i) + "]",
                          "no tier has room left for " + p.object(i).name +
                              " once the denser objects are placed: the bytes fit in total but not packed this way. "
                              "Fix: use place::exact, or add capacity");
    out.tier_of[i] = static_cast<std::uint32_t>(pick);
    room[pick] -= p.size(i);
  }
  improve(p, out.tier_of, room, opts.swap_rounds);
  out.cost = p.evaluate(out.tier_of);
  if (opts.bound) out.lower_bound = std::min(out.cost, detail::optimise_prices(p, out.cost).bound);
  out.optimal = out.lower_bound >= out.cost * (1 - 1e-12);
  return out;
}

}  // namespace trinity::place
