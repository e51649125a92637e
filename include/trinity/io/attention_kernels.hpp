#pragma once
//! \file
//! Published fused-attention kernel speeds, read strictly (bench/published/attention-kernels.json), and each
//! kernel's curve fitted (model::fit_fused_attention): what the parallel step model prices flash_attention with.
//! A kernel names the device it ran on (a preset device's name) and its points: pass (forward, backward),
//! causal, head_dim, sequence and tflops (the kernel's own FLOP count per second). trinity-docgen writes each
//! kernel's fit on the H100 into plan/detail/measured_attention.hpp, where the H100 and H200 presets take the
//! cudnn kernel's and a workload's attention_kernel names another (plan/attention_kernel.hpp), and fails its check
//! when the file and the header disagree.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/fused_attention.hpp>

namespace trinity::io {

struct attention_kernel {
  std::string name, device, source, precision;
  std::vector<model::attention_point> points;
};

namespace detail {
inline constexpr key attention_file_keys[] = {{"about"}, {"sources", required}, {"kernels", required}};
inline constexpr key attention_kernel_keys[] = {
    {"name", required}, {"device", required}, {"source", required}, {"precision", required},
    {"about"},          {"points", required}};
inline constexpr key attention_point_keys[] = {
    {"pass", required}, {"causal", required}, {"head_dim", required}, {"sequence", required}, {"tflops", required}};
inline constexpr std::string_view attention_passes[] = {"forward", "backward"};
inline constexpr std::string_view attention_precisions[] = {"bf16", "fp16"};
}  // namespace detail

//! From parsed JSON (io::load or io::parse): errors name the JSON path.
inline std::vector<attention_kernel> read_attention_kernels(const json& j) {
  const object o(j, "", detail::attention_file_keys, "a file of fused-attention kernel measurements");
  if (!o.at("sources").is_object()) fail("sources", "expected an object of source names and their citations");
  std::vector<attention_kernel> out;
  for_each(o.at("kernels"), "kernels", [&](const json& k, const std::string& path) {
    const object x(k, path, detail::attention_kernel_keys, "a kernel");
    attention_kernel a{x.text("name"),
                       x.text("device"),
                       x.text("source"),
                       choice(x.at("precision"), x.path("precision"), detail::attention_precisions),
                       {}};
    if (!o.at("sources").contains(a.source))
      fail(x.path("source"), "\"" + a.source + "\" is none of the file's sources");
    for (const auto& b : out)
      if (b.name == a.name && b.device == a.device)
        fail(x.path("name"), "\"" + a.name + "\" on " + a.device + " is given twice");
    for_each(x.at("points"), x.path("points"), [&](const json& p, const std::string& at) {
      const object q(p, at, detail::attention_point_keys, "a measured point");
      model::attention_point m;
      m.backward = choice(q.at("pass"), q.path("pass"), detail::attention_passes) == "backward";
      m.causal = q.boolean("causal");
      m.head_dim = static_cast<double>(q.count("head_dim", 1024));
      m.sequence = static_cast<double>(q.count("sequence", std::uint64_t{1} << 24));
      m.flops_per_second = q.number("tflops") * 1e12;
      if (m.head_dim < 1 || m.sequence < 1) fail(at, "head_dim and sequence must each be at least 1");
      if (!(m.flops_per_second > 0) || !std::isfinite(m.flops_per_second))
        fail(q.path("tflops"), "must be positive and finite (TFLOP/s)");
      for (const auto& n : a.points)
        if (n.backward == m.backward && n.causal == m.causal && n.head_dim == m.head_dim && n.sequence == m.sequence)
          fail(at, "measured twice: the same pass, mask, head_dim and sequence");
      a.points.push_back(m);
    });
    if (a.points.empty()) fail(x.path("points"), "holds no measured point; a kernel is its measurements");
    out.push_back(std::move(a));
  });
  if (out.empty()) fail("kernels", "no kernel");
  return out;
}

//! The kernel `name` measured on `device`, or invalid_input naming both.
inline const attention_kernel& find_attention_kernel(const std::vector<attention_kernel>& kernels,
                                                     std::string_view name, std::string_view device) {
  for (const auto& k : kernels)
    if (k.name == name && k.device == device) return k;
  throw invalid_input("kernels", "no kernel \"" + std::string(name) + "\" measured on " + std::string(device));
}

}  // namespace trinity::io
