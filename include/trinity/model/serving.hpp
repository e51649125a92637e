#pragma once
//! \file
//! What serving one request costs an LLM on t tensor-parallel devices, the
//! figures the serving planner weighs:
//!  - prefill: the prompt's uncached tokens after its cached prefix. Its
//!    matrix multiplies run at the device's GEMM curve (model/gemm.hpp) at
//!    the layer's widths, its attention core as one fused
//!    kernel at a share of the 16-bit peak, and it never takes less than one
//!    read of the weights; the time to first token (TTFT) is that prefill
//!    plus loading the cached prefix's KV from the tier it sits in;
//!  - decode: one token per sequence of the batch per step; a step's GEMMs
//!    read every weight once (memory-bound at small batches, compute-bound
//!    past the device's ridge point: the larger of the two), then its
//!    attention reads every sequence's KV cache; the time per output token
//!    (TPOT) is the step's;
//!  - both pay the calibrated overheads a serving engine has beyond its
//!    bytes and FLOPs (serving_calibration): HBM read at a measured share of
//!    the data sheet, a fixed cost per layer (kernel launches; more in a
//!    prefill pass, which engines run eagerly), one per
//!    sequence per step (sampling, batch bookkeeping), and two all-reduces
//!    per layer (Megatron's column-then-row split; Shoeybi et al. 2019) as
//!    serving engines run them for small messages: one launch's latency, then
//!    the faster of a one-shot exchange and a ring.
//! Queueing is not modelled: TTFT is a request's own, on an idle replica.

#include <algorithm>
#include <cstddef>
#include <string>

#include <trinity/error.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! What a serving engine on one kind of device costs beyond its bytes and FLOPs: the constants the serving model
//! is calibrated with (io/serving_calibration.hpp fits them to measured runs). The defaults are the data sheet's
//! ideal: every byte at the full bandwidth, no overhead.
struct serving_calibration {
  double hbm_share = 1;      //!< the share of the data sheet's HBM bandwidth a decode step's reads get
  double kv_read_share = 1;  //!< the share of that the attention kernel's KV reads get (paged, scattered)
  seconds layer_overhead{};  //!< per layer per forward pass: kernel launches and the small kernels
  //! Per layer per prefill pass, beyond layer_overhead: engines replay decode steps from captured CUDA graphs (or
  //! one prebuilt engine) but run prefill's variable shapes eagerly, kernel by kernel, with more kernels a layer
  //! (context attention, padding removal), so a prompt's pass pays more a layer than a decode step does.
  seconds prefill_layer_overhead{};
  seconds sequence_overhead{};       //!< per sequence per decode step: sampling, the batch's bookkeeping
  seconds all_reduce_latency{};      //!< per tensor-parallel all-reduce: its launch and synchronisation
  double fp8_gemm_share = 1;         //!< what an fp8 GEMM gets of the fp8 peak against a 16-bit one of its peak
  double fused_attention_share = 1;  //!< the share of the 16-bit peak prefill's fused attention kernel runs at
  //! The engine's decode attention reads each KV head once per query head it serves (no grouped-query kernel:
  //! TensorRT-LLM before its XQA kernel), so grouped-query attention saves KV memory but not KV reads.
  bool kv_read_per_query_head = false;
  friend bool operator==(const serving_calibration&, const serving_calibration&) = default;
};

inline void validate(const serving_calibration& c, const std::string& at = "serving") {
  const auto share = [&](double v, const char* name) {
    trinity::detail::require(v > 0 && v <= 1, at + "." + name, "is a share, above 0 and at most 1");
  };
  share(c.hbm_share, "hbm_share");
  share(c.kv_read_share, "kv_read_share");
  share(c.fp8_gemm_share, "fp8_gemm_share");
  share(c.fused_attention_share, "fused_attention_share");
  trinity::detail::require(c.layer_overhead.value() >= 0, at + ".layer_overhead", "must not be negative");
  trinity::detail::require(c.prefill_layer_overhead.value() >= 0, at + ".prefill_layer_overhead",
                           "must not be negative");
  trinity::detail::require(c.sequence_overhead.value() >= 0, at + ".sequence_overhead", "must not be negative");
  trinity::detail::require(c.all_reduce_latency.value() >= 0, at + ".all_reduce_latency", "must not be negative");
}

