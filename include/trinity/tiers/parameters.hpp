#pragma once
//! \file
//! Figures the design documents do not give (the report has no latency for
//! local DRAM, none per switch hop and no energy per byte anywhere),
//! named so that a preset can say which one it uses and a user can see what to
//! override. Each carries its public source and how the value was derived.

#include <array>

#include <trinity/documented_parameter.hpp>
#include <trinity/units/literals.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::tiers::parameters {

// ---- latency ---------------------------------------------------------------

//! Local DRAM load-to-use latency. The Next Platform, "Just How Bad Is CXL
//! Memory Latency?" (2022-12-05): "the sub-100 nanosecond roundtrip latency
//! you'd expect from DDR memory that's attached directly the CPU". Upper end.
inline constexpr seconds dram_load_latency = 100_ns;

//! GPU HBM load-to-use latency, H100 HBM3: "~400 ns" in a public Nsight
//! profiling write-up (mikamirai.com, "GPU Memory Bandwidth: What Your Profiler
//! Isn't Telling You", 2026). Used for HBM3e as the same order.
inline constexpr seconds hbm_load_latency = 400_ns;

//! What one CXL hop adds to a DRAM access. Pond (Li et al., ASPLOS 2023) finds
//! CXL pooling "adds roughly 70-90ns of latency" over local DRAM; the lower end
//! is charged per port and again per switch hop (the report gives no per-hop
//! figure, only that tier-2 latency depends on the switches, L2121–2122).
inline constexpr seconds cxl_switch_hop_latency = 70_ns;

//! Idle latency of CXL-attached memory behind one port: local DRAM plus one CXL
//! hop = 170 ns, inside the report's "100–250 ns typical" (Table 3, L1789).
inline constexpr seconds cxl_port_latency = dram_load_latency + cxl_switch_hop_latency;

//! What the NVLink-C2C hop adds to a Grace LPDDR5X access seen from the GPU:
//! "approximately 100-200 nanoseconds" (knowledgebase.rackmountnts.com, "What is
//! NVLink-C2C?"); lower end.
inline constexpr seconds c2c_latency = 100_ns;

//! NVMe read latency: the report places "external memory via PCIe or storage"
//! at "hundreds of nanoseconds (ns) to tens of microseconds (µs)" (L141–143);
//! flash sits at the tens-of-µs end.
inline constexpr seconds nvme_read_latency = 50_us;

// ---- bandwidth ---------------------------------------------------------------

//! PCIe 5.0 x4 NVMe sequential read: "Sequential Read Speeds: 12,000–14,500
//! MB/s" for Gen5 SSDs (digiopedia.com, "PCIe Gen 5.0 NVMe", 2025). Upper-middle.
inline constexpr bytes_per_second nvme_read_bandwidth = 14_GBps;

// ---- energy ------------------------------------------------------------------

//! DRAM access energy. Horowitz, "Computing's energy problem", ISSCC 2014:
//! a 64-bit DRAM access costs 1.3–2.6 nJ, i.e. 20–40 pJ/bit; lower end.
inline constexpr joules_per_byte ddr_energy_per_byte = 20_pJ_per_bit;

//! LPDDR5X, charged as DRAM (Horowitz, above) for lack of a public per-bit
//! figure for Grace's memory; a conservative upper bound.
inline constexpr joules_per_byte lpddr_energy_per_byte = ddr_energy_per_byte;

//! HBM access energy. O'Connor et al., "Fine-Grained DRAM", MICRO-50 (2017):
//! HBM2 ≈ 3.9 pJ/bit; used for HBM3e as an upper bound.
inline constexpr joules_per_byte hbm_energy_per_byte = 3.9_pJ_per_bit;

//! NVLink-C2C: "data transmission that consumes just 1.3 picojoules per bit"
//! (NVIDIA blog, "What Is NVLink?", 2023).
inline constexpr joules_per_byte c2c_energy_per_byte = 1.3_pJ_per_bit;

//! A PCIe 5.0 / CXL link: the same NVIDIA page calls NVLink-C2C "5 times more
//! energy efficient than PCIe Gen 5", so 5 x 1.3 = 6.5 pJ/bit.
inline constexpr joules_per_byte cxl_link_energy_per_byte = 6.5_pJ_per_bit;

//! NVLink 5 and UALink, charged as the NVLink-C2C figure (same vendor SerDes
//! class); a lower bound.
inline constexpr joules_per_byte xlink_energy_per_byte = c2c_energy_per_byte;

