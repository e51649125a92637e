#pragma once
//! \file
//! A system as the planner sees it: identical accelerators, the memory tiers
//! each one can use (tier 0 is its own memory; the others take offloaded
//! state), and the interconnect its data-parallel collectives run over. Built
//! from a preset or from a JSON description (tools/trinity/plan_command.cpp);
//! validate() names the field and the rule: `tiers[2].capacity: must be positive`.
//! An edge system also names the server its devices may hand work to over the
//! interconnect. Prices (dollars) are optional; the cost objective needs them.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/device.hpp>
#include <trinity/plan/device_presets.hpp>
#include <trinity/plan/detail/measured_gemm.hpp>
#include <trinity/plan/detail/measured_attention.hpp>
#include <trinity/plan/detail/measured_serving.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::plan {

//! A memory tier as a system holds it: the library's descriptor (tiers/tier_descriptor.hpp), its text its own,
//! and what holding a byte in it costs.
struct priced_tier : basic_tier_descriptor<std::string> {
  double price_per_gb_hour = 0;  //!< dollars per GB held for an hour; 0: included in the device's price
};

//! A link as a system holds it: the library's descriptor (links/link_descriptor.hpp) and what a byte sent costs.
struct priced_link : basic_link_descriptor<std::string> {
  double price_per_gb = 0;  //!< dollars per GB sent (a metered uplink); 0: not metered
};

//! A preset tier or link in a system, at a price (none by default: the device's price covers it).
inline priced_tier tier_of(const tier_descriptor& d, double price_per_gb_hour = 0) {
  return {owned(d), price_per_gb_hour};
}
inline priced_link link_of(const link_descriptor& d, double price_per_gb = 0) { return {owned(d), price_per_gb}; }

// The names of 0.1 (CHANGELOG.md): a system's tiers and links were structs of their own, made from() a preset.
// They name the descriptors with a price now, field by field alike but for the tier's level and granule, and go
// in 0.3.0.
using tier_spec [[deprecated("use plan::priced_tier, a tiers/ descriptor with a price (CHANGELOG.md, 0.2.0)")]] =
    priced_tier;
using link_spec [[deprecated("use plan::priced_link, a links/ descriptor with a price (CHANGELOG.md, 0.2.0)")]] =
    priced_link;
[[deprecated("use plan::tier_of(d) (CHANGELOG.md, 0.2.0)")]] inline priced_tier from(const tier_descriptor& d) {
  return tier_of(d);
}
[[deprecated("use plan::link_of(d) (CHANGELOG.md, 0.2.0)")]] inline priced_link from(const link_descriptor& d) {
  return link_of(d);
}

struct system {
  std::string name;
  device_spec device;
  std::vector<priced_tier> tiers;  //!< [0] the device's own memory, then slower tiers offloaded state may use
  priced_link interconnect;
  std::optional<device_spec> server;  //!< where a device may send work over the interconnect (edge systems)
  std::string fabric;                 //!< the fabric preset `simulate` lays it on (empty: the preset systems' own)
  std::string fabric_memory_tier;     //!< the tier the fabric's memory nodes stand for (empty: none of them)
  //! Devices that share `interconnect` as one scale-up domain (an NVLink node, an NVL72 rack); 0: all of them.
  std::size_t scale_up_domain = 0;
  //! The fabric between scale-up domains, per device and direction (its NIC); none: one domain.
  std::optional<priced_link> scale_out = std::nullopt;
  //! The fields taken by default, not from the system file (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};
};

namespace detail {

inline void validate(const priced_link& l, const std::string& at) {
  require_positive(l.bandwidth, at + ".bandwidth");
  require_non_negative(l.latency, at + ".latency");
  require_non_negative(l.energy, at + ".energy");
  require_non_negative(l.price_per_gb, at + ".price_per_gb");
  require_non_negative(l.collective_bandwidth, at + ".collective_bandwidth");
  trinity::detail::require(l.collective_bandwidth <= l.bandwidth, at + ".collective_bandwidth",
                           to_string(l.collective_bandwidth) + " is more than the bandwidth (" +
                               to_string(l.bandwidth) +
                               "): a collective cannot move more than the line carries; leave it out to take the "
                               "bandwidth");
}
}  // namespace detail

