#pragma once
//! \file
//! Pairwise link traits between tiers, as Kokkos relates memory spaces:
//! which tier reaches which, over what link, and through which staging tier.
//!
//!   link_traits<tiers::gb200_hbm3e, tiers::grace_lpddr5x>::link   // links::nvlink_c2c
//!   link_traits<tiers::gb200_hbm3e, tiers::nvme>::staging         // tiers::grace_lpddr5x
//!
//! A user relates new tiers by specialising direct_link (symmetric) or
//! staging_tier; link_traits checks that a staged route's two hops exist.

#include <type_traits>

#include <trinity/links/link.hpp>
#include <trinity/tiers/tier.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

//! Specialise with `using type = SomeLink;` to connect A and B directly.
//! Declaring one order is enough: link_traits looks both ways.
template <class A, class B>
struct direct_link {};

//! Specialise with `using type = SomeTier;` when A reaches B only through a
//! tier in between (e.g. a GPU reading NVMe through host memory).
template <class A, class B>
struct staging_tier {};

namespace detail {
template <template <class, class> class Table, class A, class B>
concept has_entry = requires {
  typename Table<A, B>::type;
};

// Reads a symmetric pairwise table: an entry for (A, B) or, failing that, for
// (B, A); void when there is neither.
template <template <class, class> class Table, class A, class B>
struct symmetric_lookup {
  using type = void;
};
template <template <class, class> class Table, class A, class B>
requires has_entry<Table, A, B>
struct symmetric_lookup<Table, A, B> {
  using type = typename Table<A, B>::type;
};
template <template <class, class> class Table, class A, class B>
requires(!has_entry<Table, A, B> && has_entry<Table, B, A>) struct symmetric_lookup<Table, A, B> {
  using type = typename Table<B, A>::type;
};
// `void` means "no entry"; anything else must be what the table promises.
// (`is_void_v<L> || diagnose_link<L>()` would still instantiate the ladder for void.)
template <class L>
consteval bool is_void_or_link() {
  if constexpr (std::is_void_v<L>) {
    return true;
  } else {
    return diagnose_link<L>();
  }
}
template <class T>
consteval bool is_void_or_tier() {
  if constexpr (std::is_void_v<T>) {
    return true;
  } else {
    return diagnose_tier<T>();
  }
}
}  // namespace detail

template <class A, class B>
struct link_traits {
  static_assert(diagnose_tier<A>() && diagnose_tier<B>(), "link_traits relates two Tiers");

  //! The link between A and B when they are directly connected, else void.
  using link = typename detail::symmetric_lookup<direct_link, A, B>::type;
  //! The tier a transfer passes through when there is no direct link, else void.
  using staging =
      std::conditional_t<std::is_void_v<link>, typename detail::symmetric_lookup<staging_tier, A, B>::type, void>;

  static_assert(detail::is_void_or_link<link>(), "direct_link<A, B>::type must be a Link");
  static_assert(detail::is_void_or_tier<staging>(), "staging_tier<A, B>::type must be a Tier");

  static constexpr bool same_tier = std::is_same_v<A, B>;
  static constexpr bool direct = !std::is_void_v<link>;
  static constexpr bool staged = !std::is_void_v<staging>;
  static constexpr bool reachable = same_tier || direct || staged;
  //! Links crossed: 0 within a tier, 1 direct, 2 staged.
  static constexpr int hops = same_tier ? 0 : direct ? 1 : staged ? 2 : -1;

  //! Moves n bytes from A to B. Staged routes are pipelined: both latencies
  //! add, and the slower hop sets the rate. Within one tier the copy reads and
  //! writes through that tier's bandwidth.
  static constexpr seconds transfer_time(bytes n) noexcept requires reachable {
    if constexpr (same_tier) {
      return A::descriptor.latency + 2.0 * n / A::descriptor.bandwidth;
    } else if constexpr (direct) {
      return link::descriptor.transfer_time(n);
    } else {
      using first = link_traits<A, staging>;
      using second = link_traits<staging, B>;
      static_assert(first::direct && second::direct,
                    "trinity: a staging tier must be directly linked to both ends. Fix: declare direct_link for "
                    "each hop, or pick another staging tier.");
      using l1 = typename first::link;
      using l2 = typename second::link;
      const auto slowest = units::min(l1::descriptor.bandwidth, l2::descriptor.bandwidth);
      return l1::descriptor.latency + l2::descriptor.latency + n / slowest;
    }
  }
};

// ---- the preset topology: a GB200 node with CXL pools beside an x86 host ----

// clang-format off
template <> struct direct_link<tiers::gb200_hbm3e, tiers::grace_lpddr5x> { using type = links::nvlink_c2c; };  // L773-775
template <> struct direct_link<tiers::gb200_hbm3e, tiers::cxl_coherent>  { using type = links::cxl3_x16; };    // §6.3 L2083-2094
template <> struct direct_link<tiers::gb200_hbm3e, tiers::cxl_capacity>  { using type = links::cxl3_x16; };    // bulk CXL.io, L2140-2142
template <> struct direct_link<tiers::grace_lpddr5x, tiers::cxl_capacity> { using type = links::cxl3_x16; };
template <> struct direct_link<tiers::grace_lpddr5x, tiers::nvme>        { using type = links::pcie5_x4; };
template <> struct direct_link<tiers::grace_lpddr5x, tiers::remote_storage> { using type = links::infiniband_400g; };  // L786
template <> struct direct_link<tiers::host_ddr, tiers::gb200_hbm3e>      { using type = links::pcie5_x16; };   // a PCIe-attached GPU
template <> struct direct_link<tiers::host_ddr, tiers::h100_hbm3>        { using type = links::pcie5_x16; };   // H100 SXM: PCIe 5 x16 to the host
template <> struct direct_link<tiers::host_ddr, tiers::h200_hbm3e>       { using type = links::pcie5_x16; };
template <> struct direct_link<tiers::host_ddr, tiers::cxl_capacity>     { using type = links::cxl2_x16; };    // a CXL 2.0 expander
template <> struct direct_link<tiers::host_ddr, tiers::nvme>             { using type = links::pcie5_x4; };
template <> struct direct_link<tiers::host_ddr, tiers::remote_storage>   { using type = links::infiniband_400g; };

// Storage reaches the GPU through the Grace CPU's memory, as a bounce buffer.
template <> struct staging_tier<tiers::gb200_hbm3e, tiers::nvme>           { using type = tiers::grace_lpddr5x; };
template <> struct staging_tier<tiers::gb200_hbm3e, tiers::remote_storage> { using type = tiers::grace_lpddr5x; };
// Tier-2 pools feed tier-1 coherent memory through the accelerator (exclusive-cache mode, L2140-2142).
template <> struct staging_tier<tiers::cxl_coherent, tiers::cxl_capacity>  { using type = tiers::gb200_hbm3e; };
// clang-format on

}  // namespace trinity
