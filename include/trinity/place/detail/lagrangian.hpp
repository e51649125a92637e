#pragma once
//! \file
//! The Lagrangian lower bound of the generalized assignment problem: relax the
//! capacities with prices λ_j ≥ 0 and every object picks its cheapest priced
//! tier:  L(λ) = Σ_i min_j (c_ij + λ_j·s_i) − Σ_j λ_j·C_j  ≤  optimum, for any λ.
//! Subgradient ascent (Polyak steps against an upper bound) finds good prices.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <trinity/place/problem.hpp>

namespace trinity::place::detail {

struct prices {
  std::vector<double> lambda;
  double bound = 0;
};

inline double lagrangian(const placement_problem& p, const std::vector<double>& lambda, std::vector<double>* load) {
  double total = 0;
  if (load) load->assign(p.tiers(), 0.0);
  for (std::size_t i = 0; i < p.objects(); ++i) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t arg = 0;
    for (std::size_t j = 0; j < p.tiers(); ++j) {
      if (p.size(i) > p.capacity(j)) continue;  // it could never go there
      const double v = p.cost(i, j) + lambda[j] * p.size(i);
      if (v < best) best = v, arg = j;
    }
    total += best;
    if (load) (*load)[arg] += p.size(i);
  }
  for (std::size_t j = 0; j < p.tiers(); ++j) total -= lambda[j] * p.capacity(j);
  return total;
}

//! Prices that make L(λ) large, given an upper bound (any feasible cost) to aim the steps at.
inline prices optimise_prices(const placement_problem& p, double upper_bound, int iterations = 300) {
  prices best{std::vector<double>(p.tiers(), 0.0), 0.0};
  std::vector<double> lambda(p.tiers(), 0.0), load;
  best.bound = lagrangian(p, lambda, nullptr);
  double theta = 2.0;
  int stale = 0;
  for (int k = 0; k < iterations; ++k) {
    const double value = lagrangian(p, lambda, &load);
    if (value > best.bound) {
      best = {lambda, value};
      stale = 0;
    } else if (++stale >= 15) {
      theta /= 2;
      stale = 0;
    }
    double norm = 0;
    std::vector<double> g(p.tiers());
    for (std::size_t j = 0; j < p.tiers(); ++j) {
      g[j] = load[j] - p.capacity(j);
      if (lambda[j] <= 0 && g[j] < 0) g[j] = 0;  // the price cannot go below zero
      norm += g[j] * g[j];
    }
    if (norm == 0 || theta < 1e-6 || upper_bound - value <= 1e-12 * std::abs(upper_bound)) break;
    const double step = theta * (upper_bound - value) / norm;
    for (std::size_t j = 0; j < p.tiers(); ++j) lambda[j] = std::max(0.0, lambda[j] + step * g[j]);
  }
  return best;
}

}  // namespace trinity::place::detail
