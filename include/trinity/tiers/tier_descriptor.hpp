#pragma once
//! \file
//! tier_descriptor: the figures the cost models read for a memory tier.
//! A preset carries one as `static constexpr` (its text viewing literals); a
//! system described at run time (a JSON file, the planner's plan::system) holds
//! the same figures with text it owns: basic_tier_descriptor<std::string>, made
//! from a preset by owned().

#include <string>
#include <string_view>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

//! Where a tier sits in the two-tier hierarchy of the CXL report (§6.3,
//! cxl-communication-tax-report.txt L2037–2189), with the host and storage
//! levels around it.
enum class tier_level {
  accelerator_local,  //!< tier-1: HBM beside the accelerator
  coherent_fabric,    //!< tier-1: memory reached coherently (NVLink-C2C, CXL.cache)
  host,               //!< host DRAM, not part of the accelerator hierarchy
  capacity_pool,      //!< tier-2: capacity-oriented CXL pools behind switches
  storage,            //!< block storage: NVMe, remote file systems
};

constexpr std::string_view to_string(tier_level l) noexcept {
  switch (l) {
    case tier_level::accelerator_local:
      return "accelerator-local";
    case tier_level::coherent_fabric:
      return "coherent-fabric";
    case tier_level::host:
      return "host";
    case tier_level::capacity_pool:
      return "capacity-pool";
    case tier_level::storage:
      return "storage";
  }
  return "unknown";
}

//! The figures of a tier; Text is std::string_view for a constexpr preset, std::string for one built at run time.
template <class Text>
struct basic_tier_descriptor {
  Text name;
  tier_level level;
  bytes capacity;              //!< per device (per GPU, per CPU, per pool)
  bytes_per_second bandwidth;  //!< peak, per device
  seconds latency;             //!< idle load-to-use (or request) latency
  joules_per_byte energy;      //!< access energy per byte moved
  bool byte_addressable;       //!< load/store (true) or block I/O (false)
  Text source;                 //!< where the figures come from

  //! Time to stream n bytes out of the tier: latency + n / bandwidth.
  [[nodiscard]] constexpr seconds access_time(bytes n) const noexcept { return latency + n / bandwidth; }
  //! Energy to move n bytes through the tier.
  [[nodiscard]] constexpr joules access_energy(bytes n) const noexcept { return n * energy; }
};

using tier_descriptor = basic_tier_descriptor<std::string_view>;

//! The same figures with text of its own: what a run-time system holds.
template <class Text>
basic_tier_descriptor<std::string> owned(const basic_tier_descriptor<Text>& d) {
  return {std::string(d.name), d.level,  d.capacity,         d.bandwidth,
          d.latency,           d.energy, d.byte_addressable, std::string(d.source)};
}

//! Checks a descriptor built at run time; throws invalid_input naming the field.
template <class Text>
constexpr void validate(const basic_tier_descriptor<Text>& t) {
  detail::require(!t.name.empty(), "name", "a tier needs a name");
  detail::require(t.capacity > bytes{} && detail::is_finite(t.capacity.value()), "capacity",
                  "must be positive and finite");
  detail::require(t.bandwidth > bytes_per_second{} && detail::is_finite(t.bandwidth.value()), "bandwidth",
                  "must be positive and finite");
  detail::require(t.latency >= seconds{} && detail::is_finite(t.latency.value()), "latency",
                  "must be finite and not negative");
  detail::require(t.energy >= joules_per_byte{} && detail::is_finite(t.energy.value()), "energy",
                  "must be finite and not negative");
}

}  // namespace trinity
