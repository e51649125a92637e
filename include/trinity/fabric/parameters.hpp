#pragma once
//! \file
//! Figures the simulated fabric needs that the CXL report does not give (a
//! switch hop's latency, the bridge's conversion penalty), each with its
//! reasoning, and the flit formats it does give, each with its line.

#include <trinity/units/literals.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::fabric::parameters {

//! A CXL switch hop: the same 70 ns tiers::parameters uses (Pond, ASPLOS'23, measured CXL switch latency).
//! Behaviour 2 (latency rises with hops) needs some positive figure; the report names none (L2121–2125).
inline constexpr seconds cxl_switch_hop = 70_ns;
//! The bridge between an XLink domain and CXL converts protocols; the report describes the penalty and the
//! bridge's HBM cache of converted requests (L2006–2017) but gives no figure. 150 ns: one more switch-class
//! traversal plus a lookup, an assumption to be replaced by a measurement.
inline constexpr seconds bridge_conversion = 150_ns;
//! A hit in the bridge's cache of pre-converted requests costs an HBM access instead (tiers::parameters).
inline constexpr seconds bridge_cache_hit = 20_ns;

//! CXL 68 B flits (HBR, up to 32 GT/s) carry 64 B of payload: 2 B protocol header and 2 B CRC (CXL 2.0
//! specification, §6.2). 256 B flits (PBR, CXL 3.0) carry 240 B: 2 B header, 8 B CRC, 6 B FEC (CXL 3.0
//! specification, §6.2.3). Flit sizes: CXL report L1221–1222, Table 1.
inline constexpr double cxl_hbr_flit = 68, cxl_hbr_payload = 64;
inline constexpr double cxl_pbr_flit = 256, cxl_pbr_payload = 240;
//! NVLink packets: a 16 B header and 2 to 16 data flits of 16 B (48–272 B; L1845–1847).
inline constexpr double nvlink_header = 16, nvlink_data_flit = 16, nvlink_min_data_flits = 2,
                        nvlink_max_data_flits = 16;
//! UALink 1.0 moves 640 B data-link flits (L1812); the report gives no split of header and payload, so the
//! whole flit is counted as payload (an upper bound on efficiency).
inline constexpr double ualink_flit = 640;

}  // namespace trinity::fabric::parameters
