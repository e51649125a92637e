#pragma once
//! \file
//! Interconnect presets. Bandwidths are per direction. Sources are lines of
//! the CXL report (cxl-communication-tax-report.txt) unless stated; latencies
//! and energies the report lacks come from links/parameters.hpp and
//! tiers/parameters.hpp.

#include <trinity/opt_in.hpp>
#include <trinity/links/link_descriptor.hpp>
#include <trinity/links/parameters.hpp>
#include <trinity/tiers/parameters.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::links {

namespace p = parameters;
namespace tp = tiers::parameters;

#define TRINITY_DETAIL_LINK(id, ...)                          \
  struct id {                                                 \
    using link_concept = link_tag;                            \
    static constexpr link_descriptor descriptor{__VA_ARGS__}; \
  };

//! One NVLink 5 link: "50 GB/s of unidirectional bandwidth per link" (L1830);
//! "<500 ns" (L1789); packets of 48–272 B (L1845–1847); "Up to 576 GPUs"
//! (L1799); no protocol-level coherence (L1791, L1839–1840).
TRINITY_DETAIL_LINK(nvlink5, "nvlink5", link_family::nvlink, 50_GBps, p::nvlink_latency, 48_B, 576, false,
                    tp::xlink_energy_per_byte, "CXL report L1789, L1799, L1830, L1845-1847")

//! All 18 NVLink 5 links of one Blackwell GPU: 18 x 50 GB/s = 900 GB/s per
//! direction (NVIDIA GB200 NVL72 data sheet: "1.8 TB/s" NVLink per GPU, both
//! directions). The report gives only the per-link figure (L1830).
TRINITY_DETAIL_LINK(nvlink5_x18, "nvlink5-x18", link_family::nvlink, 900_GBps, p::nvlink_latency, 48_B, 576, false,
                    tp::xlink_energy_per_byte, "CXL report L1830 x 18 links (NVIDIA GB200 NVL72 data sheet)")

//! An H100 SXM's NVLink 4: 900 GB/s both directions, so 450 GB/s each way (NVIDIA H100 Tensor Core GPU data
//! sheet, SXM5), over 18 links; up to 256 GPUs through the NVLink Switch System (the same data sheet). Latency,
//! granule and energy per byte: NVLink 5's (the report's, above). The scale-up domain of dgx-h100.
//! NCCL's collectives move 370 GB/s of the 450: NVLink's packets spend about 20% on protocol, NCCL's maintainer
//! wrote, and 370 GB/s is the bus bandwidth nccl-tests shows for every collective but an all-reduce on NVLink
//! SHARP (S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/212, 2024-05-06). Megatron-Bridge's performance runs
//! turn NVLink SHARP off (NCCL_NVLS_ENABLE=0 in scripts/performance/utils/executors.py), so their all-reduces
//! run at 370 GB/s too.
TRINITY_DETAIL_LINK(nvlink4_x18, "nvlink4-x18", link_family::nvlink, 450_GBps, p::nvlink_latency, 48_B, 256, false,
                    tp::xlink_energy_per_byte,
                    "NVIDIA H100 Tensor Core GPU data sheet (SXM5): NVLink 900 GB/s, both directions, so 450 GB/s "
                    "each way; latency and energy per byte taken as NVLink 5's (CXL report L1830 x 18 links); "
                    "collectives 370 GB/s (NCCL's maintainer, github.com/NVIDIA/nccl-tests/issues/212)",
                    370_GBps)

//! An A100 SXM's NVLink 3: 600 GB/s both directions, so 300 GB/s each way (NVIDIA A100 data sheet), over 12
//! links; up to 16 GPUs on one NVSwitch fabric (NVIDIA HGX A100 16-GPU board). Latency, granule and energy per
//! byte: NVLink 5's. The scale-up domain of dgx-a100.
//! NCCL's collectives move 230 GB/s of the 300: each link's 25 GB/s carries about 20 GB/s of payload in the
//! 128-byte packets an SM writes, 240 GB/s over 12 links, and other limits of the GPU hold it to about 230
//! (S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/149, 2023-07-05).
TRINITY_DETAIL_LINK(nvlink3_x12, "nvlink3-x12", link_family::nvlink, 300_GBps, p::nvlink_latency, 48_B, 16, false,
                    tp::xlink_energy_per_byte,
                    "NVIDIA A100 data sheet: NVLink 600 GB/s, both directions, so 300 GB/s each way; latency and "
                    "energy per byte taken as NVLink 5's (CXL report L1830); collectives 230 GB/s (NCCL's "
                    "maintainer, github.com/NVIDIA/nccl-tests/issues/149)",
                    230_GBps)

