#pragma once
//! \file
//! A static placement problem: objects (size, how often and how they are
//! accessed, how much latency hurts them) and tiers (capacity, latency,
//! bandwidth). Placing object i in tier j costs, in seconds of access time
//! per second of running,
//!   c_ij = f_i · ( s_i · ((1 − w_i)·R_j + w_i·W_j) + b_i / B_j )
//! with f_i accesses per second, b_i bytes per access, w_i the write fraction,
//! s_i the latency weight (1: latency counts fully; 0: only bandwidth does),
//! R_j, W_j the tier's read and write latency and B_j its bandwidth. A solver
//! minimises Σ c_ij over assignments that respect every tier's capacity: the
//! generalized assignment problem. place/exact.hpp solves it exactly,
//! place/greedy.hpp fast with a bound on its gap.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/tiers/tier_descriptor.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::place {

struct object_profile {
  std::string name;
  bytes size{};
  double accesses_per_second = 0;  //!< f
  bytes bytes_per_access{64};      //!< b: a cache line unless said otherwise
  double write_fraction = 0;       //!< w in [0, 1]
  double latency_weight = 1;       //!< s ≥ 0
};

struct tier_slot {
  std::string name;
  bytes capacity{};
  seconds read_latency{};
  seconds write_latency{};
  bytes_per_second bandwidth{};

  //! A tier from its descriptor: one latency for reads and writes, and the capacity given (a pool's
  //! share, say) or the descriptor's.
  static tier_slot from(const tier_descriptor& d) {
    return {std::string(d.name), d.capacity, d.latency, d.latency, d.bandwidth};
  }
  static tier_slot from(const tier_descriptor& d, bytes capacity) {
    tier_slot t = from(d);
    t.capacity = capacity;
    return t;
  }
};

//! Where each object went (an index into the tiers), what it costs, and what is known of the optimum.
struct placement {
  std::vector<std::uint32_t> tier_of;
  double cost = 0;          //!< Σ c_ij, seconds of access per second
  double lower_bound = 0;   //!< no assignment costs less (a Lagrangian bound, or the optimum itself)
  bool optimal = false;     //!< cost is proven minimal
  std::uint64_t nodes = 0;  //!< branch-and-bound nodes explored (exact solver)

  //! (cost − bound) / bound: how far from optimal it can be at most.
  [[nodiscard]] double gap() const noexcept { return lower_bound > 0 ? (cost - lower_bound) / lower_bound : 0.0; }
};

class placement_problem {
 public:
  placement_problem(std::vector<object_profile> objects, std::vector<tier_slot> tiers)
      : objects_(std::move(objects)), tiers_(std::move(tiers)) {
    validate();
    cost_.resize(objects_.size() * tiers_.size());
    for (std::size_t i = 0; i < objects_.size(); ++i)
      for (std::size_t j = 0; j < tiers_.size(); ++j)
        cost_[i * tiers_.size() + j] = compute_cost(objects_[i], tiers_[j]);
  }

  [[nodiscard]] std::size_t objects() const noexcept { return objects_.size(); }
  [[nodiscard]] std::size_t tiers() const noexcept { return tiers_.size(); }
  [[nodiscard]] const object_profile& object(std::size_t i) const { return objects_.at(i); }
  [[nodiscard]] const tier_slot& tier(std::size_t j) const { return tiers_.at(j); }
  [[nodiscard]] double cost(std::size_t i, std::size_t j) const noexcept { return cost_[i * tiers_.size() + j]; }
  [[nodiscard]] double size(std::size_t i) const noexcept { return objects_[i].size.value(); }
  [[nodiscard]] double capacity(std::size_t j) const noexcept { return tiers_[j].capacity.value(); }

  //! The cost of an assignment; throws invalid_input if it overfills a tier or names no tier.
  [[nodiscard]] double evaluate(const std::vector<std::uint32_t>& tier_of) const {
    trinity::detail::require(tier_of.size() == objects_.size(), "tier_of", "needs one tier per object");
    std::vector<double> used(tiers_.size(), 0.0);
    double total = 0;
    for (std::size_t i = 0; i < tier_of.size(); ++i) {
      trinity::detail::require(tier_of[i] < tiers_.size(), "tier_of", "names a tier that does not exist");
      used[tier_of[i]] += size(i);
      total += cost(i, tier_of[i]);
    }
    for (std::size_t j = 0; j < tiers_.size(); ++j)
      if (used[j] > capacity(j))
        throw invalid_input("tiers[" + std::to_string(j) + "].capacity",
                            tiers_[j].name + " holds " + std::to_string(capacity(j)) + " bytes; the assignment puts " +
                                std::to_string(used[j]) + " there");
    return total;
  }

 private:
  static double compute_cost(const object_profile& o, const tier_slot& t) {
    const double latency =
        (1.0 - o.write_fraction) * t.read_latency.value() + o.write_fraction * t.write_latency.value();
    return o.accesses_per_second * (o.latency_weight * latency + o.bytes_per_access.value() / t.bandwidth.value());
  }

  void validate() const {
    trinity::detail::require(!tiers_.empty(), "tiers", "a placement needs at least one tier");
    double room = 0, need = 0;
    for (std::size_t j = 0; j < tiers_.size(); ++j) {
      const auto& t = tiers_[j];
      const std::string f = "tiers[" + std::to_string(j) + "]";
      trinity::detail::require(t.capacity >= bytes{} && trinity::detail::is_finite(t.capacity.value()), f + ".capacity",
                               "must be finite and not negative");
      trinity::detail::require(t.read_latency >= seconds{} && trinity::detail::is_finite(t.read_latency.value()),
                               f + ".read_latency", "must be finite and not negative");
      trinity::detail::require(t.write_latency >= seconds{} && trinity::detail::is_finite(t.write_latency.value()),
                               f + ".write_latency", "must be finite and not negative");
      trinity::detail::require(t.bandwidth > bytes_per_second{} && trinity::detail::is_finite(t.bandwidth.value()),
                               f + ".bandwidth", "must be positive and finite");
      room += t.capacity.value();
    }
    for (std::size_t i = 0; i < objects_.size(); ++i) {
      const auto& o = objects_[i];
      const std::string f = "objects[" + std::to_string(i) + "]";
      trinity::detail::require(o.size > bytes{} && trinity::detail::is_finite(o.size.value()), f + ".size",
                               "must be positive and finite");
      trinity::detail::require(o.accesses_per_second >= 0 && trinity::detail::is_finite(o.accesses_per_second),
                               f + ".accesses_per_second", "must be finite and not negative");
      trinity::detail::require(o.bytes_per_access >= bytes{} && trinity::detail::is_finite(o.bytes_per_access.value()),
                               f + ".bytes_per_access", "must be finite and not negative");
      trinity::detail::require(o.write_fraction >= 0 && o.write_fraction <= 1, f + ".write_fraction",
                               "must lie in [0, 1]");
      trinity::detail::require(o.latency_weight >= 0 && trinity::detail::is_finite(o.latency_weight),
                               f + ".latency_weight", "must be finite and not negative");
      need += o.size.value();
    }
    trinity::detail::require(need <= room, "objects",
                             "need " + std::to_string(need) + " bytes but the tiers hold " + std::to_string(room) +
                                 "; add capacity or a larger tier");
  }

  std::vector<object_profile> objects_;
  std::vector<tier_slot> tiers_;
  std::vector<double> cost_;
};

}  // namespace trinity::place
