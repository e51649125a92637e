#pragma once
//! \file
//! The memory -> compute model of the paper (§5.1.2), for approximate caching
//! of diffusion latents. A generation runs S denoising steps of c_step FLOPs;
//! a hit on an entry saved after r steps skips r of them.
//!   C_full = S·c_step,  c_saved(r) = r·c_step,  N(M) = ⌊M/s_e⌋,
//!   E[C](M) = C_full - h(M)·c_saved(r),  dE/dM = -h'(M)·c_saved(r).
//! Worked example: S 50, c_step 1e9, r 20, s_e 2 GB, M 10 GB, h 0.6 ->
//! 5 entries, 1.2e10 FLOPs saved per request, 1.2 GFLOP per GB of cache
//! ("every ~1.7 GB of memory yields ~2e9 FLOPs").

#include <cstddef>
#include <string>

#include <trinity/opt_in.hpp>
#include <trinity/detail/cmath.hpp>
#include <trinity/error.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

struct diffusion_cache {
  std::size_t steps;        //!< S
  flops step_cost;          //!< c_step
  std::size_t reuse_depth;  //!< r: steps a hit skips
  bytes entry_size;         //!< s_e

  //! Throws invalid_input naming the field that cannot work.
  constexpr void validate() const {
    trinity::detail::require(steps >= 1, "steps", "must be at least 1");
    trinity::detail::require(step_cost > flops{} && trinity::detail::is_finite(step_cost.value()), "step_flops",
                             "must be positive and finite");
    trinity::detail::require(reuse_depth <= steps, "reuse_depth",
                             "must not exceed the step count: a hit cannot skip more steps than a request runs");
    trinity::detail::require(entry_size > bytes{} && trinity::detail::is_finite(entry_size.value()), "entry_size",
                             "must be positive and finite");
  }

  //! C_full = S·c_step.
  [[nodiscard]] constexpr flops full_cost() const {
    validate();
    return static_cast<double>(steps) * step_cost;
  }
  //! c_saved(r) = r·c_step.
  [[nodiscard]] constexpr flops saved_per_hit() const {
    validate();
    return static_cast<double>(reuse_depth) * step_cost;
  }
  //! N(M) = ⌊M / s_e⌋.
  [[nodiscard]] constexpr std::size_t entries(bytes capacity) const {
    validate();
    trinity::detail::require(capacity >= bytes{} && trinity::detail::is_finite(capacity.value()), "capacity",
                             "must be finite and not negative");
    return static_cast<std::size_t>(trinity::detail::floor(capacity / entry_size));
  }
  //! h·c_saved(r): FLOPs a request saves on average at hit rate h.
  [[nodiscard]] constexpr flops saved_per_request(double hit_rate) const {
    detail::require_hit_rate(hit_rate, true);
    return hit_rate * saved_per_hit();
  }
  //! E[C] = C_full - h·c_saved(r).
  [[nodiscard]] constexpr flops expected_cost(double hit_rate) const {
    return full_cost() - saved_per_request(hit_rate);
  }
  //! FLOPs saved per request per byte of cache: the average exchange rate.
  [[nodiscard]] constexpr flops_per_byte average_benefit(bytes capacity, double hit_rate) const {
    trinity::detail::require(capacity > bytes{} && trinity::detail::is_finite(capacity.value()), "capacity",
                             "must be positive and finite");
    return saved_per_request(hit_rate) / capacity;
  }
};

//! E[C](M) under a hit-rate curve.
template <HitRateModel H>
constexpr flops expected_cost(const diffusion_cache& c, const H& h, bytes capacity) {
  return c.expected_cost(h(capacity));
}

//! dE[C]/dM: FLOPs per request that one more byte of cache removes (negative).
template <HitRateModel H>
constexpr flops_per_byte marginal_cost(const diffusion_cache& c, const H& h, bytes capacity) {
  return -(h.derivative(capacity) * c.saved_per_hit());
}

//! The inverse: the capacity at which a request saves `target` FLOPs on average.
template <HitRateModel H>
constexpr bytes memory_for_saving(const diffusion_cache& c, const H& h, flops target) {
  trinity::detail::require(target >= flops{} && trinity::detail::is_finite(target.value()), "target_saving",
                           "must be finite and not negative");
  trinity::detail::require(target < c.saved_per_hit(), "target_saving",
                           "must be below the saving of a certain hit, r·c_step: no finite cache guarantees a hit");
  return h.capacity_for(target / c.saved_per_hit());
}

//! Memory -> compute as a TradeoffPolicy: hold a cache of `capacity` that
//! hits at `hit_rate`.
struct memory_for_compute {
  using policy_concept = tradeoff_policy_tag;
  using spends = resources::memory;
  using saves = resources::compute;

  diffusion_cache cache;

  struct input {
    bytes capacity;
    double hit_rate;
  };

  [[nodiscard]] constexpr priced_trade<spends, saves> price(const input& in) const {
    trinity::detail::require(in.capacity >= bytes{} && trinity::detail::is_finite(in.capacity.value()), "capacity",
                             "must be finite and not negative");
    priced_trade<spends, saves> t{};
    t.before.compute = cache.full_cost();
    t.after.compute = cache.expected_cost(in.hit_rate);
    t.after.memory = in.capacity;
    return t;
  }
};

}  // namespace trinity::model