//! NVLink-C2C between Grace and Blackwell: "approximately 900 GB/s of
//! bandwidth" (L775); coherent (Table 3 "only support by NVLink C2C", L1791).
//! The report does not say per direction; NVIDIA quotes 900 GB/s in total, so
//! this is an upper bound per direction.
TRINITY_DETAIL_LINK(nvlink_c2c, "nvlink-c2c", link_family::nvlink_c2c, 900_GBps, tp::c2c_latency, 16_B, 2, true,
                    tp::c2c_energy_per_byte, "CXL report L775, L1791; latency and energy: tiers/parameters.hpp")

//! One UALink 1.0 x4 port: "up to 100 GB/s via a standard 4-lane configuration"
//! (L1773, L1788); "<1µs" (L1789); "640B data link flits" (L1812); "up to 1,024
//! accelerators" (L1777).
TRINITY_DETAIL_LINK(ualink1, "ualink1-x4", link_family::ualink, 100_GBps, p::ualink_latency, 640_B, 1024, false,
                    tp::xlink_energy_per_byte, "CXL report L1773, L1777, L1788, L1789, L1812")

//! CXL 2.0 x16 over PCIe Gen5 (32 GT/s per lane): "up to 64 GB/s" per x16 port
//! (L1161–1163; per direction: 16 lanes at 32 GT/s carry 64 GB/s each way); 68 B flits (Table 1,
//! L1096–1114); up to 256 memory devices per root port (Table 1).
TRINITY_DETAIL_LINK(cxl2_x16, "cxl2-x16", link_family::cxl, 64_GBps, p::cxl_latency, 68_B, 256, true,
                    tp::cxl_link_energy_per_byte, "CXL report L1096-1114, L1161-1163, L1789")

//! CXL 3.0 x16 over PCIe 6.0: "128 (x16 lanes per link, PCIe 6.0)" GB/s
//! unidirectional (L1788); 256 B flits in PBR (L1221–1222); "Up to 4096 devices"
//! (L1799).
TRINITY_DETAIL_LINK(cxl3_x16, "cxl3-x16", link_family::cxl, 128_GBps, p::cxl_latency, 256_B, 4096, true,
                    tp::cxl_link_energy_per_byte, "CXL report L1221-1222, L1788, L1789, L1799")

//! PCIe 5.0 x16: 32 GT/s per lane (L1161) x 16 lanes / 8 = 64 GB/s per
//! direction before 128b/130b encoding. The granule is a 256 B TLP payload
//! (the common max payload size); not a report figure.
TRINITY_DETAIL_LINK(pcie5_x16, "pcie5-x16", link_family::pcie, 64_GBps, p::pcie_latency, 256_B, 0, false,
                    tp::cxl_link_energy_per_byte, "CXL report L1161 (32 GT/s per lane); latency: links/parameters.hpp")

//! PCIe 5.0 x4, as an NVMe drive attaches: a quarter of pcie5_x16.
TRINITY_DETAIL_LINK(pcie5_x4, "pcie5-x4", link_family::pcie, 16_GBps, p::pcie_latency, 256_B, 0, false,
                    tp::cxl_link_energy_per_byte, "CXL report L1161 (32 GT/s per lane) x 4 lanes")

//! PCIe 6.0 x16: 64 GT/s per lane, the PHY of CXL 3.0's 128 GB/s (L1788);
//! PCIe 6.0 moves 256 B flits (PCI-SIG PCIe 6.0 specification, FLIT mode).
TRINITY_DETAIL_LINK(pcie6_x16, "pcie6-x16", link_family::pcie, 128_GBps, p::pcie_latency, 256_B, 0, false,
                    tp::cxl_link_energy_per_byte, "CXL report L1788 (PCIe 6.0 x16)")

