#pragma once
//! \file
//! The fused attention kernel a training workload (or a published run) names, as the parallel step model prices
//! it on a system's device. Two runs of one model differ by more than their layouts when one runs cuDNN's fused
//! attention and the other FlashAttention-2, whose core runs well below cuDNN's rate on an H100 (Shah et al.
//! 2024, Figures 5 and 6). Each kernel measured on the H100
//! (bench/published/attention-kernels.json) is fitted into plan/detail/measured_attention.hpp by trinity-docgen;
//! a kernel added there is known here by its name. An empty name keeps the device's own curve (the presets':
//! cuDNN's where measured).

#include <string>
#include <string_view>

#include <trinity/error.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/plan/detail/measured_attention.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

namespace detail {
//! The measured kernel named `kernel`, or null.
inline const measured_attention_kernel* measured_attention_kernel_named(std::string_view kernel) {
  for (const auto& k : measured_h100_attention_kernels)
    if (k.name == kernel) return &k;
  return nullptr;
}
}  // namespace detail

//! "cudnn, flash-attention-2": the kernels there are curves for, for an error to list.
inline std::string attention_kernel_names() {
  std::string out;
  for (const auto& k : detail::measured_h100_attention_kernels) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

//! Throws invalid_input at `field` unless `kernel` is empty or a measured kernel's name.
inline void require_attention_kernel(std::string_view kernel, const std::string& field) {
  if (kernel.empty() || detail::measured_attention_kernel_named(kernel)) return;
  throw invalid_input(
      field, "\"" + std::string(kernel) + "\" is no measured kernel; the kernels are " + attention_kernel_names());
}

//! Throws invalid_input at `field` where a kernel is named for a core that runs unfused: a workload's or a run's.
inline void require_fused_attention(std::string_view kernel, bool flash_attention, const std::string& field) {
  trinity::detail::require(kernel.empty() || flash_attention, field,
                           "names a fused kernel, but flash_attention is false: set it true, or drop the kernel");
}

//! The name of the kernel system `s`'s device prices flash_attention with by default: the measured kernel whose
//! curve it carries, or what stands in where none was measured. What a workload that names none assumes.
inline std::string own_attention_kernel(const system& s) {
  for (const auto& k : detail::measured_h100_attention_kernels)
    if (k.curve == s.device.attention) return std::string(k.name);
  return s.device.attention.measured() ? "the device's own curve" : "none measured (the GEMM bound)";
}

//! The curve of `kernel` on system `s`'s device: the device's own where `kernel` is empty. The kernels were
//! measured on an H100, so only a device priced with the H100's measured curve (the H100 and the H200, the same
//! chip) takes another; any other is refused at `field`.
inline model::fused_attention_efficiency attention_kernel_curve(const system& s, std::string_view kernel,
                                                                const std::string& field) {
  if (kernel.empty()) return s.device.attention;
  require_attention_kernel(kernel, field);
  trinity::detail::require(s.device.attention == detail::measured_h100_attention, field, [&] {
    return "no attention kernel was measured on " + s.device.name +
           "; leave it out to price the core with the device's own curve";
  });
  return detail::measured_attention_kernel_named(kernel)->curve;
}

}  // namespace trinity::plan
