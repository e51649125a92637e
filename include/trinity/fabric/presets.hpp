#pragma once
//! \file
//! Fabrics to start from, built from the link and tier presets (each figure
//! cites its source there):
//!   cxl_single_switch   hosts → one CXL switch → memory trays (the report's rack pool)
//!   cxl_two_level       hosts → a spine CXL switch → leaf switches → trays (CXL 3.0 cascading)
//!   nvl72_cxl           72 Blackwell GPUs on NVLink 5 (NVL72, L716), Grace hosts over C2C, and a
//!                       CXL 3.0 tier-2 pool behind a switch (§6.3's two-tier design)
//!   ualink_pod          up to 1,024 accelerators on UALink 1.0 (L1777)
//!   rdma_cluster        hosts with 400G InfiniBand NICs to a switch, memory over RDMA

#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/topology.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/tiers/presets.hpp>

namespace trinity::fabric::presets {

inline topology cxl_single_switch(int hosts = 2, int trays = 4, int version = 2) {
  topology t({.cxl_version = version});
  const auto sw = t.add_switch("cxl-switch");
  for (int h = 0; h < hosts; ++h) t.connect(t.add_host("host" + std::to_string(h)), sw, links::cxl2_x16::descriptor);
  for (int m = 0; m < trays; ++m)
    t.connect(sw, t.add_memory("tray" + std::to_string(m), tiers::cxl_capacity::descriptor.capacity),
              links::cxl2_x16::descriptor);
  return t;
}

inline topology cxl_two_level(int hosts = 2, int leaves = 2, int trays_per_leaf = 4) {
  topology t({.cxl_version = 3, .pbr = true});
  const auto spine = t.add_switch("spine");
  for (int h = 0; h < hosts; ++h) t.connect(t.add_host("host" + std::to_string(h)), spine, links::cxl3_x16::descriptor);
  for (int l = 0; l < leaves; ++l) {
    const auto leaf = t.add_switch("leaf" + std::to_string(l));
    t.connect(spine, leaf, links::cxl3_x16::descriptor);
    for (int m = 0; m < trays_per_leaf; ++m)
      t.connect(
          leaf,
          t.add_memory("tray" + std::to_string(l) + "." + std::to_string(m), tiers::cxl_capacity::descriptor.capacity),
          links::cxl3_x16::descriptor);
  }
  return t;
}

inline topology nvl72_cxl(int gpus = 72, int trays = 8) {
  topology t({.cxl_version = 3, .pbr = true});
  const auto nvswitch = t.add_switch("nvswitch", link_family::nvlink);
  const auto cxl = t.add_switch("cxl-switch");
  std::uint32_t grace = 0;
  for (int g = 0; g < gpus; ++g) {
    const auto gpu = t.add_accelerator("gpu" + std::to_string(g));
    t.connect(gpu, nvswitch, links::nvlink5_x18::descriptor);
    if (g % 2 == 0) {  // one Grace per two Blackwells (GB200), each Blackwell coherent with it over NVLink-C2C
      grace = t.add_host("grace" + std::to_string(g / 2));
      t.connect(grace, cxl, links::cxl3_x16::descriptor);
    }
    t.connect(grace, gpu, links::nvlink_c2c::descriptor);
  }
  for (int m = 0; m < trays; ++m)
    t.connect(cxl, t.add_memory("tray" + std::to_string(m), tiers::cxl_capacity::descriptor.capacity),
              links::cxl3_x16::descriptor);
  return t;
}

inline topology ualink_pod(int accelerators = 1024) {
  topology t;
  const auto sw = t.add_switch("ualink-switch", link_family::ualink);
  for (int a = 0; a < accelerators; ++a)
    t.connect(t.add_accelerator("acc" + std::to_string(a)), sw, links::ualink1::descriptor);
  return t;
}

inline topology rdma_cluster(int hosts = 8, int memory_servers = 2) {
  topology t;
  const auto sw = t.add_switch("ib-switch", link_family::infiniband);
  for (int h = 0; h < hosts; ++h)
    t.connect(t.add_host("host" + std::to_string(h)), sw, links::infiniband_400g::descriptor);
  for (int m = 0; m < memory_servers; ++m)
    t.connect(sw, t.add_memory("memserver" + std::to_string(m), tiers::host_ddr::descriptor.capacity),
              links::infiniband_400g::descriptor);
  return t;
}

inline const std::vector<std::string_view>& names() {
  static const std::vector<std::string_view> n{"cxl-single-switch", "cxl-two-level", "nvl72-cxl", "ualink-pod",
                                               "rdma-cluster"};
  return n;
}

inline topology by_name(std::string_view name) {
  if (name == "cxl-single-switch") return cxl_single_switch();
  if (name == "cxl-two-level") return cxl_two_level();
  if (name == "nvl72-cxl") return nvl72_cxl();
  if (name == "ualink-pod") return ualink_pod();
  if (name == "rdma-cluster") return rdma_cluster();
  std::string known;
  for (auto n : names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw invalid_input("preset", "\"" + std::string(name) + "\" is not a fabric preset; choose one of " + known);
}

}  // namespace trinity::fabric::presets
