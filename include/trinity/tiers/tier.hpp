#pragma once
//! \file
//! Tier: a type that names a memory tier and describes it, the way a Kokkos
//! memory space names itself. Opt in and carry a descriptor:
//!
//!   struct my_pool {
//!     using tier_concept = trinity::tier_tag;
//!     static constexpr trinity::tier_descriptor descriptor{ ... };
//!   };
//!
//! Where a tier is required, trinity calls diagnose_tier<T>(), whose
//! static_asserts say which piece is missing and how to add it.

#include <concepts>

#include <trinity/opt_in.hpp>
#include <trinity/tiers/tier_descriptor.hpp>

namespace trinity {

//! Says `using tier_concept = trinity::tier_tag;`.
template <class T>
concept opts_into_tier = requires {
  typename T::tier_concept;
}
&&std::same_as<typename T::tier_concept, tier_tag>;

//! Has `static constexpr trinity::tier_descriptor descriptor`.
template <class T>
concept describes_tier = requires {
  { T::descriptor } -> std::convertible_to<const tier_descriptor&>;
}
&&std::same_as<std::remove_cvref_t<decltype(T::descriptor)>, tier_descriptor>;

template <class T>
concept Tier = opts_into_tier<T> && describes_tier<T>;

//! Fails to compile, with the fix in the message, unless T is a Tier.
template <class T>
consteval bool diagnose_tier() {
  static_assert(opts_into_tier<T>,
                "trinity: this type is not a Tier. Fix: add `using tier_concept = trinity::tier_tag;` and "
                "`static constexpr trinity::tier_descriptor descriptor{...};` to it, or use a preset from "
                "<trinity/tiers/presets.hpp> such as trinity::tiers::gb200_hbm3e.");
  if constexpr (opts_into_tier<T>) {
    static_assert(describes_tier<T>,
                  "trinity: this type opts into Tier but has no `static constexpr trinity::tier_descriptor "
                  "descriptor`. Fix: add one with the tier's name, level, capacity, bandwidth, latency and "
                  "energy per byte.");
  }
  return Tier<T>;
}

}  // namespace trinity
