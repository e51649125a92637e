#pragma once
//! \file
//! tier_hierarchy<Tiers...>: an ordered set of tiers, fastest first, that a
//! placement or a spill rule fills in order (the report's rule: tier-2 "only
//! when memory demands surpass" tier-1, L2117–2118).
//!
//!   using rack = trinity::tier_hierarchy<tiers::gb200_hbm3e, tiers::cxl_coherent, tiers::cxl_capacity>;
//!   rack::spill_order()   // descriptors in the order bytes should land

#include <array>
#include <cstddef>
#include <type_traits>

#include <trinity/tiers/tier.hpp>
#include <trinity/tiers/tier_descriptor.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

namespace detail {
template <class T, class... Ts>
inline constexpr bool appears_once = (static_cast<int>(std::is_same_v<T, Ts>) + ... + 0) == 1;

// Fastest first means falling bandwidth, ties broken by rising latency. Not
// latency alone: an accelerator's HBM has a longer load latency (~400 ns) than
// a CXL expander (~170 ns), yet it is tier-1 because it streams 60x faster.
template <class... Ts>
consteval bool fastest_first() {
  if constexpr (sizeof...(Ts) < 2) {
    return true;
  } else {
    const std::array<tier_descriptor, sizeof...(Ts)> d{Ts::descriptor...};
    for (std::size_t i = 1; i < d.size(); ++i) {
      if (d[i].bandwidth > d[i - 1].bandwidth) return false;
      if (d[i].bandwidth == d[i - 1].bandwidth && d[i].latency < d[i - 1].latency) return false;
    }
    return true;
  }
}
}  // namespace detail

template <class... Tiers>
struct tier_hierarchy {
  static_assert(sizeof...(Tiers) > 0, "trinity: a tier_hierarchy needs at least one tier.");
  // One check per tier, so the message names the type that is not a Tier.
  static_assert((diagnose_tier<Tiers>() && ...));
  static_assert((detail::appears_once<Tiers, Tiers...> && ...),
                "trinity: a tier appears twice in tier_hierarchy. Fix: list each tier once.");
  static_assert(detail::fastest_first<Tiers...>(),
                "trinity: tier_hierarchy lists tiers fastest first. Fix: order them by falling bandwidth, then "
                "rising latency (e.g. HBM, then CXL-coherent, then the CXL capacity pool).");

  static constexpr std::size_t size = sizeof...(Tiers);

  //! The descriptors in spill order: fill the first, then the next.
  static constexpr std::array<tier_descriptor, size> spill_order() noexcept { return {Tiers::descriptor...}; }

  static constexpr bytes total_capacity() noexcept { return (Tiers::descriptor.capacity + ...); }
};

}  // namespace trinity
