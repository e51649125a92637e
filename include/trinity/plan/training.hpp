#pragma once
//! \file
//! What one data-parallel training step costs each rank under a plan: a
//! gradient codec, a ZeRO stage, an offload tier for optimizer states (or
//! none) and activation recomputation on or off. The figures:
//!  - compute 6·Ψ·T FLOPs per rank for the T tokens of its micro-batches (the
//!    global batch over the ranks), 8·Ψ·T with full activation
//!    recomputation (one more forward; Kaplan et al. 2020, Korthikanti et al. 2022);
//!  - activations 34·s·b·h bytes per layer in 16-bit training, or 2·s·b·h per
//!    layer plus one layer's 34·s·b·h when recomputed (Korthikanti et al. 2022,
//!    "Reducing Activation Recomputation in Large Transformer Models", §4.1,
//!    attention scores not stored, as with flash attention);
//!  - states per rank and traffic per step from model/sharding.hpp (ZeRO), the
//!    gradient part of the traffic shrunk by the codec, at ring α-β times
//!    (model/collectives.hpp) over the link the ranks span (the interconnect
//!    inside a scale-up domain, the scale-out link past it); a codec whose frames
//!    cannot be summed on the way (top-k, PowerSGD) all-gathers every rank's
//!    frame instead, (n − 1) frames sent per rank; codec time is what those
//!    collectives encode and decode per rank (DDP's ring decodes (2n − 1)/n of
//!    the gradient, a gather n gradients' worth);
//!  - offload traffic (gradient shard down, parameter shard back) over the
//!    offload tier's bandwidth;
//!  - nothing overlaps: the step time is the sum, an upper bound;
//!  - energy: the device's power while it computes and codes, its idle power
//!    while it waits on the interconnect and the offload tier, plus their
//!    energy per byte moved;
//!  - dollars: the device (and any priced tier) rented for the step, plus
//!    metered interconnect bytes (plan::dollars).

#include <cstddef>
#include <string>
#include <vector>

#include <trinity/model/collectives.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/resources/resource_vector.hpp>

namespace trinity::plan {

struct training_plan {
  std::size_t codec = 0;         //!< index into the codec list
  int stage = 0;                 //!< ZeRO stage 0-3
  std::size_t offload_tier = 0;  //!< 0: optimizer states stay on the device; else the tier they go to
  bool recompute = false;

  friend bool operator==(const training_plan&, const training_plan&) = default;
};

struct training_cost {
  resource_vector total;          //!< compute, interconnect bytes, device bytes, energy, step time
  std::vector<bytes> tier_bytes;  //!< bytes each tier holds per device (peak)
  bytes link_bytes{};             //!< bytes each rank sends over the interconnect per step
  bytes offload_bytes{};          //!< bytes each rank moves to and from its offload tier per step
  std::string link;               //!< the link the gradient reduction crosses (plan::collective_link_for)
  seconds compute_time{}, comm_time{}, codec_time{}, offload_time{};
  bytes activations{};
  double error = 0;    //!< the codec's relative error
  double dollars = 0;  //!< rent of the device and its tiers for the step, and metered bytes
};

namespace detail {
inline bytes activation_bytes(const training_workload& w, bool recompute) {
  const double sbh = static_cast<double>(w.sequence) * static_cast<double>(w.batch) * static_cast<double>(w.hidden);
  const double layers = static_cast<double>(w.layers);
  return bytes{recompute ? 2.0 * sbh * layers + 34.0 * sbh : 34.0 * sbh * layers};
}
//! Bytes on the wire per gradient element: the trainer's own width, or the codec's (ratios are against fp32).
inline double wire_bytes(const model::compressor_cost& c, const model::state_bytes& b) {
  return model::is_uncoded(c) ? b.gradient : 4.0 / c.ratio;
}
}  // namespace detail

inline training_cost price(const system& s, const training_workload& w, const model::compressor_cost& codec,
                           const training_plan& p) {
  const std::size_t n = w.ranks(s);
  const double psi = w.parameters;
  const auto& b = w.precision;
  training_cost c;
  c.tier_bytes.assign(s.tiers.size(), bytes{});

  // Every micro-batch of the step (global_batch over the ranks), as the layout search prices it.
  const double micro_batches = static_cast<double>(w.micro_batches(n));
  const flops work{(p.recompute ? 8.0 : 6.0) * psi * w.tokens_per_rank() * micro_batches};
  c.compute_time = work / s.device.rate(w.compute_precision);

  const bool offload = p.offload_tier != 0;
  const auto states = model::zero_memory_per_rank(psi, n, p.stage, b, offload);
  c.activations = detail::activation_bytes(w, p.recompute);
  // Stage 3 gathers one layer's parameters at a time beside its shard.
  const bytes gathered{p.stage == 3 ? psi * b.parameter / static_cast<double>(w.layers) : 0.0};
  c.tier_bytes[0] = states.total() + c.activations + gathered;
  if (offload) c.tier_bytes[p.offload_tier] = states.offloaded;

  // The link the reduction crosses: the scale-out link once the ranks outgrow a scale-up domain.
  const auto& over = collective_link_for(s, n);
  const model::collective_link link{over.latency, over.collective_rate(), {}};
  const bytes params{psi * b.parameter};
  const double share = static_cast<double>(n - 1) / static_cast<double>(n);
  const double gathers = model::parameter_gathers(p.stage, micro_batches);
  const auto g = model::gradient_reduction(n, psi, b.gradient, p.stage, codec, link);
  c.link_bytes = g.sent + share * gathers * params;
  c.comm_time = g.comm + gathers * model::ring_all_gather_time(n, params, link);
  c.link = over.name;
  c.codec_time = g.coding;
  c.offload_bytes = model::offload_traffic_per_step(psi, n, p.stage, b, offload);
  if (offload) {
    const auto& t = s.tiers[p.offload_tier];
    c.offload_time = t.latency + c.offload_bytes / t.bandwidth;
  }
  c.error = codec.relative_error;

  c.total.compute = work;
  c.total.bandwidth = c.link_bytes;
  c.total.memory = c.tier_bytes[0];
  c.total.time = c.compute_time + c.comm_time + c.codec_time + c.offload_time;
  c.total.energy = (c.compute_time + c.codec_time) * s.device.power +
                   (c.comm_time + c.offload_time) * s.device.idle_power + c.link_bytes * over.energy +
                   (offload ? c.offload_bytes * s.tiers[p.offload_tier].energy : joules{});
  c.dollars = dollars(s, c.total.time, c.tier_bytes, c.link_bytes);
  return c;
}

}  // namespace trinity::plan
