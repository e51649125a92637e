#pragma once
//! \file
//! Memory tier presets. Every figure names its source: a line of the CXL
//! report's text ("Lnnn", listed with its text in docs/sources.md) or, where
//! the report gives none (DRAM latency,
//! energy, NVMe, remote storage), a named parameter below with its own public
//! source. Parameters are figures to override for a real system, not
//! measurements of it.

#include <trinity/opt_in.hpp>
#include <trinity/tiers/parameters.hpp>
#include <trinity/tiers/tier_descriptor.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::tiers {

//! GB200 GPU HBM3e: "approximately 192 GB of HBM3e, delivering bandwidths up to
//! 8 TB/s per GPU" (L772).
struct gb200_hbm3e {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"gb200-hbm3e",
                                              tier_level::accelerator_local,
                                              192_GB,                           // L772
                                              8_TBps,                           // L772
                                              parameters::hbm_load_latency,     // not in the report; see parameters.hpp
                                              parameters::hbm_energy_per_byte,  // not in the report; see parameters.hpp
                                              true,
                                              "CXL report L772; latency and energy: tiers/parameters.hpp"};
};

//! H100 SXM HBM3 at 3.35 TB/s (NVIDIA H100 Tensor Core GPU data sheet). The data sheet's "80GB" counts
//! binary gigabytes, five 16 GiB stacks; the capacity is what CUDA gives a program of them, 85,017,493,504
//! bytes (79.2 GiB: cudaDeviceProp::totalGlobalMem, bench/results/transformer-probe-h100.json and both
//! serving probes; presets_test holds the two equal), not 80e9, which would refuse 5 GB a GPU has. Not in
//! the report; the GPU of an H100 InfiniBand cluster and of the machines trinity's CUDA backend is tested on.
struct h100_hbm3 {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"h100-hbm3",
                                              tier_level::accelerator_local,
                                              85'017'493'504_B,  // measured: transformer-probe-h100.json
                                              3.35_TBps,         // NVIDIA H100 data sheet (SXM)
                                              parameters::hbm_load_latency,
                                              parameters::hbm_energy_per_byte,
                                              true,
                                              "NVIDIA H100 data sheet (SXM); capacity as CUDA reports it on the H100 "
                                              "probe (bench/results/transformer-probe-h100.json); latency and energy: "
                                              "tiers/parameters.hpp"};
};

//! H200 HBM3e at 4.8 TB/s (NVIDIA H200 Tensor Core GPU data sheet). As the H100's, the data sheet's "141GB"
//! is binary; the capacity is what CUDA gives a program, 150,109,880,320 bytes (139.8 GiB: totalGlobalMem,
//! bench/results/serving-probe-h200.json; presets_test holds the two equal).
struct h200_hbm3e {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"h200-hbm3e",
                                              tier_level::accelerator_local,
                                              150'109'880'320_B,  // measured: serving-probe-h200.json
                                              4.8_TBps,           // NVIDIA H200 data sheet
                                              parameters::hbm_load_latency,
                                              parameters::hbm_energy_per_byte,
                                              true,
                                              "NVIDIA H200 data sheet; capacity as CUDA reports it on the H200 probe "
                                              "(bench/results/serving-probe-h200.json); latency and energy: "
                                              "tiers/parameters.hpp"};
};

//! B200 HBM3e at 8 TB/s, 1,000 W board (NVIDIA's Blackwell architecture technical brief, the HGX B200 variant, as
//! glennklockwood.com/garden/processors/B200 tabulates it). The capacity is the HGX B200's 1,440 GB for 8 GPUs,
//! 180 GB each (NVIDIA HGX B200 specifications); nvidia-smi on one reports about 179 GB (docs.vultr.com's HGX B200
//! hardware overview). No B200 was probed here: what CUDA gives a program of it is not measured. Latency and
//! energy: taken as the H100's HBM (tiers/parameters.hpp). The GPU of dgx-b200.
struct b200_hbm3e {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"b200-hbm3e",
                                              tier_level::accelerator_local,
                                              180_GB,  // NVIDIA HGX B200 specifications: 1,440 GB for 8 GPUs
                                              8_TBps,  // NVIDIA Blackwell technical brief (HGX B200)
                                              parameters::hbm_load_latency,
                                              parameters::hbm_energy_per_byte,
                                              true,
                                              "NVIDIA HGX B200 specifications (1,440 GB for 8 GPUs) and Blackwell "
                                              "technical brief (8 TB/s); latency and energy: tiers/parameters.hpp"};
};

