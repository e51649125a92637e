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
#include <trinity/plan/detail/measured_gemm.hpp>
#include <trinity/plan/detail/measured_attention.hpp>
#include <trinity/plan/detail/measured_serving.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::plan {

//! The precisions a device may list a rate for and a workload may run at.
inline constexpr std::string_view precisions[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"};

//! Whether `name` is one of plan::precisions.
inline bool known_precision(std::string_view name) {
  for (const auto p : precisions)
    if (p == name) return true;
  return false;
}

struct device_spec {
  std::string name;
  flops_per_second compute{};  //!< sustained dense rate at bf16, and at any precision not listed below
  watts power{};               //!< board power while computing
  std::size_t count = 1;       //!< devices in the data-parallel group
  double price_per_hour = 0;   //!< dollars per device-hour (rent, or amortised purchase); 0: not priced
  std::string source;
  bool gpu = false;  //!< its gradient codecs run as GPU kernels (plan::gpu_codecs)
  //! Dense rates at other precisions ("fp32", "int8", ...), where they differ from `compute`.
  std::vector<std::pair<std::string, flops_per_second>> compute_by_precision = {};
  //! Board power while it waits (on the network, a tier, the other end of a link): what a step's idle
  //! share costs in energy. At most `power`.
  watts idle_power{};
  //! The share of `compute` a matrix multiply gets by its shape (model/gemm.hpp): what the parallel step
  //! model prices GEMMs at. The default, the full peak at every shape, is an upper bound.
  model::gemm_efficiency gemm{};
  //! What a serving engine on this device costs beyond its bytes and FLOPs (model/serving.hpp). The default, the
  //! data sheet's ideal, is an upper bound on speed.
  model::serving_calibration serving{};
  //! The fused attention kernel's curve (model/fused_attention.hpp): what flash_attention costs in the parallel
  //! step model. The default, not measured, prices the attention core as the GEMM curve's batched GEMMs.
  model::fused_attention_efficiency attention{};

  //! The device's own rate for this precision, or null where it lists none.
  [[nodiscard]] const flops_per_second* listed_rate(std::string_view precision) const {
    for (const auto& [precision_name, r] : compute_by_precision)
      if (precision_name == precision) return &r;
    return nullptr;
  }
  //! Whether the device has a rate of its own for this precision (else rate() gives `compute`).
  [[nodiscard]] bool lists_rate(std::string_view precision) const { return listed_rate(precision) != nullptr; }
  //! The rate at which work of this precision runs.
  [[nodiscard]] flops_per_second rate(std::string_view precision) const {
    const auto* r = listed_rate(precision);
    return r ? *r : compute;
  }
};

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
// "-1 GB must be positive": the value as the user would write it, then the rule.
template <class Q>
std::string shown(Q v) {
  if constexpr (std::is_arithmetic_v<Q>)
    return units::detail::format_number(static_cast<double>(v));
  else
    return to_string(v);
}
template <class Q>
double raw(Q v) {
  if constexpr (std::is_arithmetic_v<Q>)
    return static_cast<double>(v);
  else
    return v.value();
}
template <class Q>
void require_positive(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x > 0 && trinity::detail::is_finite(x), field, shown(v) + " must be positive and finite");
}
template <class Q>
void require_non_negative(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x >= 0 && trinity::detail::is_finite(x), field,
                           shown(v) + " must be finite and not negative");
}
//! A precision name, refused with the nearest known one.
inline void require_precision(std::string_view name, const std::string& field) {
  if (known_precision(name)) return;
  // Appended, not "\"" + std::string(name): GCC 12 at -O3 warns falsely on that (-Wrestrict, bug 105651).
  std::string why(1, '"');
  why.append(name).append("\" is not a precision").append(trinity::detail::suggestion(name, precisions));
  throw invalid_input(field, why);
}

inline void validate(const device_spec& d, const std::string& at) {
  require_positive(d.compute, at + ".compute");
  for (const auto& [name, r] : d.compute_by_precision) {
    require_precision(name, at + ".compute." + name);
    require_positive(r, at + ".compute." + name);
  }
  require_non_negative(d.power, at + ".power");
  require_non_negative(d.idle_power, at + ".idle_power");
  trinity::detail::require(d.idle_power <= d.power, at + ".idle_power",
                           to_string(d.idle_power) + " is more than the power while computing (" + to_string(d.power) +
                               "); a device waiting draws less than one working");
  require_non_negative(d.price_per_hour, at + ".price_per_hour");
}

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
  model::validate(s.device.gemm, "device.gemm");
  if (s.server) {
    trinity::detail::require(!s.server->name.empty(), "server.name", "the server needs a name");
    detail::validate(*s.server, "server");
  }
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
inline bool priced(const system& s) {
  bool any =
      s.device.price_per_hour > 0 || s.interconnect.price_per_gb > 0 || (s.server && s.server->price_per_hour > 0);
  for (const auto& t : s.tiers) any |= t.price_per_gb_hour > 0;
  return any;
}

