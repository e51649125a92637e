#pragma once
//! \file
//! Exact placement by branch and bound: objects largest first, each tried in
//! its tiers cheapest-priced first, with the greedy placement as the first
//! incumbent and two lower bounds at every node: the remaining objects each in
//! their cheapest tier, and the Lagrangian bound with the root's prices over
//! the capacity still free. Proves optimality for the few hundred objects a
//! model's tensors make; beyond `node_limit` it returns its best with
//! optimal = false and the root bound, so the gap is still known.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/place/detail/lagrangian.hpp>
#include <trinity/place/greedy.hpp>
#include <trinity/place/problem.hpp>

namespace trinity::place {

struct exact_options {
  std::uint64_t node_limit = 20'000'000;
};

namespace detail {

class branch_and_bound {
 public:
  branch_and_bound(const placement_problem& p, exact_options opts)
      : p_(p), opts_(opts), n_(p.objects()), k_(p.tiers()) {}

  placement solve() {
    placement start;
    bool have_start = true;
    try {
      start = greedy(p_, {.bound = false});
    } catch (const invalid_input&) {
      have_start = false;  // the greedy could not pack it; the search may still
    }
    best_cost_ = have_start ? start.cost : std::numeric_limits<double>::infinity();
    best_ = have_start ? start.tier_of : std::vector<std::uint32_t>(n_, 0);
    const prices root = optimise_prices(p_, have_start ? start.cost : root_guess());
    lambda_ = root.lambda;
    lagrangian_incumbent();

    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0u);
    std::stable_sort(order_.begin(), order_.end(), [&](auto a, auto b) { return p_.size(a) > p_.size(b); });
    plain_suffix_.assign(n_ + 1, 0.0);
    priced_suffix_.assign(n_ + 1, 0.0);
    choices_.resize(n_);
    // Reduced-cost fixing: with prices λ every assignment costs at least L(λ) + (its objects' priced costs
    // above their cheapest), so a tier whose priced cost for an object exceeds the cheapest by more than
    // incumbent − L(λ) can hold it in no better assignment, and is dropped from its choices.
    const double slack = best_cost_ - root.bound;
    for (std::size_t t = n_; t-- > 0;) {
      const auto i = order_[t];
      double plain = std::numeric_limits<double>::infinity(), priced = plain;
      auto& c = choices_[t];
      double cheapest = std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < k_; ++j)
        if (p_.size(i) <= p_.capacity(j)) cheapest = std::min(cheapest, p_.cost(i, j) + lambda_[j] * p_.size(i));
      for (std::size_t j = 0; j < k_; ++j) {
        if (p_.size(i) > p_.capacity(j)) continue;
        if (p_.cost(i, j) + lambda_[j] * p_.size(i) - cheapest > slack * (1 + 1e-9) + 1e-300) continue;
        plain = std::min(plain, p_.cost(i, j));
        priced = std::min(priced, p_.cost(i, j) + lambda_[j] * p_.size(i));
        c.push_back(static_cast<std::uint32_t>(j));
      }
      std::sort(c.begin(), c.end(), [&](auto a, auto b) {
        return p_.cost(i, a) + lambda_[a] * p_.size(i) < p_.cost(i, b) + lambda_[b] * p_.size(i);
      });
      plain_suffix_[t] = plain_suffix_[t + 1] + plain;
      priced_suffix_[t] = priced_suffix_[t + 1] + priced;
    }
    room_.resize(k_);
    for (std::size_t j = 0; j < k_; ++j) room_[j] = p_.capacity(j);
    current_.assign(n_, 0);
    search(0, 0.0, lambda_);

    if (best_cost_ == std::numeric_limits<double>::infinity())
      throw invalid_input("objects", "no assignment fits every object in the tiers' capacities; add capacity");
    placement out;
    out.tier_of = best_;
    out.cost = p_.evaluate(best_);
    out.nodes = nodes_;
    out.optimal = !exhausted_;
    out.lower_bound = out.optimal ? out.cost : std::min(out.cost, root.bound);
    return out;
  }

