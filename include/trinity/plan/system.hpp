#pragma once
//! \file
//! A system as the planner sees it: identical accelerators, the memory tiers
//! each one can use (tier 0 is its own memory; the others take offloaded
//! state), and the interconnect its data-parallel collectives run over. Built
//! from a preset or from a JSON description (tools/trinity/plan_command.cpp);
//! validate() names the field and the rule: `tiers[2].capacity: must be positive`.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

namespace trinity::plan {

struct device_spec {
  std::string name;
  flops_per_second compute{};  //!< sustained dense bf16 rate the training step runs at
  watts power{};               //!< board power while computing
  std::size_t count = 1;       //!< devices in the data-parallel group
  std::string source;
};

struct tier_spec {
  std::string name;
  bytes capacity{};             //!< per device
  bytes_per_second bandwidth{};  //!< from the device's point of view
  seconds latency{};
  joules_per_byte energy{};
  std::string source;
};

struct link_spec {
  std::string name;
  bytes_per_second bandwidth{};  //!< per device, per direction
  seconds latency{};
  joules_per_byte energy{};
  std::string source;
};

struct system {
  std::string name;
  device_spec device;
  std::vector<tier_spec> tiers;  //!< [0] the device's own memory, then slower tiers offloaded state may use
  link_spec interconnect;
};

namespace detail {
// "-1 GB must be positive": the value as the user would write it, then the rule.
template <class Q>
std::string shown(Q v) {
  if constexpr (std::is_arithmetic_v<Q>) return units::detail::format_number(static_cast<double>(v));
  else return to_string(v);
}
template <class Q>
double raw(Q v) {
  if constexpr (std::is_arithmetic_v<Q>) return static_cast<double>(v);
  else return v.value();
}
template <class Q>
void require_positive(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x > 0 && trinity::detail::is_finite(x), field, shown(v) + " must be positive and finite");
}
template <class Q>
void require_non_negative(Q v, const std::string& field) {
  const double x = raw(v);
  trinity::detail::require(x >= 0 && trinity::detail::is_finite(x), field, shown(v) + " must be finite and not negative");
}
}  // namespace detail

//! Throws invalid_input naming the path of the first field that cannot work.
inline void validate(const system& s) {
  trinity::detail::require(!s.name.empty(), "name", "a system needs a name");
  detail::require_positive(s.device.compute, "device.compute");
  detail::require_non_negative(s.device.power, "device.power");
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
  }
  detail::require_positive(s.interconnect.bandwidth, "interconnect.bandwidth");
  detail::require_non_negative(s.interconnect.latency, "interconnect.latency");
  detail::require_non_negative(s.interconnect.energy, "interconnect.energy");
}

inline tier_spec from(const tier_descriptor& d) {
  return {std::string(d.name), d.capacity, d.bandwidth, d.latency, d.energy, std::string(d.source)};
}
inline link_spec from(const link_descriptor& d) {
  return {std::string(d.name), d.bandwidth, d.latency, d.energy, std::string(d.source)};
}

namespace presets {

//! A GB200 NVL72 rack: 72 GPUs on NVLink 5, each with HBM3e, half a Grace's LPDDR5X over NVLink-C2C,
//! and a CXL capacity pool as tier-2 (the CXL report's §6.3 hierarchy).
inline system gb200_nvl72_cxl() {
  auto grace = from(tiers::grace_lpddr5x::descriptor);
  grace.capacity = grace.capacity / 2.0;  // one Grace serves two GPUs in a GB200 superchip (CXL report L773-775)
  grace.source += "; halved: one Grace per two GPUs";
  return {"gb200-nvl72-cxl",
          // 180 PFLOP/s dense FP16/BF16 for 72 GPUs (NVIDIA GB200 NVL72 specifications: 360 PFLOP/s with
          // 2:4 sparsity), so 2.5 PFLOP/s each; about 1.2 kW per GPU (NVIDIA lists the GB200 superchip,
          // two GPUs and a Grace, at up to 2.7 kW).
          {"gb200-gpu", flops_per_second{2.5e15}, watts{1200}, 72,
           "NVIDIA GB200 NVL72 specifications (dense BF16, superchip power / 2)"},
          {from(tiers::gb200_hbm3e::descriptor), grace, from(tiers::cxl_capacity::descriptor)},
          from(links::nvlink5_x18::descriptor)};
}

//! 64 H100 SXM GPUs, 8 per node, data parallel across nodes over 400G InfiniBand (one NIC per GPU),
//! host DDR5 as the offload tier.
inline system h100_infiniband() {
  return {"h100-ib-cluster",
          // 989 TFLOP/s dense BF16 and 700 W (NVIDIA H100 Tensor Core GPU data sheet, SXM5).
          {"h100-sxm", flops_per_second{989e12}, watts{700}, 64, "NVIDIA H100 data sheet (SXM5, dense BF16)"},
          {from(tiers::h100_hbm3::descriptor), from(tiers::host_ddr::descriptor)},
          from(links::infiniband_400g::descriptor)};
}

inline std::vector<std::string_view> names() { return {"gb200-nvl72-cxl", "h100-ib-cluster"}; }

inline std::optional<system> find(std::string_view name) {
  if (name == "gb200-nvl72-cxl") return gb200_nvl72_cxl();
  if (name == "h100-ib-cluster") return h100_infiniband();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