//! A100 SXM 80GB HBM2e at 2,039 GB/s (NVIDIA A100 Tensor Core GPU data sheet). The "80GB" is binary, as the
//! H100's: nvidia-smi shows 81,920 MiB (modal-labs/modal-client PR 2797 lists it beside the H100's 81,559), of
//! which CUDA gives a program 81,049 MiB (totalGlobalMem on an A100 80GB PCIe, the same five HBM2e stacks:
//! ekondis/mixbench issue 47); trinity has no probe of its own on an A100. Latency and energy are not in the
//! data sheet: taken as the H100's HBM (tiers/parameters.hpp). The GPU of dgx-a100.
struct a100_hbm2e {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{
      "a100-hbm2e",
      tier_level::accelerator_local,
      81'049_MiB,  // CUDA's totalGlobalMem, ekondis/mixbench issue 47
      2039_GBps,   // NVIDIA A100 data sheet (SXM 80GB)
      parameters::hbm_load_latency,
      parameters::hbm_energy_per_byte,
      true,
      "NVIDIA A100 data sheet (SXM 80GB: HBM2e at 2,039 GB/s); capacity as CUDA reports it (81,049 MiB, "
      "ekondis/mixbench issue 47); latency and energy taken as the H100's HBM: tiers/parameters.hpp"};
};

//! Jetson Orin Nano 8GB's LPDDR5, shared by its CPU and GPU: 8 GB at 68 GB/s (NVIDIA Jetson Orin Nano 8GB
//! module data sheet); latency ~100 ns, typical of LPDDR5 (an assumption). Energy per byte is not priced (0):
//! the edge preset's energy is the module's power. The device of edge-5g-cloud.
struct orin_lpddr5 {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"orin-lpddr5",
                                              tier_level::accelerator_local,
                                              8_GB,                // NVIDIA Jetson Orin Nano 8GB data sheet
                                              68_GBps,             // NVIDIA Jetson Orin Nano 8GB data sheet
                                              seconds{100e-9},     // typical of LPDDR5: an assumption
                                              joules_per_byte{0},  // not priced: the module's power covers it
                                              true,
                                              "NVIDIA Jetson Orin Nano 8GB data sheet; latency an assumption"};
};

//! Grace CPU LPDDR5X in a GB200: "up to 480 GB of LPDDR5X DRAM ... via NVLink
//! C2C, achieving approximately 900 GB/s of bandwidth" (L773–775). The
//! bandwidth is the one the GPU sees through NVLink-C2C.
struct grace_lpddr5x {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"grace-lpddr5x",
                                              tier_level::coherent_fabric,
                                              480_GB,    // L773-774
                                              900_GBps,  // L775
                                              parameters::dram_load_latency + parameters::c2c_latency,
                                              parameters::lpddr_energy_per_byte,
                                              true,
                                              "CXL report L773-775; latency and energy: tiers/parameters.hpp"};
};

//! Host DDR5 behind a PCIe-attached accelerator (an x86 server of the H100
//! generation). Nothing here is in the report: 8 channels of DDR5-4800 at
//! 38.4 GB/s each (JEDEC JESD79-5) = 307.2 GB/s; 1 TB (16 x 64 GB DIMMs).
struct host_ddr {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"host-ddr5",
                                              tier_level::host,
                                              1_TB,        // 16 x 64 GB RDIMMs, a common 2-socket build
                                              307.2_GBps,  // 8 x DDR5-4800 channels, JESD79-5
                                              parameters::dram_load_latency,
                                              parameters::ddr_energy_per_byte,
                                              true,
                                              "JEDEC JESD79-5 (DDR5-4800); latency and energy: tiers/parameters.hpp"};
};

