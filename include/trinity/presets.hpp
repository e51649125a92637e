#pragma once
//! \file
//! Every preset tier and link as run-time descriptors, for programs that list
//! or look them up by name (`trinity presets`, system files).

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include <trinity/documented_parameter.hpp>
#include <trinity/links/link_traits.hpp>
#include <trinity/links/parameters.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/tiers/parameters.hpp>
#include <trinity/tiers/presets.hpp>

namespace trinity {

inline constexpr std::array<tier_descriptor, 13> preset_tiers{
    tiers::gb200_hbm3e::descriptor,   tiers::b200_hbm3e::descriptor,   tiers::h100_hbm3::descriptor,
    tiers::h200_hbm3e::descriptor,    tiers::a100_hbm2e::descriptor,   tiers::orin_lpddr5::descriptor,
    tiers::grace_lpddr5x::descriptor, tiers::host_ddr::descriptor,     tiers::host_ddr4::descriptor,
    tiers::cxl_coherent::descriptor,  tiers::cxl_capacity::descriptor, tiers::nvme::descriptor,
    tiers::remote_storage::descriptor};

inline constexpr std::array<link_descriptor, 18> preset_links{links::nvlink5::descriptor,
                                                              links::nvlink5_x18::descriptor,
                                                              links::nvlink4_x18::descriptor,
                                                              links::nvlink3_x12::descriptor,
                                                              links::nvlink_c2c::descriptor,
                                                              links::ualink1::descriptor,
                                                              links::cxl2_x16::descriptor,
                                                              links::cxl3_x16::descriptor,
                                                              links::pcie5_x16::descriptor,
                                                              links::pcie5_x4::descriptor,
                                                              links::pcie6_x16::descriptor,
                                                              links::infiniband_400g::descriptor,
                                                              links::infiniband_800g::descriptor,
                                                              links::infiniband_hdr200::descriptor,
                                                              links::ethernet_400g::descriptor,
                                                              links::ethernet_800g::descriptor,
                                                              links::rdma::descriptor,
                                                              links::uplink_5g::descriptor};

constexpr std::optional<tier_descriptor> find_tier(std::string_view name) noexcept {
  for (const auto& t : preset_tiers)
    if (t.name == name) return t;
  return std::nullopt;
}

constexpr std::optional<link_descriptor> find_link(std::string_view name) noexcept {
  for (const auto& l : preset_links)
    if (l.name == name) return l;
  return std::nullopt;
}

//! Every figure the presets use that the design documents do not give.
inline constexpr auto preset_parameters = [] {
  std::array<documented_parameter, tiers::documented_parameters.size() + links::documented_parameters.size()> all{};
  std::size_t i = 0;
  for (const auto& p : tiers::documented_parameters) all[i++] = p;
  for (const auto& p : links::documented_parameters) all[i++] = p;
  return all;
}();

//! One row of the preset topology: how bytes get from one tier to another.
struct route_description {
  std::string_view from;
  std::string_view to;
  int hops;                  //!< 1 direct, 2 through a staging tier
  std::string_view link;     //!< the link of a direct route
  std::string_view staging;  //!< the tier a staged route passes through
  seconds gigabyte_time;     //!< time to move 1 GB (α-β, pipelined staging)
};

namespace detail {
using preset_tier_types =
    std::tuple<tiers::gb200_hbm3e, tiers::h100_hbm3, tiers::h200_hbm3e, tiers::grace_lpddr5x, tiers::host_ddr,
               tiers::cxl_coherent, tiers::cxl_capacity, tiers::nvme, tiers::remote_storage>;
inline constexpr std::size_t preset_tier_count = std::tuple_size_v<preset_tier_types>;

template <std::size_t I, std::size_t J>
constexpr std::optional<route_description> describe_route() {
  using A = std::tuple_element_t<I, preset_tier_types>;
  using B = std::tuple_element_t<J, preset_tier_types>;
  using traits = link_traits<A, B>;
  if constexpr (I >= J || !traits::reachable) {
    return std::nullopt;
  } else {
    route_description r{
        A::descriptor.name, B::descriptor.name, traits::hops, {}, {}, traits::transfer_time(bytes{1e9})};
    if constexpr (traits::direct) r.link = traits::link::descriptor.name;
    if constexpr (traits::staged) r.staging = traits::staging::descriptor.name;
    return r;
  }
}

template <std::size_t... K>
constexpr auto all_routes(std::index_sequence<K...>) {
  constexpr std::size_t n = preset_tier_count;
  constexpr std::array<std::optional<route_description>, sizeof...(K)> candidates{describe_route<K / n, K % n>()...};
  constexpr std::size_t count = [&] {
    std::size_t c = 0;
    for (const auto& r : candidates) c += r.has_value();
    return c;
  }();
  std::array<route_description, count> out{};
  std::size_t i = 0;
  for (const auto& r : candidates)
    if (r) out[i++] = *r;
  return out;
}
}  // namespace detail

//! Every pair of preset tiers that link_traits connects, each pair once.
inline constexpr auto preset_routes =
    detail::all_routes(std::make_index_sequence<detail::preset_tier_count * detail::preset_tier_count>{});

//! The route between two preset tiers by name, in either order; nullopt when
//! the preset topology does not connect them. `from` and `to` keep the order
//! the table lists them in.
constexpr std::optional<route_description> find_route(std::string_view a, std::string_view b) noexcept {
  for (const auto& r : preset_routes)
    if ((r.from == a && r.to == b) || (r.from == b && r.to == a)) return r;
  return std::nullopt;
}

}  // namespace trinity
