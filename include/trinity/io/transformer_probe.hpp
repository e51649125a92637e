#pragma once
//! \file
//! A result of bench/gpu/transformer_probe.py: cuBLAS GEMM rates by shape and GPT layer stacks timed and
//! weighed on one GPU. What the parallel step model is calibrated on (model/parallel_fit.hpp) and checked
//! against (trinity validate).

#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/parallel_fit.hpp>

namespace trinity::io {

struct transformer_probe {
  std::string device, date;
  std::vector<model::gemm_point> gemms;
  std::vector<model::measured_layers> stacks;
  std::vector<double> stored_bytes;  //!< per stack: activation bytes its forward left for the backward

  //! The stacks trained without recomputation: what κ is fitted to (the others are held out).
  [[nodiscard]] std::vector<model::measured_layers> without_recomputation() const {
    std::vector<model::measured_layers> out;
    for (const auto& m : stacks)
      if (m.layout.recompute == model::recomputation::none) out.push_back(m);
    return out;
  }
};

//! From parsed JSON (io::load or io::parse): errors name the JSON path.
inline transformer_probe read_transformer_probe(const json& j) {
  transformer_probe p;
  if (!j.is_object() || !j.contains("context") || !j.contains("gemm") || !j.contains("layers"))
    fail("", "not a transformer_probe.py result (it needs context, gemm and layers)");
  const auto& ctx = j.at("context");
  for (const char* k : {"device", "date"})
    if (!ctx.is_object() || !ctx.contains(k)) fail(std::string("context.") + k, "missing");
  p.device = io::text(ctx.at("device"), "context.device");
  p.date = io::text(ctx.at("date"), "context.date");
  // The probe writes more than trinity reads, so its objects are not held to a key table; every key read is
  // checked present, on an object, before it is read.
  const auto member = [](const json& o, const std::string& at, const char* k) -> const json& {
    if (!o.is_object()) fail(at, "expected an object, not " + kind_of(o));
    if (!o.contains(k)) fail(at + "." + k, "missing");
    return o.at(k);
  };
  for_each(j.at("gemm"), "gemm", [&](const json& g, const std::string& at) {
    p.gemms.push_back({number(member(g, at, "m"), at + ".m"), number(member(g, at, "n"), at + ".n"),
                       number(member(g, at, "k"), at + ".k"),
                       number(member(g, at, "flops_per_second"), at + ".flops_per_second")});
  });
  static constexpr std::string_view policies[] = {"none", "selective", "full"};
  for_each(j.at("layers"), "layers", [&](const json& r, const std::string& at) {
    model::measured_layers m;
    const auto field = [&](const char* k) -> const json& { return member(r, at, k); };
    const std::size_t h = count(field("hidden"), at + ".hidden"), a = count(field("heads"), at + ".heads");
    // The probe's layers are GPT's: MLP 4h, every head its own KV, dropout; no vocabulary is involved.
    m.job.shape = {count(field("layers"), at + ".layers", 1'000'000), h, 4 * h, a, a, 1, false, false};
    try {
      model::validate(m.job.shape);  // whole heads, at least one layer: what the model's formulas divide by
    } catch (const invalid_input& e) {
      fail(at + "." + e.field(), e.problem());
    }
    m.job.sequence = count(field("sequence"), at + ".sequence");
    m.job.global_batch = count(field("micro_batch"), at + ".micro_batch");
    m.layout.micro_batch = m.job.global_batch;
    const auto rc = choice(field("recompute"), at + ".recompute", policies);
    m.layout.recompute = rc == "none"        ? model::recomputation::none
                         : rc == "selective" ? model::recomputation::selective
                                             : model::recomputation::full;
    m.layers = m.job.shape.layers;
    m.measured = seconds{number(field("step_seconds"), at + ".step_seconds")};
    p.stacks.push_back(m);
    p.stored_bytes.push_back(number(field("stored_bytes"), at + ".stored_bytes"));
  });
  if (p.gemms.empty() || p.stacks.empty()) fail("", "holds no GEMMs or no layer stacks");
  return p;
}

//! The activation bytes a probe stack leaves for backward, as the model counts them: every layer's set, less
//! the first layer's input, which the probe allocated before it measured.
inline double modelled_stored_bytes(const model::measured_layers& m) {
  const double s = static_cast<double>(m.job.sequence), b = static_cast<double>(m.layout.micro_batch);
  const double h = static_cast<double>(m.job.shape.hidden);
  return static_cast<double>(m.layers) * model::layer_activation_bytes(m.job, s, s, b, 1, false, m.layout.recompute) -
         2.0 * s * b * h;
}

}  // namespace trinity::io