//! Host DDR4 of an AMD EPYC 7742 socket (the CPUs of a DGX A100): 8 channels of DDR4-3200 at 25.6 GB/s each
//! (AMD EPYC 7742 specifications; JEDEC JESD79-4) = 204.8 GB/s; 1 TB per socket (NVIDIA DGX A100 640GB data
//! sheet: 2 TB for two sockets). Latency and energy: as DDR5's (tiers/parameters.hpp).
struct host_ddr4 {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{
      "host-ddr4",
      tier_level::host,
      1_TB,        // DGX A100 640GB: 2 TB, two sockets
      204.8_GBps,  // 8 x DDR4-3200 channels, AMD EPYC 7742
      parameters::dram_load_latency,
      parameters::ddr_energy_per_byte,
      true,
      "AMD EPYC 7742 specifications (8 x DDR4-3200); NVIDIA DGX A100 data sheet (2 TB); latency and "
      "energy taken as DDR5's: tiers/parameters.hpp"};
};

//! Tier-1 coherent CXL memory: accelerator-local memory exposed over CXL.cache
//! (report §6.3, L2069–2097). CXL latency "100–250 ns typical" (Table 3, L1789);
//! one CXL 3.0 x16 link: "128 (x16 lanes per link, PCIe 6.0)" GB/s (L1788);
//! capacity of one CXL endpoint "typically ... within the range of 1–2 TB"
//! (L1140–1141).
struct cxl_coherent {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"cxl-coherent",
                                              tier_level::coherent_fabric,
                                              2_TB,                          // L1140-1141, upper end
                                              128_GBps,                      // L1788
                                              parameters::cxl_port_latency,  // inside L1789's 100-250 ns
                                              parameters::ddr_energy_per_byte + parameters::cxl_link_energy_per_byte,
                                              true,
                                              "CXL report L1140-1141, L1788, L1789; energy: tiers/parameters.hpp"};
};

//! Tier-2 capacity pool: a memory tray behind one CXL switch (report §6.3,
//! L2110–2125). "a single CXL 2.0 switch can aggregate tens of TBs of memory per
//! node" (L1163–1164); latency "tens or hundreds of nanoseconds, depending on
//! fabric-switch characteristics" (L2121–2122), modelled as the CXL port
//! latency plus one switch hop; one CXL 3.0 x16 port, 128 GB/s (L1788).
struct cxl_capacity {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{
      "cxl-capacity",
      tier_level::capacity_pool,
      32_TB,     // "tens of TBs" (L1163-1164, Table 2 L1348)
      128_GBps,  // L1788
      parameters::cxl_port_latency + parameters::cxl_switch_hop_latency,
      parameters::ddr_energy_per_byte + 2 * parameters::cxl_link_energy_per_byte,
      true,
      "CXL report L1163-1164, L1348, L1788, L2121-2122; hop latency and energy: tiers/parameters.hpp"};
};

//! A PCIe 5.0 x4 NVMe SSD. Not in the report; see parameters.hpp.
struct nvme {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{"nvme",
                                              tier_level::storage,
                                              15.36_TB,  // a common enterprise U.2/E3.S capacity point
                                              parameters::nvme_read_bandwidth,
                                              parameters::nvme_read_latency,
                                              parameters::nvme_energy_per_byte,
                                              false,
                                              "tiers/parameters.hpp (NVMe figures)"};
};

//! Remote storage or a distributed file system: "access latencies ranging from
//! milliseconds to tens of seconds" (L2119–2120); the lower end is used. Its
//! throughput is that of one 400 Gb/s NIC (L786, L811).
struct remote_storage {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{
      "remote-storage",
      tier_level::storage,
      1_PB,      // a parameter: a shared file system is effectively unbounded
      400_Gbps,  // L786, L811
      1_ms,      // L2119-2120, lower end
      parameters::remote_storage_energy_per_byte,
      false,
      "CXL report L786, L811, L2119-2120; capacity and energy: tiers/parameters.hpp"};
};

}  // namespace trinity::tiers