//! Throws invalid_input naming the path of the first field that cannot work.
inline void validate(const system& s) {
  trinity::detail::require(!s.name.empty(), "name", "a system needs a name");
  detail::validate(s.device, "device");
  trinity::detail::require(s.device.count >= 1 && s.device.count <= 1'000'000, "device.count",
                           "must be from 1 to 1000000 devices");
  trinity::detail::require(!s.tiers.empty(), "tiers", "needs at least the device's own memory as tiers[0]");
  for (std::size_t i = 0; i < s.tiers.size(); ++i) {
    const auto& t = s.tiers[i];
    const std::string at = "tiers[" + std::to_string(i) + "]";
    trinity::detail::require(!t.name.empty(), at + ".name", "every tier needs a name");
    detail::require_positive(t.capacity, at + ".capacity");
    detail::require_positive(t.bandwidth, at + ".bandwidth");
    detail::require_non_negative(t.latency, at + ".latency");
    detail::require_non_negative(t.energy, at + ".energy");
    detail::require_non_negative(t.price_per_gb_hour, at + ".price_per_gb_hour");
  }
  detail::validate(s.interconnect, "interconnect");
  if (!s.fabric_memory_tier.empty()) {
    bool found = false;
    for (const auto& t : s.tiers) found |= t.name == s.fabric_memory_tier;
    trinity::detail::require(found, "fabric_memory_tier",
                             "\"" + s.fabric_memory_tier + "\" is none of the system's tiers; name one of them");
  }
  if (s.scale_out) {
    detail::validate(*s.scale_out, "scale_out");
  }
  trinity::detail::require(s.scale_up_domain == 0 || s.scale_out.has_value(), "scale_up_domain",
                           "domains need a link between them. Fix: give scale_out (the link each device reaches other "
                           "domains over), or drop scale_up_domain");
  trinity::detail::require(s.scale_up_domain <= s.device.count, "scale_up_domain",
                           std::to_string(s.scale_up_domain) + " devices per domain, more than the " +
                               std::to_string(s.device.count) + " of device.count");
  if (s.server) {
    trinity::detail::require(!s.server->name.empty(), "server.name", "the server needs a name");
    detail::validate(*s.server, "server");
  }
}

//! The devices that share `interconnect`: the scale-up domain, or every device where no scale-out link joins
//! domains. The one rule every planner's collectives go by (the layout search's cluster_of, the data-parallel
//! planner's gradient reduction).
inline std::size_t scale_up_devices(const system& s) noexcept {
  if (!s.scale_out) return static_cast<std::size_t>(-1);  // one domain, however many devices
  return s.scale_up_domain ? s.scale_up_domain : s.device.count;
}

//! The link a collective over `ranks` devices crosses: the interconnect inside a domain, the scale-out link past
//! it (per device and direction: each device its own NIC).
inline const priced_link& collective_link_for(const system& s, std::size_t ranks) noexcept {
  return ranks <= scale_up_devices(s) ? s.interconnect : *s.scale_out;
}

//! Dollars for holding `held` bytes in each tier and renting the device for `busy`, plus `sent` bytes over
//! the interconnect: what a step or a request costs when the system carries prices.
inline double dollars(const system& s, seconds busy, const std::vector<bytes>& held, bytes sent) {
  double d = busy.value() / 3600.0 * s.device.price_per_hour + sent.value() / 1e9 * s.interconnect.price_per_gb;
  for (std::size_t t = 0; t < held.size() && t < s.tiers.size(); ++t)
    d += held[t].value() / 1e9 * s.tiers[t].price_per_gb_hour * busy.value() / 3600.0;
  return d;
}

//! Whether anything of the system has a price; the cost objective needs one.
//! How full the fullest tier is: the most, over the tiers, of what a device holds there over its capacity (above 1:
//! it does not fit).
inline double fullest_tier_share(const system& s, const std::vector<bytes>& per_device) {
  double most = 0;
  for (std::size_t t = 0; t < s.tiers.size(); ++t) most = std::max(most, per_device[t] / s.tiers[t].capacity);
  return most;
}

