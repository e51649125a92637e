#pragma once
//! \file
//! Every preset tier and link as run-time descriptors, for programs that list
//! or look them up by name (`trinity presets`, system files).

#include <array>
#include <optional>
#include <string_view>

#include <trinity/links/presets.hpp>
#include <trinity/tiers/presets.hpp>

namespace trinity {

inline constexpr std::array<tier_descriptor, 7> preset_tiers{
    tiers::gb200_hbm3e::descriptor, tiers::grace_lpddr5x::descriptor, tiers::host_ddr::descriptor,
    tiers::cxl_coherent::descriptor, tiers::cxl_capacity::descriptor, tiers::nvme::descriptor,
    tiers::remote_storage::descriptor};

inline constexpr std::array<link_descriptor, 14> preset_links{
    links::nvlink5::descriptor,         links::nvlink5_x18::descriptor,    links::nvlink_c2c::descriptor,
    links::ualink1::descriptor,         links::cxl2_x16::descriptor,       links::cxl3_x16::descriptor,
    links::pcie5_x16::descriptor,       links::pcie5_x4::descriptor,       links::pcie6_x16::descriptor,
    links::infiniband_400g::descriptor, links::infiniband_800g::descriptor, links::ethernet_400g::descriptor,
    links::ethernet_800g::descriptor,   links::rdma::descriptor};

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

}  // namespace trinity