//! A 400G optical Ethernet/InfiniBand port: a QSFP-DD 400G-DR4 module draws
//! about 12 W (module class power in the QSFP-DD MSA), 12 W / 400 Gb/s = 30 pJ/bit.
inline constexpr joules_per_byte optical_link_energy_per_byte = 30_pJ_per_bit;

//! NVMe media + controller: an E3.S 1T enterprise SSD is specified for up to
//! 25 W (SNIA SFF-TA-1008); 25 W at 14 GB/s ≈ 1.8 nJ per byte read.
inline constexpr joules_per_byte nvme_energy_per_byte = 25_W / nvme_read_bandwidth;

//! Remote storage: the remote SSD plus two optical network hops.
inline constexpr joules_per_byte remote_storage_energy_per_byte =
    nvme_energy_per_byte + 2 * optical_link_energy_per_byte;

}  // namespace trinity::tiers::parameters

namespace trinity::tiers {

inline constexpr std::array<documented_parameter, 13> documented_parameters{{
    {"dram_load_latency", documented_parameter::kind::latency, parameters::dram_load_latency.value(),
     "The Next Platform, 'Just How Bad Is CXL Memory Latency?' (2022): sub-100 ns for CPU-attached DDR"},
    {"hbm_load_latency", documented_parameter::kind::latency, parameters::hbm_load_latency.value(),
     "mikamirai.com, 'GPU Memory Bandwidth: What Your Profiler Isn't Telling You' (2026): H100 HBM3 ~400 ns"},
    {"cxl_switch_hop_latency", documented_parameter::kind::latency, parameters::cxl_switch_hop_latency.value(),
     "Pond (Li et al., ASPLOS 2023): CXL adds 70-90 ns over local DRAM; lower end per hop"},
    {"cxl_port_latency", documented_parameter::kind::latency, parameters::cxl_port_latency.value(),
     "dram_load_latency + one CXL hop; inside the CXL report's 100-250 ns (L1789)"},
    {"c2c_latency", documented_parameter::kind::latency, parameters::c2c_latency.value(),
     "knowledgebase.rackmountnts.com, 'What is NVLink-C2C?': 100-200 ns; lower end"},
    {"nvme_read_latency", documented_parameter::kind::latency, parameters::nvme_read_latency.value(),
     "CXL report L141-143: external memory via PCIe or storage, hundreds of ns to tens of us"},
    {"nvme_read_bandwidth", documented_parameter::kind::bandwidth, parameters::nvme_read_bandwidth.value(),
     "digiopedia.com, 'PCIe Gen 5.0 NVMe' (2025): Gen5 SSDs read 12,000-14,500 MB/s"},
    {"ddr_energy_per_byte", documented_parameter::kind::energy_per_byte, parameters::ddr_energy_per_byte.value(),
     "Horowitz, 'Computing's energy problem', ISSCC 2014: 1.3-2.6 nJ per 64-bit DRAM access; lower end"},
    {"hbm_energy_per_byte", documented_parameter::kind::energy_per_byte, parameters::hbm_energy_per_byte.value(),
     "O'Connor et al., 'Fine-Grained DRAM', MICRO-50 (2017): HBM2 about 3.9 pJ/bit"},
    {"c2c_energy_per_byte", documented_parameter::kind::energy_per_byte, parameters::c2c_energy_per_byte.value(),
     "NVIDIA, 'What Is NVLink?' (2023): NVLink-C2C 1.3 pJ/bit"},
    {"cxl_link_energy_per_byte", documented_parameter::kind::energy_per_byte,
     parameters::cxl_link_energy_per_byte.value(),
     "NVIDIA, 'What Is NVLink?' (2023): NVLink-C2C is 5x more efficient than PCIe Gen 5, so 6.5 pJ/bit"},
    {"optical_link_energy_per_byte", documented_parameter::kind::energy_per_byte,
     parameters::optical_link_energy_per_byte.value(),
     "QSFP-DD MSA: a 400G-DR4 module draws about 12 W; 12 W / 400 Gb/s = 30 pJ/bit"},
    {"nvme_energy_per_byte", documented_parameter::kind::energy_per_byte, parameters::nvme_energy_per_byte.value(),
     "SNIA SFF-TA-1008: E3.S 1T SSDs up to 25 W; 25 W at 14 GB/s"},
}};

}  // namespace trinity::tiers