inline bool priced(const system& s) {
  bool any =
      s.device.price_per_hour > 0 || s.interconnect.price_per_gb > 0 || (s.server && s.server->price_per_hour > 0);
  for (const auto& t : s.tiers) any |= t.price_per_gb_hour > 0;
  return any;
}

//! "$0.0123": enough digits to tell plans apart.
inline std::string format_dollars(double d) { return "$" + units::detail::format_number(d); }

namespace presets {

//! A device preset (plan/device_presets.hpp), `count` of it.
inline device_spec with_count(device_spec d, std::size_t count) {
  d.count = count;
  return d;
}

//! A GB200 NVL72 rack: 72 GPUs on NVLink 5, each with HBM3e, half a Grace's LPDDR5X over NVLink-C2C,
//! and a CXL capacity pool as tier-2 (the CXL report's §6.3 hierarchy).
inline system gb200_nvl72_cxl() {
  auto grace = tier_of(tiers::grace_lpddr5x::descriptor);
  grace.capacity = grace.capacity / 2.0;  // one Grace serves two GPUs in a GB200 superchip (CXL report L773-775)
  grace.source += "; halved: one Grace per two GPUs";
  return {"gb200-nvl72-cxl",
          with_count(gb200_gpu(), 72),
          {tier_of(tiers::gb200_hbm3e::descriptor), grace, tier_of(tiers::cxl_capacity::descriptor)},
          link_of(links::nvlink5_x18::descriptor),
          std::nullopt,
          "nvl72-cxl",      // the fabric simulate lays it on (fabric/presets.hpp)
          "cxl-capacity"};  // its memory trays are the CXL pool
}

//! 64 H100 SXM GPUs, 8 per node, data parallel across nodes over 400G InfiniBand (one NIC per GPU),
//! host DDR5 as the offload tier.
inline system h100_infiniband() {
  return {"h100-ib-cluster",
          with_count(h100_sxm(), 64),
          {tier_of(tiers::h100_hbm3::descriptor), tier_of(tiers::host_ddr::descriptor)},
          link_of(links::infiniband_400g::descriptor),
          std::nullopt,
          "rdma-cluster",  // one host per GPU NIC
          ""};             // its memory servers are remote DDR over InfiniBand, not the host DDR offload uses
}

//! One DGX H100 (an HGX H100 8-GPU board): 8 H100 SXM GPUs on NVLink 4 through NVSwitch, host DDR5 below.
//! Its interconnect is the scale-up domain: what a serving replica's tensor parallelism crosses.
inline system dgx_h100() {
  auto nvlink = link_of(links::nvlink4_x18::descriptor);
  const auto device = with_count(h100_sxm(), 8);
  // Host memory as a GPU sees it: its share of the node's DDR5, reached over the GPU's PCIe link, not at the
  // DIMMs' own rate, and a PCIe traversal later than the host's own loads.
  auto host = tier_of(tiers::host_ddr::descriptor);
  host.capacity = bytes{2e12 / 8};
  host.bandwidth = bytes_per_second{64e9};
  host.latency = host.latency + links::pcie5_x16::descriptor.latency;
  host.source =
      "NVIDIA DGX H100 data sheet: 2 TB of system memory for 8 GPUs; H100 data sheet (SXM5): PCIe Gen5 "
      "128 GB/s, both directions, so 64 GB/s each way; latency: the DIMMs' and links::pcie5_x16's; energy: " +
      host.source;
  // Between nodes: eight ConnectX-7 400 Gb/s InfiniBand ports per node, one per GPU (NVIDIA DGX H100 data sheet).
  auto ib = link_of(links::infiniband_400g::descriptor);
  ib.source = "NVIDIA DGX H100 data sheet: 8 x 400 Gb/s ConnectX-7 per node, one per GPU; " + ib.source;
  return {"dgx-h100", device, {tier_of(tiers::h100_hbm3::descriptor), host}, nvlink, std::nullopt, "", "", 8, ib};
}

//! dgx-h100 with a CXL memory pool (the CXL report's tier-2, L2110-2124): a CXL 2.0 switch of memory trays behind
//! the node's host. A GPU reaches it through its PCIe Gen5 x16 link to the host (64 GB/s each way, the H100 data
//! sheet) and the host's CXL 2.0 x16 port to the switch (64 GB/s, links::cxl2_x16): 64 GB/s. Its latency is the
//! pool tier's own (tiers::cxl_capacity) and the GPU's PCIe traversal to the host (links::pcie5_x16), as
//! dgx-h100's host tier adds it to the DIMMs'. The pool's
//! 32 TB (tiers::cxl_capacity: "tens of TBs per node", L1163-1164) is shared by the node's 8 GPUs: 4 TB each, as
//! a system's tiers count capacity per device. The cxl-single-switch fabric is what `simulate` lays it on.
inline system dgx_h100_cxl() {
  auto s = dgx_h100();
  s.name = "dgx-h100-cxl";
  auto pool = tier_of(tiers::cxl_capacity::descriptor);
  pool.capacity = pool.capacity / 8.0;
  pool.bandwidth = std::min(bytes_per_second{64e9}, links::cxl2_x16::descriptor.bandwidth);
  pool.latency = pool.latency + links::pcie5_x16::descriptor.latency;
  pool.source =
      "a CXL 2.0 pool behind the host: the GPU's PCIe Gen5 x16 (H100 data sheet) and links::cxl2_x16; "
      "latency: the pool's and links::pcie5_x16's; " +
      pool.source + "; 32 TB shared by 8 GPUs";
  s.tiers.push_back(pool);
  s.fabric = "cxl-single-switch";
  s.fabric_memory_tier = pool.name;
  return s;
}

//! dgx-h100 with another GPU and its memory: the same host, links and price of a byte, 8 of `gpu`.
inline system dgx_h100_board_with(std::string name, device_spec gpu, const tier_descriptor& memory) {
  auto s = dgx_h100();
  s.name = std::move(name);
  s.device = with_count(std::move(gpu), 8);
  s.tiers.front() = tier_of(memory);
  return s;
}

//! One DGX H200: 8 H200 SXM GPUs on NVLink 4 through NVSwitch. The H100's compute (the H200 data sheet gives the
//! same 989 TFLOP/s dense BF16 and 1,979 dense FP8), 141 GB (binary) of HBM3e at 4.8 TB/s, of which a program
//! gets 150.1e9 bytes (tiers::h200_hbm3e), up to 700 W.
//! The GEMM curve is the H100's (the same SMs and clocks); its serving calibration is its own where a fit run
//! was on an H200, else the H100's (plan/detail/measured_serving.hpp says which).
inline system dgx_h200() { return dgx_h100_board_with("dgx-h200", h200_sxm(), tiers::h200_hbm3e::descriptor); }

//! One DGX B200: 8 B200 GPUs on NVLink 5 through NVSwitch (nvlink5-x18, 900 GB/s each way), host DDR5 below as
//! dgx-h100's (the DGX B200's 2 TB of system memory for 8 GPUs, reached over each GPU's PCIe Gen5 x16 to its
//! Xeon host: NVIDIA DGX B200 data sheet), and eight ConnectX-7 400 Gb/s ports per node, one per GPU, to others.
inline system dgx_b200() {
  auto s = dgx_h100_board_with("dgx-b200", b200_sxm(), tiers::b200_hbm3e::descriptor);
  s.interconnect = link_of(links::nvlink5_x18::descriptor);
  s.tiers[1].source = "as dgx-h100's (the DGX B200 data sheet gives the same 2 TB for 8 GPUs): " + s.tiers[1].source;
  s.scale_out->source =
      "as dgx-h100's (the DGX B200 data sheet: 8 single-port 400 Gb/s ConnectX-7): " + s.scale_out->source;
  return s;
}

//! One DGX A100 (640 GB): 8 A100 SXM 80GB GPUs on NVLink 3 through NVSwitch, host DDR4 below. As dgx-h100,
//! its interconnect is the scale-up domain; the node's eight HDR 200 Gb/s InfiniBand ports (DGX A100 data
//! sheet) join nodes: its scale-out link.
inline system dgx_a100() {
  const auto a100 = with_count(a100_sxm_80gb(), 8);
  auto hbm = tier_of(tiers::a100_hbm2e::descriptor);
  // Host memory as a GPU sees it: its share of the node's DDR4, reached over the GPU's PCIe link, a PCIe
  // traversal (links/parameters.hpp's pcie_latency, which Gen4 and Gen5 share there) later than the host's loads.
  auto host = tier_of(tiers::host_ddr4::descriptor);
  host.capacity = bytes{2e12 / 8};
  host.bandwidth = bytes_per_second{32e9};
  host.latency = host.latency + links::parameters::pcie_latency;
  host.source =
      "NVIDIA DGX A100 data sheet: 2 TB of system memory for 8 GPUs (the 640 GB system); A100 data "
      "sheet: PCIe Gen4 64 GB/s, both directions, so 32 GB/s each way; latency: the DIMMs' and a PCIe traversal "
      "(links/parameters.hpp's pcie_latency); " +
      host.source;
  auto nvlink = link_of(links::nvlink3_x12::descriptor);
  auto hdr = link_of(links::infiniband_hdr200::descriptor);
  return {"dgx-a100", a100, {hbm, host}, nvlink, std::nullopt, "", "", 8, hdr};
}

//! A camera's compute module on a 5G uplink to one cloud GPU: what edge video analytics runs on (the paper's
//! §3.2). The figures are a data sheet's and a standard's, except where marked as assumptions to replace
//! with your own (a data plan's price, the modem's energy per byte).
inline system edge_5g_cloud() {
  return {"edge-5g-cloud",
          jetson_orin_nano(),
          {tier_of(tiers::orin_lpddr5::descriptor)},
          // Price: $2 per GB, an assumed IoT data plan; put your own contract's figure in a JSON system.
          link_of(links::uplink_5g::descriptor, 2.0),
          // One H100 SXM in the cloud (as h100-ib-cluster: data sheet, CoreWeave list price per GPU-hour).
          device_spec{"cloud-h100",
                      flops_per_second{989e12},
                      watts{700},
                      1,
                      6.16,
                      "NVIDIA H100 data sheet (SXM5, dense BF16); CoreWeave list price; idle power an assumption",
                      true,
                      {{"fp32", flops_per_second{67e12}}, {"int8", flops_per_second{1979e12}}},
                      watts{90}},
          "",  // the device, the uplink and the server are its fabric (plan/simulate.hpp)
          ""};
}

inline std::vector<std::string_view> names() {
  return {"gb200-nvl72-cxl", "h100-ib-cluster", "dgx-h100", "dgx-h100-cxl",
          "dgx-h200",        "dgx-b200",        "dgx-a100", "edge-5g-cloud"};
}

//! A preset's own figures carry their sources; what it leaves at the defaults (no idle power, the full peak
//! at every GEMM shape) is assumed, and listed as a JSON system's would be.
inline system with_defaults_noted(system s) {
  if (s.device.idle_power == watts{}) assume(s.assumed, "device.idle_power", s.device.idle_power);
  if (s.device.gemm == model::gemm_efficiency{}) {  // the full peak at every shape
    assume(s.assumed, "device.gemm.peak_fraction", s.device.gemm.peak_fraction);
    assume(s.assumed, "device.gemm.half_size", s.device.gemm.half_size);
    assume(s.assumed, "device.gemm.ceiling", s.device.gemm.ceiling);
  }
  return s;
}

inline std::optional<system> find(std::string_view name) {
  if (name == "gb200-nvl72-cxl") return with_defaults_noted(gb200_nvl72_cxl());
  if (name == "h100-ib-cluster") return with_defaults_noted(h100_infiniband());
  if (name == "dgx-h100") return with_defaults_noted(dgx_h100());
  if (name == "dgx-h100-cxl") return with_defaults_noted(dgx_h100_cxl());
  if (name == "dgx-h200") return with_defaults_noted(dgx_h200());
  if (name == "dgx-b200") return with_defaults_noted(dgx_b200());
  if (name == "dgx-a100") return with_defaults_noted(dgx_a100());
  if (name == "edge-5g-cloud") return with_defaults_noted(edge_5g_cloud());
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