//! One replica of the model: its shape, how it is split and stored, and the hardware of one device.
struct serving_replica {
  transformer_shape shape;
  std::size_t tensor_parallel = 1;  //!< t devices, one replica
  double weight_bytes = 2;          //!< bytes per weight (2: bf16; 1: fp8 or int8; 0.5: int4)
  double kv_bytes = 2;              //!< bytes per KV value (2: bf16; 1: fp8 or int8)
  flops_per_second device_rate{};   //!< peak dense rate of one device at the precision the GEMMs run at
  //! 0 (the default): prefill's GEMMs at `gemm`'s curve. Otherwise a flat share of the peak for every prefill
  //! FLOP, attention included (the uncalibrated model).
  double prefill_efficiency = 0;
  bytes_per_second memory_bandwidth{};  //!< one device's HBM bandwidth (the data sheet's)
  collective_link scale_up{};           //!< the link the tensor-parallel all-reduces cross
  gemm_efficiency gemm{};               //!< the device's GEMM curve (default: the full peak at every shape)
  flops_per_second attention_rate{};    //!< the 16-bit peak the attention core runs at (0: device_rate)
  serving_calibration calibration{};
  bool fp8_compute = false;  //!< the GEMMs run in fp8 (calibration.fp8_gemm_share applies)
};

inline void validate(const serving_replica& r) {
  validate(r.shape);
  trinity::detail::require(r.shape.sliding_window == 0, "sliding_window",
                           "is priced by the training step model only: a window bounds the KV cache and the "
                           "attention a decode step reads, which the serving model does not count. Fix: a model "
                           "with full attention");
  trinity::detail::require(!r.shape.mla(), "kv_lora_rank",
                           "is priced by the training step model only: latent attention caches one latent a "
                           "token, which the serving model's KV cache does not count. Fix: a model with standard "
                           "attention");
  trinity::detail::require(r.shape.mtp_layers == 0, "mtp_layers",
                           "is priced by the training step model only: a serving forward pass runs no prediction "
                           "module (drafting tokens with one, speculative decoding, is not modelled), and the weights "
                           "it reads would count the module's. Fix: leave mtp_layers out");
  const std::size_t t = r.tensor_parallel;
  trinity::detail::require(t >= 1 && r.shape.heads % t == 0 && r.shape.kv_heads % t == 0, "tensor_parallel",
                           "must divide the heads (" + std::to_string(r.shape.heads) + ") and the KV heads (" +
                               std::to_string(r.shape.kv_heads) + "), so each device holds whole heads");
  trinity::detail::require(r.weight_bytes > 0, "weight_bytes", "must be positive");
  trinity::detail::require(r.kv_bytes > 0, "kv_bytes", "must be positive");
  trinity::detail::require(r.device_rate.value() > 0, "device_rate", "must be positive");
  trinity::detail::require(r.prefill_efficiency >= 0 && r.prefill_efficiency <= 1, "prefill_efficiency",
                           "is a share of the peak, above 0 and at most 1 (0: the device's GEMM curve)");
  trinity::detail::require(r.memory_bandwidth.value() > 0, "memory_bandwidth", "must be positive");
  validate(r.gemm);
  validate(r.calibration);
}

//! Bytes one device of the replica holds for the weights.
inline bytes weight_bytes_per_device(const serving_replica& r) {
  return bytes{parameters(r.shape) * r.weight_bytes / static_cast<double>(r.tensor_parallel)};
}

//! Bytes one device holds for `tokens` tokens of KV cache (its share of the KV heads).
inline bytes kv_bytes_per_device(const serving_replica& r, double tokens) {
  return tokens * kv_bytes_per_token(r.shape, r.kv_bytes) / static_cast<double>(r.tensor_parallel);
}

//! Bytes one device reads for the weights in a forward pass: all of them but the input embedding's table, of which
//! a pass reads only its tokens' rows (a tied table is read whole, as the head).
inline bytes weight_bytes_read_per_device(const serving_replica& r) {
  const double table =
      r.shape.tied_embeddings ? 0.0 : static_cast<double>(r.shape.vocabulary) * static_cast<double>(r.shape.hidden);
  return bytes{(parameters(r.shape) - table) * r.weight_bytes / static_cast<double>(r.tensor_parallel)};
}

namespace detail {

// The GEMM rate of one device for `rows` rows: the MLP's up-projection (hidden in, its share of the FFN out)
// stands for the layer's multiplies, the largest of them. The curve is read where it was fitted (fit_gemm keeps
// GEMMs whose every dimension is at least `curve_rows`) and held at its value there below: a GEMM of fewer rows
// is bound by reading its weights, which the step's memory term and prefill's weight floor price already;
// extrapolating the curve's loss there would price those bytes twice.
inline constexpr double curve_rows = 1024;
inline flops_per_second gemm_rate(const serving_replica& r, double rows) {
  const double n = static_cast<double>(r.shape.ffn_hidden) / static_cast<double>(r.tensor_parallel);
  const double share = r.gemm(std::max(rows, curve_rows), n, static_cast<double>(r.shape.hidden));
  return r.device_rate * share * (r.fp8_compute ? r.calibration.fp8_gemm_share : 1.0);
}

inline bytes_per_second hbm_rate(const serving_replica& r) { return r.memory_bandwidth * r.calibration.hbm_share; }

// Seconds of fixed cost in one forward pass: a launch per layer.
inline seconds pass_overhead(const serving_replica& r) {
  return static_cast<double>(r.shape.layers) * r.calibration.layer_overhead;
}

}  // namespace detail

