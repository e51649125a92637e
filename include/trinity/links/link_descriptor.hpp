#pragma once
//! \file
//! link_descriptor: the figures the cost models read for an interconnect.
//! As with tiers (tier_descriptor.hpp), a preset's text views literals and a
//! run-time system's is its own: basic_link_descriptor<std::string>, from owned().

#include <cstdint>
#include <string>
#include <string_view>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

enum class link_family { nvlink, nvlink_c2c, ualink, cxl, pcie, infiniband, ethernet, rdma, cellular };

constexpr std::string_view to_string(link_family f) noexcept {
  switch (f) {
    case link_family::nvlink:
      return "nvlink";
    case link_family::nvlink_c2c:
      return "nvlink-c2c";
    case link_family::ualink:
      return "ualink";
    case link_family::cxl:
      return "cxl";
    case link_family::pcie:
      return "pcie";
    case link_family::infiniband:
      return "infiniband";
    case link_family::ethernet:
      return "ethernet";
    case link_family::rdma:
      return "rdma";
    case link_family::cellular:
      return "cellular";
  }
  return "unknown";
}

//! The figures of a link; Text is std::string_view for a constexpr preset, std::string for one built at run time.
template <class Text>
struct basic_link_descriptor {
  Text name;
  link_family family;
  bytes_per_second bandwidth;   //!< per direction
  seconds latency;              //!< one-way, idle
  bytes flit;                   //!< smallest unit on the wire (flit or minimum packet)
  std::uint32_t max_endpoints;  //!< largest domain the link family supports (0: unbounded)
  bool coherent;                //!< hardware cache coherence across the link
  joules_per_byte energy;       //!< energy per byte carried
  Text source;
  //! What NCCL's collectives move per direction: the line rate less what the link's packets spend on headers
  //! and turnarounds when the GPU's SMs drive it (0: unmeasured, taken as `bandwidth`). Last, so that a preset
  //! without a measurement need not name it.
  bytes_per_second collective_bandwidth{};

  //! The α-β time of one message of n bytes: latency + n / bandwidth.
  [[nodiscard]] constexpr seconds transfer_time(bytes n) const noexcept { return latency + n / bandwidth; }
  [[nodiscard]] constexpr joules transfer_energy(bytes n) const noexcept { return n * energy; }
  //! The rate a collective (all-reduce, all-gather, reduce-scatter, all-to-all, send and receive) runs at.
  [[nodiscard]] constexpr bytes_per_second collective_rate() const noexcept {
    return collective_bandwidth > bytes_per_second{} ? collective_bandwidth : bandwidth;
  }
};

using link_descriptor = basic_link_descriptor<std::string_view>;

//! The same figures with text of its own: what a run-time system holds.
template <class Text>
basic_link_descriptor<std::string> owned(const basic_link_descriptor<Text>& d) {
  return {std::string(d.name),
          d.family,
          d.bandwidth,
          d.latency,
          d.flit,
          d.max_endpoints,
          d.coherent,
          d.energy,
          std::string(d.source),
          d.collective_bandwidth};
}

//! Checks a descriptor built at run time; throws invalid_input naming the field.
template <class Text>
constexpr void validate(const basic_link_descriptor<Text>& l) {
  detail::require(!l.name.empty(), "name", "a link needs a name");
  detail::require(l.bandwidth > bytes_per_second{} && detail::is_finite(l.bandwidth.value()), "bandwidth",
                  "must be positive and finite");
  detail::require(l.latency >= seconds{} && detail::is_finite(l.latency.value()), "latency",
                  "must be finite and not negative");
  detail::require(l.flit > bytes{} && detail::is_finite(l.flit.value()), "flit", "must be positive and finite");
  detail::require(l.energy >= joules_per_byte{} && detail::is_finite(l.energy.value()), "energy",
                  "must be finite and not negative");
  detail::require(l.collective_bandwidth >= bytes_per_second{} && l.collective_bandwidth <= l.bandwidth,
                  "collective_bandwidth",
                  "must be between 0 (none measured: the bandwidth) and the bandwidth, since a collective cannot "
                  "move more than the line carries");
}

}  // namespace trinity
