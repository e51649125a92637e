#pragma once
//! \file
//! The devices the preset systems are built of, by name, one of each: what a JSON device names as
//! `{"preset": "h100-sxm", "count": 8}` to take every figure and curve a preset system's device has, so that a
//! system written as JSON prices as the preset does. Each figure carries its source; a curve not measured on the
//! device is said to be so where it is set.

#include <optional>
#include <string_view>
#include <vector>

#include <trinity/plan/detail/measured_attention.hpp>
#include <trinity/plan/detail/measured_gemm.hpp>
#include <trinity/plan/detail/measured_serving.hpp>
#include <trinity/plan/device.hpp>

namespace trinity::plan::presets {

//! One GPU of a GB200 NVL72 rack.
inline device_spec gb200_gpu() {
  // 180 PFLOP/s dense FP16/BF16 for 72 GPUs (NVIDIA GB200 NVL72 specifications: 360 PFLOP/s with
  // 2:4 sparsity), so 2.5 PFLOP/s each; about 1.2 kW per GPU (NVIDIA lists the GB200 superchip,
  // two GPUs and a Grace, at up to 2.7 kW).
  // $10.50 per GPU-hour: CoreWeave's on-demand list price of a 4-GPU GB200 NVL72 instance, $42.00/h (2025).
  // FP32 5,760 TFLOP/s, and INT8 720 POPS and FP8 720 PFLOP/s with sparsity, for 72 GPUs (the same
  // table): 80 TFLOP/s, and 5 POPS and 5 PFLOP/s dense, each.
  // Idle: NVIDIA publishes no idle figure for the GB200. 150 W per GPU is an assumption, scaled from the
  // H100 SXM's (below) by the boards' maximum power; measure yours with nvidia-smi (power.draw) while a
  // rank waits on a collective, and put it in a JSON system.
  return {"gb200-gpu",
          flops_per_second{2.5e15},
          watts{1200},
          1,
          10.50,
          "NVIDIA GB200 NVL72 specifications (dense BF16, superchip power / 2); CoreWeave list price; idle power "
          "an assumption",
          true,
          {{"fp32", flops_per_second{80e12}}, {"int8", flops_per_second{5e15}}, {"fp8", flops_per_second{5e15}}},
          watts{150},
          // An assumption: the H100's measured GEMM curve (no Blackwell was lent to sweep).
          detail::measured_h100_gemm,
          {},
          {},
          {"gemm", "attention", "serving"}};  // the H100's GEMM curve; no Blackwell kernel or engine measured
}

//! One B200 of an HGX B200 board, at its 1,000 W configuration.
inline device_spec b200_sxm() {
  // Dense rates of the HGX B200 variant at 1,000 W (NVIDIA's Blackwell architecture technical brief, as
  // glennklockwood.com/garden/processors/B200 tabulates it): BF16 2,250 TFLOP/s, FP8 and INT8 4,500, FP32 80.
  // Not priced (0): give your rate in a JSON system for the cost objective. Idle: no figure published; 130 W is an
  // assumption, the H100's scaled by board power (90 W x 1,000 / 700). Measure yours.
  // No Blackwell kernel was measured here: the H100's GEMM curve and serving constants stand in, and no fused
  // attention curve (the core priced as GEMMs); all three are listed as unmeasured, and intervals widen for them.
  return {"b200-sxm",
          flops_per_second{2.25e15},
          watts{1000},
          1,
          0.0,
          "NVIDIA Blackwell architecture technical brief (HGX B200, 1,000 W, dense); idle power an assumption; the "
          "H100's GEMM curve and serving constants",
          true,
          {{"fp32", flops_per_second{80e12}}, {"int8", flops_per_second{4.5e15}}, {"fp8", flops_per_second{4.5e15}}},
          watts{130},
          detail::measured_h100_gemm,
          detail::fitted_h100_serving,
          {},
          {"gemm", "attention", "serving"}};
}

//! One H100 SXM5 80GB.
inline device_spec h100_sxm() {
  // 989 TFLOP/s dense BF16 and 700 W (NVIDIA H100 Tensor Core GPU data sheet, SXM5).
  // $6.16 per GPU-hour: CoreWeave's on-demand list price of an 8-GPU HGX H100 node, $49.24/h (2025).
  // FP32 67 TFLOP/s; INT8 3,958 TOPS and FP8 3,958 TFLOP/s with sparsity, 1,979 dense each (the same
  // data sheet).
  // Idle: the data sheet gives none. 90 W is an assumption: an H100 SXM reads 60-75 W in nvidia-smi with
  // no context, a little more with clocks held up while it waits inside a collective. Measure yours.
  return {"h100-sxm",
          flops_per_second{989e12},
          watts{700},
          1,
          6.16,
          "NVIDIA H100 data sheet (SXM5, dense BF16); CoreWeave list price; idle power an assumption",
          true,
          {{"fp32", flops_per_second{67e12}}, {"int8", flops_per_second{1979e12}}, {"fp8", flops_per_second{1979e12}}},
          watts{90},
          detail::measured_h100_gemm,  // fitted to cuBLAS on an H100 (plan/detail/measured_gemm.hpp)
          // fitted to published TensorRT-LLM runs (plan/detail/measured_serving.hpp)
          detail::fitted_h100_serving,
          // cuDNN's fused attention, fitted to its published H100 speeds (plan/detail/measured_attention.hpp)
          detail::measured_h100_attention};
}

//! One H200 SXM: the H100's compute (the H200 data sheet gives the same 989 TFLOP/s dense BF16 and 1,979 dense
//! FP8) and up to 700 W. The GEMM and attention curves are the H100's (the same SMs and clocks); its serving
//! calibration is its own where a fit run was on an H200, else the H100's (plan/detail/measured_serving.hpp says
//! which).
inline device_spec h200_sxm() {
  auto d = h100_sxm();
  d.name = "h200-sxm";
  d.source =
      "NVIDIA H200 data sheet (SXM: dense BF16 and FP8 as the H100's, 700 W); list price and idle power "
      "as dgx-h100's (" +
      d.source + ")";
  d.serving = detail::fitted_h200_serving;
  d.unmeasured = {"gemm", "attention"};  // the H100's curves: the same SMs and clocks, not swept on an H200
  if (detail::fitted_h200_serving == detail::fitted_h100_serving) d.unmeasured.emplace_back("serving");
  return d;
}

//! One A100 SXM 80GB.
inline device_spec a100_sxm_80gb() {
  // 312 TFLOP/s dense BF16, 19.5 TFLOP/s FP32, 624 TOPS dense INT8, 400 W (NVIDIA A100 Tensor Core GPU data
  // sheet, SXM 80GB). Not priced (0): give your rate in a JSON system for the cost objective. Idle: no data
  // sheet figure; 60 W is an assumption, scaled from the H100's by board power. Measure yours.
  return {"a100-sxm-80gb",
          flops_per_second{312e12},
          watts{400},
          1,
          0.0,
          "NVIDIA A100 data sheet (SXM 80GB, dense BF16); idle power an assumption",
          true,
          {{"fp32", flops_per_second{19.5e12}}, {"int8", flops_per_second{624e12}}},
          watts{60},
          // No A100 was lent to sweep: fitted to published A100 runs (plan/detail/measured_gemm.hpp).
          detail::fitted_a100_gemm,
          // Fitted to published TensorRT-LLM runs (plan/detail/measured_serving.hpp).
          detail::fitted_a100_serving,
          {},
          {"gemm", "attention"}};  // the GEMM curve fitted to whole steps, not swept; no attention kernel measured
}

//! An NVIDIA Jetson Orin Nano 8GB module: a camera's compute.
inline device_spec jetson_orin_nano() {
  // NVIDIA Jetson Orin Nano 8GB module data sheet: 40 TOPS INT8 with 2:4 sparsity, so 20 TOPS dense,
  // at its 15 W mode; FP16 at half the INT8 rate (Ampere tensor cores: 32 of them at 625 MHz, 512 dense
  // FP16 FLOPs a clock each, 10 TFLOP/s). Owned, not rented: no price per hour.
  // Idle: 5 W is an assumption for the module awake and waiting on its uplink (its data sheet gives the
  // 7 W and 15 W power modes, not an idle draw); tegrastats reports your board's. No curve is measured: a
  // GEMM is priced at the full peak (listed as assumed).
  return {"jetson-orin-nano",
          flops_per_second{10e12},
          watts{15},
          1,
          0.0,
          "NVIDIA Jetson Orin Nano 8GB data sheet (15 W mode); idle power an assumption",
          false,
          {{"int8", flops_per_second{20e12}}},
          watts{5},
          {},
          {},
          {},
          {"gemm", "attention", "serving"}};
}

//! The device presets' names, in the order `trinity presets` lists them.
inline std::vector<std::string_view> device_names() {
  return {"gb200-gpu", "b200-sxm", "h100-sxm", "h200-sxm", "a100-sxm-80gb", "jetson-orin-nano"};
}

//! The device preset named `name` (one device: a system sets its count), or nullopt.
inline std::optional<device_spec> find_device(std::string_view name) {
  if (name == "gb200-gpu") return gb200_gpu();
  if (name == "b200-sxm") return b200_sxm();
  if (name == "h100-sxm") return h100_sxm();
  if (name == "h200-sxm") return h200_sxm();
  if (name == "a100-sxm-80gb") return a100_sxm_80gb();
  if (name == "jetson-orin-nano") return jetson_orin_nano();
  return std::nullopt;
}

}  // namespace trinity::plan::presets