//! The rate one device runs prefill's FLOPs at, for a pass of `rows` tokens: the flat share of the peak where the
//! replica gives one, else the GEMM curve (what a replay, which prices prefill per FLOP, needs).
inline flops_per_second prefill_rate(const serving_replica& r, double rows) {
  return r.prefill_efficiency > 0 ? r.prefill_efficiency * r.device_rate : detail::gemm_rate(r, rows);
}

//! One all-reduce of `size` bytes over the replica's t devices as a serving engine runs it: one launch's latency,
//! then the faster of a one-shot exchange (each device reads the t − 1 others' buffers) and a ring.
inline seconds tensor_parallel_all_reduce_time(const serving_replica& r, bytes size) {
  const std::size_t t = r.tensor_parallel;
  if (t == 1) return seconds{};
  const seconds one_shot = r.scale_up.latency + static_cast<double>(t - 1) * (size / r.scale_up.bandwidth);
  return r.calibration.all_reduce_latency + std::min(one_shot, ring_all_reduce_time(t, size, r.scale_up));
}

//! The tensor-parallel all-reduces of one forward pass over `tokens` tokens: two per layer, of the tokens'
//! 16-bit activations. Zero without tensor parallelism.
inline seconds tensor_parallel_time(const serving_replica& r, double tokens) {
  if (r.tensor_parallel == 1) return seconds{};
  const bytes activations{tokens * static_cast<double>(r.shape.hidden) * 2.0};
  return 2.0 * static_cast<double>(r.shape.layers) * tensor_parallel_all_reduce_time(r, activations);
}

//! Where a prefill pass's time goes. Its FLOPs and one read of the weights overlap, so the longer of the two
//! counts; the rest adds up.
struct prefill_parts {
  seconds multiplies{};      //!< the layers' and the head's GEMMs at the GEMM curve (every FLOP, at a flat efficiency)
  seconds attention{};       //!< the fused attention kernel (0 at a flat efficiency, which counts it in multiplies)
  seconds weights_read{};    //!< one read of the weights, the floor under the FLOPs
  seconds overhead{};        //!< the pass's fixed cost a layer (kernel launches)
  seconds eager_overhead{};  //!< prefill's extra a layer, run eagerly (serving_calibration::prefill_layer_overhead)
  seconds all_reduces{};     //!< the tensor-parallel all-reduces
  [[nodiscard]] bool read_bound() const noexcept { return weights_read > multiplies + attention; }
  [[nodiscard]] seconds total() const noexcept {
    return std::max(multiplies + attention, weights_read) + overhead + eager_overhead + all_reduces;
  }
};

//! The parts of a prefill of `batch` prompts of `prompt` tokens each, whose first `cached` are in the cache, run
//! as one forward pass (all zero where nothing is left to prefill).
inline prefill_parts prefill_breakdown(const serving_replica& r, double prompt, double cached, double batch = 1) {
  trinity::detail::require(cached >= 0 && cached <= prompt, "cached", "must be between 0 and the prompt's length");
  trinity::detail::require(batch >= 1, "batch", "must be at least 1");
  const double fresh = prompt - cached;
  if (fresh <= 0) return {};
  const double t = static_cast<double>(r.tensor_parallel), tokens = batch * fresh;
  prefill_parts out;
  if (r.prefill_efficiency > 0) {
    out.multiplies = batch * forward_flops(r.shape, fresh, cached) / (t * r.prefill_efficiency * r.device_rate);
  } else {
    const double h = static_cast<double>(r.shape.hidden), l = static_cast<double>(r.shape.layers);
    const double hq = static_cast<double>(r.shape.heads) * r.shape.head_dim();
    const double matmul = l * (layer_parameters(r.shape) - 2.0 * h);
    const double logits = static_cast<double>(r.shape.vocabulary) * h;  // the last token's only
    const double attended = fresh * cached + fresh * (fresh + 1.0) / 2.0;
    const auto attention_peak = r.attention_rate.value() > 0 ? r.attention_rate : r.device_rate;
    out.multiplies = flops{2.0 * matmul * tokens} / (t * detail::gemm_rate(r, tokens)) +
                     flops{2.0 * logits * batch} / (t * detail::gemm_rate(r, batch));
    out.attention = flops{4.0 * hq * l * attended * batch} / (t * r.calibration.fused_attention_share * attention_peak);
  }
  out.weights_read = weight_bytes_read_per_device(r) / detail::hbm_rate(r);
  out.overhead = detail::pass_overhead(r);
  out.eager_overhead = static_cast<double>(r.shape.layers) * r.calibration.prefill_layer_overhead;
  out.all_reduces = tensor_parallel_time(r, tokens);
  return out;
}

