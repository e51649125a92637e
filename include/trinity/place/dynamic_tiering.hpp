#pragma once
//! \file
//! Dynamic tiering: objects move between tiers as their temperature changes
//! (the report §6.2–6.3: migration toward the requester, L2024–2025, ranked by
//! access frequency, L2177, rate-limited, L2179–2180). Hotness is sampled (one access in
//! `sample_period` is counted, as PEBS-style sampling does) and decays by
//! `decay` every epoch. At the end of each epoch the policy promotes the
//! hottest objects (by hotness per byte) above each tier boundary and demotes
//! the coldest to make room, but only
//!   - while the epoch's migration budget (bytes) lasts, and
//!   - when the promoted object is hotter than what it displaces by the
//!     hysteresis factor,
//! so a pattern that alternates between objects of equal heat does not
//! migrate on every access (§6.13's thrashing test). Tiers are fastest first;
//! the last must hold everything.
//!
//!   place::dynamic_tiering policy(sizes, {fast_capacity, slow_capacity}, options);
//!   for (auto id : trace) { policy.access(id); cost += latency[policy.tier_of(id)]; }
//!   policy.moves();   // what the last epoch migrated, to apply to a tiered_store

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::place {

struct tiering_options {
  std::size_t epoch = 5'000;       //!< accesses between decisions
  std::size_t sample_period = 4;   //!< count one access in this many
  double decay = 0.5;              //!< hotness kept from one epoch to the next
  double hysteresis = 1.5;         //!< a promotion must be this much hotter (per byte) than what it displaces
  double migration_budget = 1e18;  //!< bytes moved per epoch, at most
};

struct tier_move {
  std::uint32_t object;
  std::uint32_t from, to;
};

class dynamic_tiering {
 public:
  //! sizes[i]: object i's bytes; capacities: each tier's bytes, fastest first. Objects start spilled in order.
  dynamic_tiering(std::vector<double> sizes, std::vector<double> capacities, tiering_options opts = {})
      : size_(std::move(sizes)), cap_(std::move(capacities)), opts_(opts) {
    trinity::detail::require(!cap_.empty(), "capacities", "at least one tier");
    trinity::detail::require(opts.epoch >= 1 && opts.sample_period >= 1, "epoch",
                             "epoch and sample_period are at least 1");
    trinity::detail::require(opts.decay >= 0 && opts.decay <= 1, "decay", "must lie in [0, 1]");
    trinity::detail::require(opts.hysteresis >= 1, "hysteresis", "must be at least 1 (1: no hysteresis)");
    trinity::detail::require(opts.migration_budget >= 0, "migration_budget", "must not be negative");
    const double total = std::accumulate(size_.begin(), size_.end(), 0.0);
    trinity::detail::require(cap_.back() >= total, "capacities",
                             "the last tier must hold every object (" + std::to_string(total) + " bytes)");
    used_.assign(cap_.size(), 0.0);
    tier_.assign(size_.size(), 0);
    hot_.assign(size_.size(), 0.0);
    for (std::size_t i = 0; i < size_.size(); ++i) {
      if (!(size_[i] > 0)) throw invalid_input("sizes[" + std::to_string(i) + "]", "must be positive");
      std::uint32_t t = 0;
      while (used_[t] + size_[i] > cap_[t]) ++t;
      tier_[i] = t;
      used_[t] += size_[i];
    }
  }

  //! Records an access to object i; at the end of an epoch, decides and applies migrations.
  void access(std::uint32_t i) {
    if (++clock_ % opts_.sample_period == 0) hot_[i] += 1.0;
    if (clock_ % opts_.epoch == 0) rebalance();
  }

  [[nodiscard]] std::uint32_t tier_of(std::uint32_t i) const { return tier_[i]; }
  [[nodiscard]] double used(std::size_t t) const { return used_.at(t); }
  [[nodiscard]] double capacity(std::size_t t) const { return cap_.at(t); }
  //! The migrations of the last epoch, in the order they were made.
  [[nodiscard]] const std::vector<tier_move>& moves() const noexcept { return moves_; }
  [[nodiscard]] double migrated_bytes() const noexcept { return migrated_; }
  [[nodiscard]] std::uint64_t migrations() const noexcept { return migrations_; }

 private:
  double density(std::uint32_t i) const { return hot_[i] / size_[i]; }

  void move(std::uint32_t i, std::uint32_t to) {
    used_[tier_[i]] -= size_[i];
    used_[to] += size_[i];
    moves_.push_back({i, tier_[i], to});
    tier_[i] = to;
    migrated_ += size_[i];
    budget_ -= size_[i];
    ++migrations_;
  }

  void rebalance() {
    moves_.clear();
    budget_ = opts_.migration_budget;
    const std::size_t n = size_.size();
    for (std::uint32_t t = 0; t + 1 < cap_.size(); ++t) {
      // Candidates below the boundary, hottest first; residents above it, coldest first.
      std::vector<std::uint32_t> below, above;
      for (std::uint32_t i = 0; i < n; ++i) {
        if (tier_[i] > t && hot_[i] > 0)
          below.push_back(i);
        else if (tier_[i] == t)
          above.push_back(i);
      }
      std::sort(below.begin(), below.end(), [&](auto a, auto b) { return density(a) > density(b); });
      std::sort(above.begin(), above.end(), [&](auto a, auto b) { return density(a) < density(b); });
      std::size_t v = 0;
      for (const auto c : below) {
        if (budget_ < size_[c]) break;
        // Make room by demoting the coldest residents, each at most 1/hysteresis as hot as c.
        std::vector<std::uint32_t> victims;
        double room = cap_[t] - used_[t], cost = 0;
        std::size_t w = v;
        while (room < size_[c] && w < above.size() && density(above[w]) * opts_.hysteresis < density(c)) {
          room += size_[above[w]];
          cost += size_[above[w]];
          victims.push_back(above[w++]);
        }
        if (room < size_[c]) break;  // c (and everything colder) stays where it is
        if (budget_ < size_[c] + cost) break;
        double spill = 0;
        for (const auto x : victims) spill += size_[x];
        const double freed_below = tier_[c] == t + 1 ? size_[c] : 0.0;
        if (used_[t + 1] - freed_below + spill > cap_[t + 1]) break;  // no room below for what it displaces
        for (const auto x : victims) move(x, t + 1);
        move(c, t);
        v = w;
      }
    }
    for (auto& h : hot_) h *= opts_.decay;
  }

  std::vector<double> size_, cap_, used_, hot_;
  std::vector<std::uint32_t> tier_;
  tiering_options opts_;
  std::vector<tier_move> moves_;
  std::uint64_t clock_ = 0, migrations_ = 0;
  double migrated_ = 0, budget_ = 0;
};

}  // namespace trinity::place