//! "$0.0123": enough digits to tell plans apart.
inline std::string format_dollars(double d) { return "$" + units::detail::format_number(d); }

namespace presets {

//! A GB200 NVL72 rack: 72 GPUs on NVLink 5, each with HBM3e, half a Grace's LPDDR5X over NVLink-C2C,
//! and a CXL capacity pool as tier-2 (the CXL report's §6.3 hierarchy).
inline system gb200_nvl72_cxl() {
  auto grace = tier_of(tiers::grace_lpddr5x::descriptor);
  grace.capacity = grace.capacity / 2.0;  // one Grace serves two GPUs in a GB200 superchip (CXL report L773-775)
  grace.source += "; halved: one Grace per two GPUs";
  return {"gb200-nvl72-cxl",
          // 180 PFLOP/s dense FP16/BF16 for 72 GPUs (NVIDIA GB200 NVL72 specifications: 360 PFLOP/s with
          // 2:4 sparsity), so 2.5 PFLOP/s each; about 1.2 kW per GPU (NVIDIA lists the GB200 superchip,
          // two GPUs and a Grace, at up to 2.7 kW).
          // $10.50 per GPU-hour: CoreWeave's on-demand list price of a 4-GPU GB200 NVL72 instance, $42.00/h (2025).
          // FP32 5,760 TFLOP/s, and INT8 720 POPS and FP8 720 PFLOP/s with sparsity, for 72 GPUs (the same
          // table): 80 TFLOP/s, and 5 POPS and 5 PFLOP/s dense, each.
          // Idle: NVIDIA publishes no idle figure for the GB200. 150 W per GPU is an assumption, scaled from the
          // H100 SXM's (below) by the boards' maximum power; measure yours with nvidia-smi (power.draw) while a
          // rank waits on a collective, and put it in a JSON system.
          {"gb200-gpu",
           flops_per_second{2.5e15},
           watts{1200},
           72,
           10.50,
           "NVIDIA GB200 NVL72 specifications (dense BF16, superchip power / 2); CoreWeave list price; idle power "
           "an assumption",
           true,
           {{"fp32", flops_per_second{80e12}}, {"int8", flops_per_second{5e15}}, {"fp8", flops_per_second{5e15}}},
           watts{150},
           // An assumption: the H100's measured GEMM curve (no Blackwell was lent to sweep).
           detail::measured_h100_gemm},
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
          // 989 TFLOP/s dense BF16 and 700 W (NVIDIA H100 Tensor Core GPU data sheet, SXM5).
          // $6.16 per GPU-hour: CoreWeave's on-demand list price of an 8-GPU HGX H100 node, $49.24/h (2025).
          // FP32 67 TFLOP/s; INT8 3,958 TOPS and FP8 3,958 TFLOP/s with sparsity, 1,979 dense each (the same
          // data sheet).
          // Idle: the data sheet gives none. 90 W is an assumption: an H100 SXM reads 60-75 W in nvidia-smi with
          // no context, a little more with clocks held up while it waits inside a collective. Measure yours.
          {"h100-sxm",
           flops_per_second{989e12},
           watts{700},
           64,
           6.16,
           "NVIDIA H100 data sheet (SXM5, dense BF16); CoreWeave list price; idle power an assumption",
           true,
           {{"fp32", flops_per_second{67e12}}, {"int8", flops_per_second{1979e12}}, {"fp8", flops_per_second{1979e12}}},
           watts{90},
           detail::measured_h100_gemm,  // fitted to cuBLAS on an H100 (plan/detail/measured_gemm.hpp)
           // fitted to published TensorRT-LLM runs (plan/detail/measured_serving.hpp)
           detail::fitted_h100_serving,
           // cuDNN's fused attention, fitted to its published H100 speeds (plan/detail/measured_attention.hpp)
           detail::measured_h100_attention},
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
  auto device = h100_infiniband().device;  // the same H100 SXM: data sheet, list price, idle power assumption
  device.count = 8;
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

//! One DGX H200: 8 H200 SXM GPUs on NVLink 4 through NVSwitch. The H100's compute (the H200 data sheet gives the
//! same 989 TFLOP/s dense BF16 and 1,979 dense FP8), 141 GB (binary) of HBM3e at 4.8 TB/s, of which a program
//! gets 150.1e9 bytes (tiers::h200_hbm3e), up to 700 W.
//! The GEMM curve is the H100's (the same SMs and clocks); its serving calibration is its own where a fit run
//! was on an H200, else the H100's (plan/detail/measured_serving.hpp says which).
inline system dgx_h200() {
  auto s = dgx_h100();
  s.name = "dgx-h200";
  s.device.name = "h200-sxm";
  s.device.source =
      "NVIDIA H200 data sheet (SXM: dense BF16 and FP8 as the H100's, 700 W); list price and idle power "
      "as dgx-h100's (" +
      s.device.source + ")";
  s.tiers.front() = tier_of(tiers::h200_hbm3e::descriptor);
  s.device.serving = detail::fitted_h200_serving;  // plan/detail/measured_serving.hpp
  return s;
}

//! One DGX A100 (640 GB): 8 A100 SXM 80GB GPUs on NVLink 3 through NVSwitch, host DDR4 below. As dgx-h100,
//! its interconnect is the scale-up domain; the node's eight HDR 200 Gb/s InfiniBand ports (DGX A100 data
//! sheet) join nodes: its scale-out link.
inline system dgx_a100() {
  // 312 TFLOP/s dense BF16, 19.5 TFLOP/s FP32, 624 TOPS dense INT8, 400 W (NVIDIA A100 Tensor Core GPU data
  // sheet, SXM 80GB). Not priced (0): give your rate in a JSON system for the cost objective. Idle: no data
  // sheet figure; 60 W is an assumption, scaled from the H100's by board power. Measure yours.
  device_spec a100{"a100-sxm-80gb",
                   flops_per_second{312e12},
                   watts{400},
                   8,
                   0.0,
                   "NVIDIA A100 data sheet (SXM 80GB, dense BF16); idle power an assumption",
                   true,
                   {{"fp32", flops_per_second{19.5e12}}, {"int8", flops_per_second{624e12}}},
                   watts{60},
                   // No A100 was lent to sweep: fitted to published A100 runs (plan/detail/measured_gemm.hpp).
                   detail::fitted_a100_gemm,
                   // Fitted to published TensorRT-LLM runs (plan/detail/measured_serving.hpp).
                   detail::fitted_a100_serving};
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
          // NVIDIA Jetson Orin Nano 8GB module data sheet: 40 TOPS INT8 with 2:4 sparsity, so 20 TOPS dense,
          // at its 15 W mode; FP16 at half the INT8 rate (Ampere tensor cores: 32 of them at 625 MHz, 512 dense
          // FP16 FLOPs a clock each, 10 TFLOP/s). Owned, not rented: no price per hour.
          // Idle: 5 W is an assumption for the module awake and waiting on its uplink (its data sheet gives the
          // 7 W and 15 W power modes, not an idle draw); tegrastats reports your board's.
          {"jetson-orin-nano",
           flops_per_second{10e12},
           watts{15},
           1,
           0.0,
           "NVIDIA Jetson Orin Nano 8GB data sheet (15 W mode); idle power an assumption",
           false,
           {{"int8", flops_per_second{20e12}}},
           watts{5}},
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
  return {"gb200-nvl72-cxl", "h100-ib-cluster", "dgx-h100", "dgx-h100-cxl", "dgx-h200", "dgx-a100", "edge-5g-cloud"};
}

//! A preset's own figures carry their sources; what it leaves at the defaults (no idle power, the full peak
//! at every GEMM shape) is assumed, and listed as a JSON system's would be.
inline system with_defaults_noted(system s) {
  const model::gemm_efficiency full_peak{};
  if (s.device.idle_power == watts{}) assume(s.assumed, "device.idle_power", s.device.idle_power);
  if (s.device.gemm.peak_fraction == full_peak.peak_fraction && s.device.gemm.half_size == full_peak.half_size &&
      s.device.gemm.ceiling == full_peak.ceiling) {
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
  if (name == "dgx-a100") return with_defaults_noted(dgx_a100());
  if (name == "edge-5g-cloud") return with_defaults_noted(edge_5g_cloud());
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
