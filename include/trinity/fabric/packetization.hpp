#pragma once
//! \file
//! Bytes on the wire for a message of n bytes, by link format: whole flits or
//! packets, never a fraction (the report's flits: L1222, L1812, L1845–1847). A 1-byte NVLink
//! message still costs a 48 B packet; a 65-byte CXL HBR message two 68 B flits.

#include <cmath>
#include <cstdint>
#include <string_view>

#include <trinity/error.hpp>
#include <trinity/fabric/parameters.hpp>
#include <trinity/links/link_descriptor.hpp>

namespace trinity::fabric {

enum class wire_format : std::uint8_t { cxl_hbr, cxl_pbr, nvlink, ualink, stream };

constexpr std::string_view to_string(wire_format f) noexcept {
  switch (f) {
    case wire_format::cxl_hbr:
      return "cxl-68B";
    case wire_format::cxl_pbr:
      return "cxl-256B";
    case wire_format::nvlink:
      return "nvlink-packet";
    case wire_format::ualink:
      return "ualink-640B";
    case wire_format::stream:
      return "stream";
  }
  return "unknown";
}

struct wire_cost {
  double units = 0;  //!< flits or packets
  double bytes = 0;  //!< on the wire, headers and padding included
};

//! The wire format a link family uses; pbr selects CXL's 256 B flits.
constexpr wire_format format_of(link_family f, bool pbr) noexcept {
  switch (f) {
    case link_family::cxl:
      return pbr ? wire_format::cxl_pbr : wire_format::cxl_hbr;
    case link_family::nvlink:
    case link_family::nvlink_c2c:
      return wire_format::nvlink;
    case link_family::ualink:
      return wire_format::ualink;
    default:
      return wire_format::stream;
  }
}

inline wire_cost packetize(wire_format f, double payload) {
  trinity::detail::require(payload >= 0 && trinity::detail::is_finite(payload), "payload",
                           "must be finite and not negative");
  namespace p = parameters;
  const auto flits = [&](double flit, double carried) {
    const double n = std::max(1.0, std::ceil(payload / carried));
    return wire_cost{n, n * flit};
  };
  switch (f) {
    case wire_format::cxl_hbr:
      return flits(p::cxl_hbr_flit, p::cxl_hbr_payload);
    case wire_format::cxl_pbr:
      return flits(p::cxl_pbr_flit, p::cxl_pbr_payload);
    case wire_format::ualink:
      return flits(p::ualink_flit, p::ualink_flit);
    case wire_format::nvlink: {
      const double per_packet = p::nvlink_data_flit * p::nvlink_max_data_flits;  // 256 B of data at most
      const double packets = std::max(1.0, std::ceil(payload / per_packet));
      const double last = payload - (packets - 1) * per_packet;
      const double last_flits = std::max(p::nvlink_min_data_flits, std::ceil(last / p::nvlink_data_flit));
      const double bytes =
          (packets - 1) * (p::nvlink_header + per_packet) + p::nvlink_header + last_flits * p::nvlink_data_flit;
      return {packets, bytes};
    }
    case wire_format::stream:
      return {1, payload};
  }
  return {1, payload};
}

}  // namespace trinity::fabric
