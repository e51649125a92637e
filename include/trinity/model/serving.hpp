#pragma once
//! \file
//! What serving one request costs an LLM on t tensor-parallel devices, the
//! figures the serving planner weighs:
//!  - prefill: the prompt's uncached tokens after its cached prefix, at
//!    model::forward_flops (the causal attention term included), split over
//!    the t devices at a sustained share of their peak (prefill is
//!    compute-bound); the time to first token (TTFT) is that prefill plus
//!    loading the cached prefix's KV from the tier it sits in, plus the
//!    tensor-parallel all-reduces;
//!  - decode: one token per sequence of the batch per step; a step reads
//!    every weight once and every sequence's KV cache (memory-bound at small
//!    batches, compute-bound past the device's ridge point), so its time is
//!    the larger of the two, plus two all-reduces of the batch's activations
//!    per layer (Megatron's column-then-row split; Shoeybi et al. 2019), at α-β
//!    ring times over the scale-up link; the time per output token (TPOT) is
//!    the step's time, and the throughput batch / step.
//! Queueing is not modelled: TTFT is a request's own, on an idle replica.

#include <algorithm>
#include <cstddef>
#include <string>

#include <trinity/error.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! One replica of the model: its shape, how it is split and stored, and the hardware of one device.
struct serving_replica {
  transformer_shape shape;
  std::size_t tensor_parallel = 1;      //!< t devices, one replica
  double weight_bytes = 2;              //!< bytes per weight (2: bf16)
  double kv_bytes = 2;                  //!< bytes per KV value (2: bf16; 1: fp8 or int8)
  flops_per_second device_rate{};       //!< peak dense rate of one device at the serving precision
  double prefill_efficiency = 0.5;      //!< sustained share of the peak in prefill's matrix multiplies
  bytes_per_second memory_bandwidth{};  //!< one device's HBM bandwidth
  collective_link scale_up{};           //!< the link the tensor-parallel all-reduces cross
};

inline void validate(const serving_replica& r) {
  validate(r.shape);
  const std::size_t t = r.tensor_parallel;
  trinity::detail::require(t >= 1 && r.shape.heads % t == 0 && r.shape.kv_heads % t == 0, "tensor_parallel",
                           "must divide the heads (" + std::to_string(r.shape.heads) + ") and the KV heads (" +
                               std::to_string(r.shape.kv_heads) + "), so each device holds whole heads");
  trinity::detail::require(r.weight_bytes > 0, "weight_bytes", "must be positive");
  trinity::detail::require(r.kv_bytes > 0, "kv_bytes", "must be positive");
  trinity::detail::require(r.device_rate.value() > 0, "device_rate", "must be positive");
  trinity::detail::require(r.prefill_efficiency > 0 && r.prefill_efficiency <= 1, "prefill_efficiency",
                           "is a share of the peak, above 0 and at most 1");
  trinity::detail::require(r.memory_bandwidth.value() > 0, "memory_bandwidth", "must be positive");
}

//! Bytes one device of the replica holds for the weights.
inline bytes weight_bytes_per_device(const serving_replica& r) {
  return bytes{parameters(r.shape) * r.weight_bytes / static_cast<double>(r.tensor_parallel)};
}

//! Bytes one device holds for `tokens` tokens of KV cache (its share of the KV heads).
inline bytes kv_bytes_per_device(const serving_replica& r, double tokens) {
  return tokens * kv_bytes_per_token(r.shape, r.kv_bytes) / static_cast<double>(r.tensor_parallel);
}

//! The tensor-parallel all-reduces of one forward pass over `tokens` tokens: two per layer, of the tokens'
//! 16-bit activations. Zero without tensor parallelism.
inline seconds tensor_parallel_time(const serving_replica& r, double tokens) {
  if (r.tensor_parallel == 1) return seconds{};
  const bytes activations{tokens * static_cast<double>(r.shape.hidden) * 2.0};
  return 2.0 * static_cast<double>(r.shape.layers) * ring_all_reduce_time(r.tensor_parallel, activations, r.scale_up);
}

//! Prefill of a prompt of `prompt` tokens whose first `cached` are in the cache: compute and all-reduces.
inline seconds prefill_time(const serving_replica& r, double prompt, double cached) {
  trinity::detail::require(cached >= 0 && cached <= prompt, "cached", "must be between 0 and the prompt's length");
  const double fresh = prompt - cached;
  if (fresh <= 0) return seconds{};
  const flops work = forward_flops(r.shape, fresh, cached);
  return work / (static_cast<double>(r.tensor_parallel) * r.prefill_efficiency * r.device_rate) +
         tensor_parallel_time(r, fresh);
}

//! One decode step: every sequence of the batch, at `context` tokens each, emits a token.
inline seconds decode_step_time(const serving_replica& r, double batch, double context) {
  const double t = static_cast<double>(r.tensor_parallel);
  const bytes read = weight_bytes_per_device(r) + kv_bytes_per_device(r, batch * context);
  const seconds memory = read / r.memory_bandwidth;
  const seconds compute = forward_flops(r.shape, 1, context) * batch / (t * r.device_rate);
  return std::max(memory, compute) + tensor_parallel_time(r, batch);
}

//! Time to first token: loading the cached prefix's KV (`load`, from whichever tier) and the prefill.
inline seconds time_to_first_token(const serving_replica& r, double prompt, double cached, seconds load = {}) {
  return load + prefill_time(r, prompt, cached);
}

//! Time per output token of a request with `prompt` tokens in, `output` out, in a batch of `batch` such: the
//! decode step at the midpoint of its output (the context grows from prompt to prompt + output; the step time
//! is linear in it while one bound holds, so that is the mean; across the ridge point it is slightly less).
inline seconds time_per_output_token(const serving_replica& r, double batch, double prompt, double output) {
  return decode_step_time(r, batch, prompt + output / 2.0);
}

}  // namespace trinity::model
