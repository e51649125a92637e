#pragma once
//! \file
//! Link latencies chosen inside the bounds the CXL report gives (Table 3,
//! L1789; Table 2, L1344), and those it does not give at all, each with its
//! reasoning. The report's ordering (CXL <= NVLink < UALink < RDMA, the same
//! two tables) holds for these values and is tested.

#include <array>

#include <trinity/documented_parameter.hpp>
#include <trinity/units/literals.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::links::parameters {

//! CXL link traversal: the lower end of "100–250 ns typical" (L1789); memory
//! behind the link adds DRAM latency on top (tiers::parameters).
inline constexpr seconds cxl_latency = 100_ns;

//! NVLink 5: "less than 500 ns" (L1837; Table 3 "Sub-500 ns", L1789).
inline constexpr seconds nvlink_latency = 400_ns;

//! UALink 1.0: "Sub-µs (<1µs within rack)" (L1789).
inline constexpr seconds ualink_latency = 800_ns;

//! PCIe: "hundreds of nanoseconds" for external memory over PCIe (L141–143).
inline constexpr seconds pcie_latency = 500_ns;

//! RDMA over InfiniBand or Ethernet: "RDMA (>1µs)" (Table 2, L1344). The report
//! gives no InfiniBand/Ethernet latency of its own; these links use this one.
inline constexpr seconds rdma_latency = 2_us;

}  // namespace trinity::links::parameters

namespace trinity::links {

inline constexpr std::array<documented_parameter, 5> documented_parameters{{
    {"cxl_latency", documented_parameter::kind::latency, parameters::cxl_latency.value(),
     "CXL report Table 3, L1789: 100-250 ns typical; lower end for the link alone"},
    {"nvlink_latency", documented_parameter::kind::latency, parameters::nvlink_latency.value(),
     "CXL report L1837 and Table 3, L1789: NVLink 5 below 500 ns"},
    {"ualink_latency", documented_parameter::kind::latency, parameters::ualink_latency.value(),
     "CXL report Table 3, L1789: UALink 1.0 below 1 us within a rack"},
    {"pcie_latency", documented_parameter::kind::latency, parameters::pcie_latency.value(),
     "CXL report L141-143: external memory over PCIe, hundreds of ns"},
    {"rdma_latency", documented_parameter::kind::latency, parameters::rdma_latency.value(),
     "CXL report Table 2, L1344: RDMA above 1 us; also used for InfiniBand and Ethernet, which the report gives no "
     "latency for"},
}};

}  // namespace trinity::links