//! Prefill of `batch` prompts of `prompt` tokens each, whose first `cached` are in the cache, run as one forward
//! pass: compute (or one read of the weights, whichever is longer), the pass's overhead and its all-reduces.
inline seconds prefill_time(const serving_replica& r, double prompt, double cached, double batch = 1) {
  return prefill_breakdown(r, prompt, cached, batch).total();
}

//! The KV bytes a decode step reads on one device for `tokens` tokens of context across the batch: once per KV
//! head, or once per query head where the engine's kernel reads it so.
inline bytes kv_bytes_read_per_device(const serving_replica& r, double tokens) {
  const double reread = r.calibration.kv_read_per_query_head
                            ? static_cast<double>(r.shape.heads) / static_cast<double>(r.shape.kv_heads)
                            : 1.0;
  return reread * kv_bytes_per_device(r, tokens);
}

//! One of a decode step's kernels, bound by its bytes or its FLOPs: the longer counts.
struct bound_kernel {
  seconds read{}, compute{};
  [[nodiscard]] seconds time() const noexcept { return std::max(read, compute); }
  [[nodiscard]] bool read_bound() const noexcept { return read >= compute; }
};

//! Where a decode step's time goes; the parts add up to it.
struct decode_parts {
  bound_kernel multiplies;  //!< read: the weights once for the batch; compute: the GEMMs at the GEMM curve
  bound_kernel attention;   //!< read: every sequence's KV; compute: the attention's FLOPs
  seconds overhead{};       //!< the pass's fixed cost a layer (kernel launches)
  seconds sequences{};      //!< the per-sequence cost (sampling, the batch's bookkeeping)
  seconds all_reduces{};    //!< the tensor-parallel all-reduces
  [[nodiscard]] seconds total() const noexcept {
    return multiplies.time() + attention.time() + overhead + sequences + all_reduces;
  }
};

//! The parts of one decode step: every sequence of the batch, at `context` tokens each, emits a token. Its
//! multiplies and its attention are different kernels, one after the other, each bound by its own bytes or FLOPs:
//! the GEMMs read the weights once for the batch (compute-bound past the ridge point), then the attention kernel
//! reads every sequence's KV, which a compute-bound GEMM does not hide.
inline decode_parts decode_breakdown(const serving_replica& r, double batch, double context) {
  const double t = static_cast<double>(r.tensor_parallel);
  const auto hbm = detail::hbm_rate(r);
  const double hq = static_cast<double>(r.shape.heads) * r.shape.head_dim();
  const flops attention{4.0 * hq * static_cast<double>(r.shape.layers) * (context + 1.0) * batch};
  const flops multiplies = forward_flops(r.shape, 1, context) * batch - attention;
  const auto attention_peak = r.attention_rate.value() > 0 ? r.attention_rate : r.device_rate;
  return {{weight_bytes_read_per_device(r) / hbm, multiplies / (t * detail::gemm_rate(r, batch))},
          {kv_bytes_read_per_device(r, batch * context) / (hbm * r.calibration.kv_read_share),
           attention / (t * attention_peak)},
          detail::pass_overhead(r),
          batch * r.calibration.sequence_overhead,
          tensor_parallel_time(r, batch)};
}

//! One decode step's time (decode_breakdown's parts, added).
inline seconds decode_step_time(const serving_replica& r, double batch, double context) {
  return decode_breakdown(r, batch, context).total();
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

//! A static batch, as TensorRT-LLM's gptSessionBenchmark and NeMo's inference benchmarks run one: `batch` requests
//! prefilled together (their first output token comes from that pass), then `output` − 1 decode steps. Returns the
//! batch's wall time; the replica's output tokens per second is batch · output over it.
inline seconds static_batch_time(const serving_replica& r, double batch, double prompt, double cached, double output) {
  trinity::detail::require(output >= 1, "output_tokens", "must be at least 1");
  return prefill_time(r, prompt, cached, batch) + (output - 1.0) * time_per_output_token(r, batch, prompt, output);
}

}  // namespace trinity::model