//! InfiniBand NDR / XDR ports: NICs and switches run "400 to 800 Gb/s" (L786,
//! L811, L834–837); RDMA latency ">1µs" (L1344). Granule: a 4 KiB MTU.
//! NCCL moves 46 to 48 GB/s over an NDR port's 50, its team wrote (github.com/NVIDIA/nccl-tests/issues/290,
//! 2025-03-03): 47 GB/s, the middle. None is measured for the 800 Gb/s port.
TRINITY_DETAIL_LINK(infiniband_400g, "infiniband-400g", link_family::infiniband, 400_Gbps, p::rdma_latency, 4_KiB, 0,
                    false, tp::optical_link_energy_per_byte,
                    "CXL report L786, L811, L1344; collectives 47 GB/s, the middle of NCCL's team's 46-48 GB/s an "
                    "NDR port (github.com/NVIDIA/nccl-tests/issues/290)",
                    47_GBps)
TRINITY_DETAIL_LINK(infiniband_800g, "infiniband-800g", link_family::infiniband, 800_Gbps, p::rdma_latency, 4_KiB, 0,
                    false, tp::optical_link_energy_per_byte, "CXL report L786, L811, L1344")

//! InfiniBand HDR, one 200 Gb/s port per GPU: 25 GB/s per direction (NVIDIA DGX A100 data sheet: 8 x 200 Gb/s
//! HDR per node); latency, granule and energy per byte as the NDR ports above. The scale-out link of dgx-a100.
//! NCCL moves 24 GB/s over it between nodes (S. Jeaugey, github.com/NVIDIA/nccl/issues/412, 2023-04-24).
TRINITY_DETAIL_LINK(infiniband_hdr200, "infiniband-hdr200", link_family::infiniband, 200_Gbps, p::rdma_latency, 4_KiB,
                    0, false, tp::optical_link_energy_per_byte,
                    "NVIDIA DGX A100 data sheet: 8 x 200 Gb/s HDR InfiniBand per node, one per GPU; latency and "
                    "energy: CXL report L786, L811, L1344; collectives 24 GB/s (NCCL's maintainer, "
                    "github.com/NVIDIA/nccl/issues/412)",
                    24_GBps)

//! Ethernet (RoCE) ports at the same rates (L786, L811); granule: 4 KiB RoCE MTU.
TRINITY_DETAIL_LINK(ethernet_400g, "ethernet-400g", link_family::ethernet, 400_Gbps, p::rdma_latency, 4_KiB, 0, false,
                    tp::optical_link_energy_per_byte, "CXL report L786, L811, L1344")
TRINITY_DETAIL_LINK(ethernet_800g, "ethernet-800g", link_family::ethernet, 800_Gbps, p::rdma_latency, 4_KiB, 0, false,
                    tp::optical_link_energy_per_byte, "CXL report L786, L811, L1344")

//! RDMA as the report's conventional baseline: ">1µs" (Table 2, L1344) over a
//! 400 Gb/s NIC (L786).
TRINITY_DETAIL_LINK(rdma, "rdma-400g", link_family::rdma, 400_Gbps, p::rdma_latency, 4_KiB, 0, false,
                    tp::optical_link_energy_per_byte, "CXL report L786, L1344")

//! A 5G uplink, urban macro: 25 Mbit/s experienced uplink rate, 10 ms end-to-end latency (3GPP TS 22.261
//! Table 7.1-1). Energy: a 5G modem draws about 2-3 W while uploading (Narayanan et al., "A Variegated Look at
//! 5G in the Wild", SIGCOMM 2021), so ~2.5 W / 25 Mbit/s = 0.8 uJ per byte (an estimate). Granule: one byte
//! (the model prices no framing); one device per uplink. The uplink of edge-5g-cloud.
TRINITY_DETAIL_LINK(uplink_5g, "5g-uplink", link_family::cellular, 25_Mbps, seconds{10e-3}, 1_B, 1, false,
                    joules_per_byte{0.8e-6}, "3GPP TS 22.261 Table 7.1-1 (urban macro); energy is an assumption")

#undef TRINITY_DETAIL_LINK

}  // namespace trinity::links