 private:
  // A second incumbent from the prices: objects by regret (what missing their priced-cheapest tier would
  // cost), each into the cheapest priced tier with room, then the greedy's local search. On tight
  // instances it starts far closer to the optimum than the density greedy does.
  void lagrangian_incumbent() {
    std::vector<double> regret(n_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      double first = std::numeric_limits<double>::infinity(), second = first;
      for (std::size_t j = 0; j < k_; ++j) {
        const double v = p_.cost(i, j) + lambda_[j] * p_.size(i);
        if (v < first)
          second = first, first = v;
        else if (v < second)
          second = v;
      }
      regret[i] = second == std::numeric_limits<double>::infinity() ? 0.0 : second - first;
    }
    std::vector<std::uint32_t> order(n_);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return regret[a] > regret[b]; });
    std::vector<double> room(k_);
    for (std::size_t j = 0; j < k_; ++j) room[j] = p_.capacity(j);
    std::vector<std::uint32_t> tier_of(n_, 0);
    for (const auto i : order) {
      std::size_t pick = k_;
      for (std::size_t j = 0; j < k_; ++j)
        if (p_.size(i) <= room[j] &&
            (pick == k_ || p_.cost(i, j) + lambda_[j] * p_.size(i) < p_.cost(i, pick) + lambda_[pick] * p_.size(i)))
          pick = j;
      if (pick == k_) return;  // it did not pack; keep the greedy's
      tier_of[i] = static_cast<std::uint32_t>(pick);
      room[pick] -= p_.size(i);
    }
    improve(p_, tier_of, room, 4);
    double cost = 0;
    for (std::size_t i = 0; i < n_; ++i) cost += p_.cost(i, tier_of[i]);
    if (cost < best_cost_) best_cost_ = cost, best_ = tier_of;
  }

  double root_guess() const {
    double worst = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      double m = 0;
      for (std::size_t j = 0; j < k_; ++j) m = std::max(m, p_.cost(i, j));
      worst += m;
    }
    return worst;
  }

  // The Lagrangian bound of the objects from t on in the capacity still free, at prices lambda.
  double priced_bound(std::size_t t, const std::vector<double>& lambda, std::vector<double>& load) const {
    double total = 0;
    std::fill(load.begin(), load.end(), 0.0);
    for (std::size_t s = t; s < n_; ++s) {
      const auto i = order_[s];
      double best = std::numeric_limits<double>::infinity();
      std::uint32_t arg = 0;
      for (const auto j : choices_[s]) {
        const double v = p_.cost(i, j) + lambda[j] * p_.size(i);
        if (v < best) best = v, arg = j;
      }
      total += best;
      load[arg] += p_.size(i);
    }
    for (std::size_t j = 0; j < k_; ++j) total -= lambda[j] * room_[j];
    return total;
  }

  // The node's bound: the plain one, the root prices' one, and a few subgradient steps from the parent's
  // prices over what is left, which tighten as the free capacity shrinks. Updates lambda for the children.
  double bound(std::size_t t, double cost, std::vector<double>& lambda) const {
    double priced = priced_suffix_[t];
    for (std::size_t j = 0; j < k_; ++j) priced -= lambda_[j] * room_[j];
    double best = std::max(plain_suffix_[t], priced);
    if (cost + best >= best_cost_ * (1 - 1e-12) || best_cost_ == std::numeric_limits<double>::infinity())
      return cost + best;
    std::vector<double> load(k_), g(k_);
    for (int step = 0; step < 6; ++step) {
      const double value = priced_bound(t, lambda, load);
      best = std::max(best, value);
      if (cost + best >= best_cost_ * (1 - 1e-12)) break;
      double norm = 0;
      for (std::size_t j = 0; j < k_; ++j) {
        g[j] = load[j] - room_[j];
        if (lambda[j] <= 0 && g[j] < 0) g[j] = 0;
        norm += g[j] * g[j];
      }
      if (norm == 0) break;
      const double target = best_cost_ - cost;
      const double move = (target - value) / norm;
      for (std::size_t j = 0; j < k_; ++j) lambda[j] = std::max(0.0, lambda[j] + move * g[j]);
    }
    return cost + best;
  }

  void search(std::size_t t, double cost, std::vector<double> lambda) {
    if (exhausted_) return;
    if (++nodes_ > opts_.node_limit) {
      exhausted_ = true;
      return;
    }
    if (t == n_) {
      if (cost < best_cost_) {
        best_cost_ = cost;
        for (std::size_t s = 0; s < n_; ++s) best_[order_[s]] = current_[s];
      }
      return;
    }
    if (bound(t, cost, lambda) >= best_cost_ * (1 - 1e-12)) return;
    const auto i = order_[t];
    for (const auto j : choices_[t]) {
      if (p_.size(i) > room_[j]) continue;
      room_[j] -= p_.size(i);
      current_[t] = j;
      search(t + 1, cost + p_.cost(i, j), lambda);
      room_[j] += p_.size(i);
    }
  }

  const placement_problem& p_;
  exact_options opts_;
  std::size_t n_, k_;
  std::vector<double> lambda_, plain_suffix_, priced_suffix_, room_;
  std::vector<std::uint32_t> order_, current_, best_;
  std::vector<std::vector<std::uint32_t>> choices_;
  double best_cost_ = 0;
  std::uint64_t nodes_ = 0;
  bool exhausted_ = false;
};

}  // namespace detail

inline placement exact(const placement_problem& p, exact_options opts = {}) {
  return detail::branch_and_bound(p, opts).solve();
}

}  // namespace trinity::place
