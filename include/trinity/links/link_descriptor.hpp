#pragma once
//! \file
//! link_descriptor: the figures the cost models read for an interconnect.

#include <cstdint>
#include <string_view>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

enum class link_family { nvlink, nvlink_c2c, ualink, cxl, pcie, infiniband, ethernet, rdma };

constexpr std::string_view to_string(link_family f) noexcept {
  switch (f) {
    case link_family::nvlink: return "nvlink";
    case link_family::nvlink_c2c: return "nvlink-c2c";
    case link_family::ualink: return "ualink";
    case link_family::cxl: return "cxl";
    case link_family::pcie: return "pcie";
    case link_family::infiniband: return "infiniband";
    case link_family::ethernet: return "ethernet";
    case link_family::rdma: return "rdma";
  }
  return "unknown";
}

struct link_descriptor {
  std::string_view name;
  link_family family;
  bytes_per_second bandwidth;   //!< per direction
  seconds latency;              //!< one-way, idle
  bytes flit;                   //!< smallest unit on the wire (flit or minimum packet)
  std::uint32_t max_endpoints;  //!< largest domain the link family supports (0: unbounded)
  bool coherent;                //!< hardware cache coherence across the link
  joules_per_byte energy;       //!< energy per byte carried
  std::string_view source;

  //! The α-β time of one message of n bytes: latency + n / bandwidth.
  [[nodiscard]] constexpr seconds transfer_time(bytes n) const noexcept { return latency + n / bandwidth; }
  [[nodiscard]] constexpr joules transfer_energy(bytes n) const noexcept { return n * energy; }
};

//! Checks a descriptor built at run time; throws invalid_input naming the field.
constexpr void validate(const link_descriptor& l) {
  detail::require(!l.name.empty(), "name", "a link needs a name");
  detail::require(l.bandwidth > bytes_per_second{} && detail::is_finite(l.bandwidth.value()), "bandwidth",
                  "must be positive and finite");
  detail::require(l.latency >= seconds{} && detail::is_finite(l.latency.value()), "latency",
                  "must be finite and not negative");
  detail::require(l.flit > bytes{} && detail::is_finite(l.flit.value()), "flit", "must be positive and finite");
  detail::require(l.energy >= joules_per_byte{} && detail::is_finite(l.energy.value()), "energy",
                  "must be finite and not negative");
}

}  // namespace trinity
