#pragma once
//! \file
//! Gradient codecs the planner may choose from when no calibrated profile is
//! given. On a CPU: the figures measured by trinity-bench-compress on the
//! 2-core CI machine (docs/compression.md, "Speed"), with decode taken as fast
//! as encode where only encode was measured. On a GPU: the codecs this library
//! runs as kernels (backends/cuda/codecs.cuh), at the rates
//! trinity-bench-cuda-codecs measured on an H100 (bench/results/). `trinity
//! calibrate --out profile.json` measures the machine at hand instead, and
//! `trinity plan --profile` reads it.

#include <vector>

#include <trinity/model/compression.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

//! "identity" is the gradient as the trainer holds it; every other ratio is against fp32.
inline std::vector<model::compressor_cost> default_codecs() {
  const auto rate = [](double gbps) { return bytes_per_second{gbps * 1e9}; };
  return {
      {"identity", 1.0, rate(1e3), rate(1e3), 0.0, true},
      {"bf16", 2.0, rate(12.4), rate(12.4), 0.0017, false},
      {"int8-ef", 3.88, rate(23.1), rate(23.1), 0.0065, false},
      {"sign-ef", 28.4, rate(38.0), rate(38.0), 0.60, false},
      {"sampled-topk-1%-ef", 50.0, rate(7.2), rate(7.2), 0.96, false, true},
      {"powersgd-4", 512.0, rate(1.7), rate(1.7), 0.999, false, true},
  };
}

//! The codecs with GPU kernels, at an H100's rates: trinity-bench-cuda-codecs on a 256 MiB fp32 tensor
//! (bench/results/cuda_codecs_h100.json, medians of 3; a device-to-device copy of it ran at 1.32 TB/s of
//! input). Ratios and errors are the CPU codecs', whose bytes the kernels reproduce exactly. On a GB200,
//! whose HBM3e is faster, these are conservative.
inline std::vector<model::compressor_cost> gpu_codecs() {
  const auto rate = [](double tbps) { return bytes_per_second{tbps * 1e12}; };
  return {
      {"identity", 1.0, rate(1e3), rate(1e3), 0.0, true},
      {"bf16", 2.0, rate(1.78), rate(1.71), 0.0017, false},
      {"int8-ef", 3.88, rate(1.37), rate(2.00), 0.0065, false},
  };
}

//! The codecs a system's devices would run: GPU kernels on a GPU, the CPU codecs elsewhere.
inline std::vector<model::compressor_cost> default_codecs_for(const system& s) {
  return s.device.gpu ? gpu_codecs() : default_codecs();
}

}  // namespace trinity::plan
