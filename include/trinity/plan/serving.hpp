#pragma once
//! \file
//! Planning LLM serving (the `llm-serve` workload): how to run a model's
//! replicas on a system's devices within their memory and the latency
//! objectives, for the most output tokens per device-second (or joule, or
//! dollar). The slots, each a trade:
//!  - the tensor-parallel degree t of a replica (bandwidth for memory and
//!    latency: the weights split, two all-reduces per layer over the
//!    system's interconnect, which should be its scale-up domain);
//!  - the decode batch (memory for throughput: each sequence's KV stays
//!    resident while it decodes);
//!  - the KV cache's precision, through a value codec (compute for memory;
//!    its error counts against the workload's budget);
//!  - a prefix cache pooled over the system's devices: its capacity and the
//!    tier it lives in (memory for compute: a cached prefix skips its prefill
//!    and is loaded over the tier's link instead), at the hit rate the
//!    workload's curve gives that many bytes of KV.
//! Per plan, from model/serving.hpp: the prompt's cached share h(C), TTFT =
//! load of the cached KV + prefill of the rest, TPOT = the decode step at the
//! batch, and the device-seconds each output token costs,
//! t·(TPOT/batch + prefill/output tokens). Constraints: a device's memory
//! holds its weights, its batch's KV and its share of a prefix cache in
//! device memory; a tier holds its cache; TTFT and TPOT within the SLOs; the
//! codec within the error budget. Queueing is not modelled.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/field_problems.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/detail/measured_curves.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/serving_stack.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! The relative error fp8 (e4m3) KV may add: its rounding bound, 2^-4 for 3 mantissa bits rounded to nearest. A
//! bound, not a measurement: no fp8 codec runs here to measure one.
inline constexpr double fp8_kv_error_bound = 0.0625;

//! What a KV codec may add when the workload states no budget: fp8 KV's bound, the KV precision the production
//! engines serve at (vLLM's kv_cache_dtype "fp8", TensorRT-LLM's fp8 KV cache), so a plan prices it as they run
//! it and states its error against the budget rather than refusing it. A gradient codec's budget is tighter
//! (model::default_error_budget): its error is added every step, a KV codec's once per value stored.
inline constexpr double default_kv_error_budget = fp8_kv_error_bound;

struct serving_workload {
  std::string name;
  model::transformer_shape shape;
  double prompt_tokens = 0;  //!< mean input length
  double output_tokens = 0;  //!< mean output length
  //! Time to first token and per output token, at most; infinite (the default): no objective.
  seconds ttft_slo{std::numeric_limits<double>::infinity()};
  seconds tpot_slo{std::numeric_limits<double>::infinity()};
  //! Prefix-cache hit rate against the cache's bytes of 16-bit KV (a replayed trace's fit); a codec's k-fold
  //! smaller KV holds k times the tokens, h(k·C).
  model::power_law hit_rate{};
  //! The most any capacity hits: the trace's infinite-capacity bound (every repeated block). A fitted curve
  //! tends to 1, and past the capacities it was fitted on only the bound holds.
  double hit_rate_bound = 1;
  //! 0 (the default): prefill at the device's calibrated GEMM curve; otherwise a flat share of the peak
  //! (model::serving_replica::prefill_efficiency).
  double prefill_efficiency = 0;
  double error_budget = default_kv_error_budget;  //!< what a KV codec may add, relative
  std::string precision =
      "bf16";  //!< weights and matrix multiplies (serving_precision_of: bf16, fp16, fp8, int8, int4)
  //! The engine it runs on: the constants that differ from the device's calibration (plan/serving_stack.hpp).
  serving_stack stack = serving_stacks::tensorrt_llm();
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};
};

//! The least share of a prompt a prefix cache must find to be planned at all: one that finds less adds memory for
//! nothing a model can resolve (a cache of 1 TB at a hit rate of 2e-6 ties with none, and a tie goes to less).
inline constexpr double least_useful_hit_rate = 1e-3;

//! The hit-rate curve of a workload with no prefix reuse: nothing is ever found cached.
inline model::power_law no_prefix_reuse() { return {per_byte{0}, 1.0}; }

//! Whether requests share prefixes: without it no prefix cache is planned.
inline bool prefix_reuse(const serving_workload& w) { return w.hit_rate.kappa > per_byte{}; }

//! An objective as a plan states it: "30 ms", or "none".
inline std::string objective_text(seconds slo) {
  return std::isinf(slo.value()) ? std::string("none") : to_string(slo);
}

//! What a serving workload's precision means: the bytes a weight is read at, and the precision its matrix
//! multiplies run at. fp8 is weights and activations in fp8 (the device's fp8 tensor-core rate); int8 and int4 are
//! weight-only, as serving engines run them (weights read at their width, dequantised, multiplied in 16 bits).
struct serving_precision {
  double weight_bytes;
  std::string_view compute;
};

//! The precisions a replica may serve at, or a refusal naming workload.precision and the fix. fp8 needs a device
//! that lists an fp8 rate: without one (an A100 has no fp8 tensor cores) it would silently run at 16 bits.
inline serving_precision serving_precision_of(const serving_workload& w, const system& s) {
  const std::string_view p = w.precision;
  if (p == "bf16" || p == "fp16") return {2.0, p};
  if (p == "int8") return {1.0, "bf16"};
  if (p == "int4") return {0.5, "bf16"};
  if (p == "fp8") {
    const bool listed = std::any_of(s.device.compute_by_precision.begin(), s.device.compute_by_precision.end(),
                                    [](const auto& r) { return r.first == "fp8"; });
    trinity::detail::require(listed, "workload.precision",
                             "fp8 needs fp8 tensor cores, and " + s.name + "'s " + s.device.name +
                                 " lists no fp8 rate. Fix: bf16 or fp16, weight-only int8 or int4, or a system whose "
                                 "device.compute lists one ({\"bf16\": ..., \"fp8\": ...})");
    return {1.0, "fp8"};
  }
  throw invalid_input("workload.precision", "\"" + w.precision +
                                                "\" is not a precision a replica serves at. Fix: bf16, fp16, fp8, "
                                                "or weight-only int8 or int4");
}

inline void validate(const serving_workload& w, const system& s) {
  field_problems each;  // every wrong field in one message
  each([&] { trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name"); });
  each([&] { model::validate(w.shape); });
  each([&] { detail::require_positive(w.prompt_tokens, "workload.prompt_tokens"); });
  each([&] { detail::require_positive(w.output_tokens, "workload.output_tokens"); });
  for (const auto& [slo, field] : {std::pair{w.ttft_slo, "workload.ttft_slo"}, {w.tpot_slo, "workload.tpot_slo"}})
    each([&, slo = slo, field = field] {
      trinity::detail::require(slo > seconds{}, field,
                               to_string(slo) + " must be positive (leave it out for no objective)");
    });
  // Named as a file spells them: kappa_per_gb (0: no prefix reuse, as leaving hit_rate out says).
  each([&] {
    detail::require_non_negative(w.hit_rate.kappa, "workload.hit_rate.kappa_per_gb");
    if (prefix_reuse(w)) detail::require_positive(w.hit_rate.gamma, "workload.hit_rate.gamma");
  });
  each([&] {
    trinity::detail::require(w.hit_rate_bound >= 0 && w.hit_rate_bound <= 1, "workload.hit_rate_bound",
                             "is a share, from 0 to 1");
  });
  each([&] {
    trinity::detail::require(w.prefill_efficiency >= 0 && w.prefill_efficiency <= 1, "workload.prefill_efficiency",
                             "is a share of the peak, above 0 and at most 1 (leave it out for the device's "
                             "calibrated GEMM curve)");
  });
  each([&] { detail::require_non_negative(w.error_budget, "workload.error_budget"); });
  each([&] {
    detail::require_precision(w.precision, "workload.precision");
    (void)serving_precision_of(w, s);
  });
  each([&] { detail::require_positive(s.tiers.front().bandwidth, "tiers[0].bandwidth"); });
  each.raise();
}

struct serving_plan {
  std::size_t tensor_parallel = 1;
  std::size_t batch = 1;
  std::size_t codec = 0;  //!< the KV cache's codec: an index into the codec list ("identity": 16-bit)
  bytes cache{};          //!< the prefix cache, pooled over the system (0: none)
  std::size_t cache_tier = 0;
  friend bool operator==(const serving_plan&, const serving_plan&) = default;
};

struct serving_cost {
  double hit_rate = 0;                        //!< share of a prompt found cached
  seconds ttft{}, tpot{}, prefill{}, load{};  //!< ttft: a request alone on an idle replica
  //! The TTFT of a request arriving into a static batch of the plan's, the batch the throughput is priced at: the
  //! whole batch's prefill (and its cached prefixes' load). What the TTFT objective judges: a plan may not claim
  //! the idle replica's TTFT and the full batch's throughput at once.
  seconds ttft_batch{};
  double tokens_per_second = 0;          //!< output tokens per device-second
  double replica_tokens_per_second = 0;  //!< output tokens per second of one replica (static batches)
  std::vector<bytes> tier_bytes;         //!< per device
  double error = 0;
  resource_vector
      total;  //!< per output token: FLOPs, bytes loaded from the cache's tier, device bytes, energy, device-seconds
  double dollars = 0;  //!< per output token
};

//! KV codecs: 16-bit as it is, or a value codec the device runs (int8, or fp8: half the bytes). fp8 costs what
//! int8 does to encode (a scale and a cast per value) and adds its rounding bound.
inline std::vector<model::compressor_cost> kv_codecs(const system& s) {
  std::vector<model::compressor_cost> out;
  for (auto c : default_codecs_for(s)) {
    if (c.name == "int8-ef") c.name = "int8";  // the KV is quantised once: nothing to feed back
    if (c.name == "identity" || c.name == "int8") out.push_back(c);
    if (c.name == "int8") {
      c.name = "fp8";
      c.relative_error = fp8_kv_error_bound;
      out.push_back(c);
    }
  }
  return out;
}

//! Bytes per KV value through this codec (its ratios are against fp32).
inline double kv_value_bytes(const model::compressor_cost& k) { return k.name == "identity" ? 2.0 : 4.0 / k.ratio; }

inline model::serving_replica replica_of(const system& s, const serving_workload& w, const serving_plan& p,
                                         const model::compressor_cost& k) {
  const auto precision = serving_precision_of(w, s);
  return {w.shape,
          p.tensor_parallel,
          precision.weight_bytes,
          kv_value_bytes(k),
          s.device.rate(precision.compute),
          w.prefill_efficiency,
          s.tiers.front().bandwidth,
          model::collective_link{s.interconnect.latency, s.interconnect.bandwidth, {}},
          s.device.gemm,
          s.device.rate("bf16"),
          with_stack(s.device.serving, w.stack),
          precision.compute == "fp8"};
}

//! The share of the peak a prefill of the workload's prompt runs at on a replica of this plan. Deprecated in 0.2.0
//! (CHANGELOG.md) and gone in 0.3.0: model::prefill_rate(replica_of(s, w, p, codec), rows) gives the rate itself.
[[deprecated("use model::prefill_rate(plan::replica_of(s, w, p, codec), rows) (CHANGELOG.md, 0.2.0)")]] inline double
prefill_share(const system& s, const serving_workload& w, const serving_plan& p) {
  if (w.prefill_efficiency > 0) return w.prefill_efficiency;
  const double n = static_cast<double>(w.shape.ffn_hidden) / static_cast<double>(p.tensor_parallel);
  const double rows = std::max(w.prompt_tokens, model::detail::curve_rows);
  return s.device.gemm(rows, n, static_cast<double>(w.shape.hidden));
}

inline serving_cost price(const system& s, const serving_workload& w, const serving_plan& p,
                          const std::vector<model::compressor_cost>& codecs) {
  const auto& k = codecs.at(p.codec);
  const auto r = replica_of(s, w, p, k);
  const double t = static_cast<double>(p.tensor_parallel), b = static_cast<double>(p.batch);
  serving_cost c;
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  // The pooled cache holds 2 / kv-bytes times the tokens of 16-bit KV.
  const double denser = 2.0 / r.kv_bytes;
  c.hit_rate = p.cache > bytes{} ? std::min(w.hit_rate(denser * p.cache), w.hit_rate_bound) : 0.0;
  const double cached = c.hit_rate * w.prompt_tokens;
  c.prefill = model::prefill_time(r, w.prompt_tokens, cached);
  // A stream of such requests in static batches of b: prefilled together, then decoded together.
  const seconds batch_time = model::static_batch_time(r, b, w.prompt_tokens, cached, w.output_tokens);
  if (p.cache > bytes{} && p.cache_tier != 0) {
    // The replica's t devices load their shares of the cached KV at once, each over its own link to the tier.
    const auto& tier = s.tiers[p.cache_tier];
    c.load = tier.latency + model::kv_bytes_per_device(r, cached) / tier.bandwidth;
  }
  c.ttft = c.load + c.prefill;  // model::time_to_first_token, without pricing the prefill twice
  c.ttft_batch = c.load + model::prefill_time(r, w.prompt_tokens, cached, b);
  c.tpot = model::time_per_output_token(r, b, w.prompt_tokens, w.output_tokens);
  const double devices = static_cast<double>(s.device.count);
  c.tier_bytes[0] =
      model::weight_bytes_per_device(r) + model::kv_bytes_per_device(r, b * (w.prompt_tokens + w.output_tokens));
  if (p.cache > bytes{}) c.tier_bytes[p.cache_tier] += p.cache / devices;
  c.error = k.name == "identity" ? 0.0 : k.relative_error;
  // Device-seconds per output token: the batch shares its prefill pass and each decode step.
  const seconds per_token = t * batch_time / (b * w.output_tokens);
  c.tokens_per_second = 1.0 / per_token.value();
  c.replica_tokens_per_second = c.tokens_per_second * t;
  c.total.time = per_token;
  c.total.compute = model::forward_flops(w.shape, w.prompt_tokens - cached, cached) / w.output_tokens +
                    model::forward_flops(w.shape, 1, w.prompt_tokens + w.output_tokens / 2.0);
  c.total.memory = c.tier_bytes[0];
  c.total.bandwidth = p.cache_tier != 0 ? t * model::kv_bytes_per_device(r, cached) / w.output_tokens : bytes{};
  c.total.energy =
      per_token * s.device.power + (p.cache_tier != 0 ? c.total.bandwidth * s.tiers[p.cache_tier].energy : joules{});
  c.dollars = dollars(s, per_token, c.tier_bytes, bytes{});
  return c;
}

using serving_evaluated = candidate<serving_plan, serving_cost>;
using serving_plan_result = result<serving_plan, serving_cost>;

inline std::string describe(const serving_plan& p, const system& s, const std::vector<model::compressor_cost>& codecs) {
  std::string d = "TP " + std::to_string(p.tensor_parallel) + ", batch " + std::to_string(p.batch) + ", KV as " +
                  (codecs.at(p.codec).name == "identity" ? std::string("bf16") : codecs[p.codec].name);
  return d + (p.cache > bytes{} ? ", " + to_string(p.cache) + " prefix cache in " + s.tiers[p.cache_tier].name
                                : ", no prefix cache");
}

namespace detail {

struct serving_problem : codec_workload<serving_workload> {
  struct tensor_parallel {
    using spends = resources::bandwidth;
    using saves = resources::memory;
    static constexpr std::string_view name = "tensor-parallel degree";
    static auto& of(serving_plan& p) { return p.tensor_parallel; }
  };
  struct batch {
    using spends = resources::memory;
    using saves = resources::time;
    static constexpr std::string_view name = "batch";
    static auto& of(serving_plan& p) { return p.batch; }
  };
  struct kv_precision {
    using spends = resources::compute;
    using saves = resources::memory;
    static constexpr std::string_view name = "KV precision";
    static auto& of(serving_plan& p) { return p.codec; }
  };
  // The prefix cache's size and tier: one slot.
  struct prefix_cache {
    using spends = resources::memory;
    using saves = resources::compute;
    static constexpr std::string_view name = "prefix cache";
    static auto of(serving_plan& p) { return std::tie(p.cache, p.cache_tier); }
  };
  using slots = slot_list<tensor_parallel, batch, kv_precision, prefix_cache>;
  using plan_type = serving_plan;
  using cost_type = serving_cost;
  static constexpr const char* time_word = "device-time per token";

  // Beyond the powers of two, the two whole batches that bound a replica: the most whose KV fits device memory
  // beside the weights (and the prefix cache's share where it lives there), and the most of those within the
  // TTFT and TPOT objectives (a batch's prefill and its step time both grow with it, so a bisection finds it).
  // 0 where none fits.
  [[nodiscard]] std::array<std::size_t, 2> bounding_batches(const serving_plan& shape) const {
    const auto r = replica_of(s, w, shape, ks[shape.codec]);
    const double devices = static_cast<double>(s.device.count);
    const bytes free = s.tiers[0].capacity - model::weight_bytes_per_device(r) -
                       (shape.cache_tier == 0 ? shape.cache / devices : bytes{});
    const bytes per_sequence = model::kv_bytes_per_device(r, w.prompt_tokens + w.output_tokens);
    if (free <= bytes{} || per_sequence <= bytes{}) return {0, 0};
    const auto most = static_cast<std::size_t>(std::min(std::floor(free / per_sequence), 1e6));
    if (most == 0) return {0, 0};
    const auto within = [&](std::size_t b) {
      auto p = shape;
      p.batch = b;
      const auto c = price(p);
      return c.ttft_batch <= w.ttft_slo && c.tpot <= w.tpot_slo;
    };
    std::size_t lo = 0, hi = most;  // the answer lies in [lo, hi]; lo is 0 or within
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (within(mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return {most, lo};
  }

  template <class F>
  void for_each_plan(F&& f) const {
    const double devices = static_cast<double>(s.device.count);
    const auto batches = [&](serving_plan p, auto&& g) {
      for (std::size_t b = 1; b <= 1024; b *= 2) p.batch = b, g(p);
      const auto [most, within] = bounding_batches(p);
      const auto listed = [](std::size_t b) { return b == 0 || (b <= 1024 && std::has_single_bit(b)); };
      if (!listed(most)) p.batch = most, g(p);
      if (!listed(within) && within != most) p.batch = within, g(p);
    };
    for (std::size_t t = 1; t <= s.device.count; t *= 2) {
      // Replicas of t devices must tile the system: a t that leaves devices idle would price their share of
      // the throughput and the prefix cache's host memory as if they worked.
      if (w.shape.heads % t || w.shape.kv_heads % t || s.device.count % t) continue;
      for (std::size_t k = 0; k < ks.size(); ++k) {
        batches(serving_plan{t, 1, k, bytes{}, 0}, f);
        if (!prefix_reuse(w)) continue;  // no prefix is ever shared: no cache to plan
        for (std::size_t tier = 0; tier < s.tiers.size(); ++tier)
          for (double gb = 64; gb * 1e9 <= s.tiers[tier].capacity.value() * devices; gb *= 4)
            batches(serving_plan{t, 1, k, bytes{gb * 1e9}, tier}, f);
      }
    }
  }
  [[nodiscard]] serving_cost price(const serving_plan& p) const { return plan::price(s, w, p, ks); }
  [[nodiscard]] std::string check(const serving_plan& p, const serving_cost& c) const {
    if (c.error > w.error_budget)
      return "error budget: KV as " + ks[p.codec].name + " adds relative error " +
             units::detail::format_number(c.error) + ", more than " + units::detail::format_number(w.error_budget);
    for (std::size_t t = 0; t < s.tiers.size(); ++t)
      if (c.tier_bytes[t] > s.tiers[t].capacity)
        return s.tiers[t].name + " capacity: needs " + to_string(c.tier_bytes[t]) + " per device of " +
               to_string(s.tiers[t].capacity);
    // A cache that finds next to nothing is memory for no compute: the plan without it does as well.
    if (p.cache > bytes{} && c.hit_rate < least_useful_hit_rate)
      return "useful cache: it finds " + units::detail::format_number(c.hit_rate) + " of a prompt, under " +
             units::detail::format_number(least_useful_hit_rate) + ": no cache does as well";
    if (c.ttft_batch > w.ttft_slo)
      return "TTFT objective: " + to_string(c.ttft_batch) + " in a batch of " + std::to_string(p.batch) +
             ", more than " + to_string(w.ttft_slo);
    if (c.tpot > w.tpot_slo) return "TPOT objective: " + to_string(c.tpot) + ", more than " + to_string(w.tpot_slo);
    return {};
  }
  //! The untraded replica: one device, one sequence, 16-bit KV, no prefix cache.
  [[nodiscard]] bool is_baseline(const serving_plan& p) const { return p == serving_plan{1, 1, identity, bytes{}, 0}; }
  // The objective, then the runner-up, then fewer device bytes, then the smaller KV error, then the smaller cache.
  [[nodiscard]] bool better(const serving_evaluated& a, const serving_evaluated& b) const {
    const auto key = [&](const serving_evaluated& e) {
      return std::array{score(e.cost, o.objective), score(e.cost, runner_up(o.objective)), e.cost.total.memory.value(),
                        e.cost.error, e.plan.cache.value()};
    };
    return key(a) < key(b);
  }
  //! Uses less (a tie within the tolerance, plan::tie_tolerance): no prefix cache over one, a smaller cache over a
  //! larger. A cache that buys under 0.1% of the objective does not earn its memory.
  [[nodiscard]] bool leaner(const serving_evaluated& a, const serving_evaluated& b) const {
    return a.plan.cache < b.plan.cache;
  }
  //! What decided a tie on the objective and its runner-up: the device bytes, else the KV codec's error.
  [[nodiscard]] std::string tie_note(const serving_evaluated& e, const serving_evaluated& chosen) const {
    const std::string same = as_good(o.objective) + ", but ";
    if (e.cost.total.memory != chosen.cost.total.memory)
      return same + "holds " + to_string(e.cost.total.memory) + " a device vs " + to_string(chosen.cost.total.memory);
    if (e.cost.error != chosen.cost.error)
      return same + "its KV adds relative error " + units::detail::format_number(e.cost.error) + " vs " +
             units::detail::format_number(chosen.cost.error);
    return same + "a larger prefix cache";
  }
  [[nodiscard]] std::array<double, 5> pareto_keys(const serving_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.ttft_batch.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const serving_plan& p) const { return plan::describe(p, s, ks); }
  [[nodiscard]] std::string binding(const serving_evaluated& e) const {
    if (!e.fits()) return e.violation;
    const auto& c = e.cost;
    return units::detail::format_number(c.tokens_per_second) + " output tokens per device-second; TTFT " +
           to_string(c.ttft_batch) + " in its batch, TPOT " + to_string(c.tpot) + "; " + s.tiers[0].name + " " +
           pct(c.tier_bytes[0] / s.tiers[0].capacity) + " full";
  }
  [[nodiscard]] std::vector<std::string> trades(const serving_plan_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    std::vector<std::string> out;
    const auto& p = c.plan;
    if (p.tensor_parallel > 1)
      out.push_back("tensor parallel " + std::to_string(p.tensor_parallel) +
                    " (interconnect for memory and latency): weights " +
                    to_string(model::weight_bytes_per_device(replica_of(s, w, p, ks[p.codec]))) + " per device");
    if (p.batch > 1)
      out.push_back("batch " + std::to_string(p.batch) + " (memory for throughput): TPOT " + to_string(c.cost.tpot) +
                    " for " + std::to_string(p.batch) + " sequences");
    if (p.codec != identity)
      out.push_back("KV as " + ks[p.codec].name + " (compute for memory): " +
                    units::detail::format_number(2.0 / kv_value_bytes(ks[p.codec])) + "x the tokens per byte");
    if (p.cache > bytes{})
      out.push_back(to_string(p.cache) + " prefix cache in " + s.tiers[p.cache_tier].name +
                    " (memory for compute): hit rate " + units::detail::format_number(c.cost.hit_rate) + ", prefill " +
                    to_string(c.cost.prefill) + " + load " + to_string(c.cost.load));
    if (out.empty()) out.push_back("none: one device, one sequence, no cache is already the best that fits");
    out.push_back("output tokens per device-second " + units::detail::format_number(b.cost.tokens_per_second) + " -> " +
                  units::detail::format_number(c.cost.tokens_per_second));
    return out;
  }
  // Plans one slot away: the next degree, batch or cache size, the other codec, the same cache elsewhere.
  [[nodiscard]] bool neighbour(const serving_plan_result& r, std::size_t i) const {
    const auto& q = r.candidates[i].plan;
    const auto& p = r.chosen().plan;
    const auto next = [](double a, double b, double f) { return a == b * f || b == a * f; };
    const bool same_cache = q.cache == p.cache && q.cache_tier == p.cache_tier;
    const int differs =
        (q.tensor_parallel != p.tensor_parallel) + (q.batch != p.batch) + (q.codec != p.codec) + !same_cache;
    if (differs != 1) return false;
    if (q.tensor_parallel != p.tensor_parallel)
      return next(static_cast<double>(q.tensor_parallel), static_cast<double>(p.tensor_parallel), 2);
    if (q.batch != p.batch) return next(static_cast<double>(q.batch), static_cast<double>(p.batch), 2);
    if (!same_cache)
      return q.cache_tier == p.cache_tier ? next(q.cache.value(), p.cache.value(), 4) || q.cache <= bytes{}
                                          : q.cache == p.cache;
    return true;
  }
  // How far a plan got through check's order.
  [[nodiscard]] static int progress(const serving_evaluated& e) {
    static constexpr std::string_view order[] = {"error budget", "capacity", "useful cache", "TTFT objective",
                                                 "TPOT objective"};
    return check_stage(e.violation, order);
  }
  // What the plan needs over what its binding constraint allows.
  [[nodiscard]] double overshoot(const serving_evaluated& e) const {
    const auto& c = e.cost;
    switch (progress(e)) {
      case 0:
        return c.error / w.error_budget;
      case 1:
        return fullest_tier_share(s, c.tier_bytes);
      case 2:
        return c.hit_rate > 0 ? least_useful_hit_rate / c.hit_rate : std::numeric_limits<double>::infinity();
      case 3:
        return c.ttft_batch / w.ttft_slo;
      default:
        return c.tpot / w.tpot_slo;
    }
  }
  // What would lift the nearest plan's binding constraint on this system.
  [[nodiscard]] std::string fix_for(const serving_evaluated& e) const {
    const auto& c = e.cost;
    const std::string wider =
        "more devices for a larger tensor-parallel degree (TP " + std::to_string(e.plan.tensor_parallel) + " here)";
    switch (progress(e)) {
      case 0:
        return "a larger error_budget, or KV as bf16";
      case 1:
        return wider + ", weights in fewer bytes (precision fp8, int8 or int4), or devices with more memory";
      case 3:
        return "a looser ttft_slo (the nearest plan needs " + to_string(c.ttft_batch) + " in a batch of " +
               std::to_string(e.plan.batch) + "), or " + wider;
      case 4:
        return "a looser tpot_slo (the nearest plan needs " + to_string(c.tpot) + "), or " + wider;
      default:
        return "a hit_rate curve that finds more of a prompt";
    }
  }
  [[noreturn]] void none_fits(const serving_plan_result& r) const {
    const auto& nearest = nearest_to_fitting(
        r.candidates, o.objective, [](const serving_evaluated& e) { return progress(e); },
        [&](const serving_evaluated& e) { return overshoot(e); });
    throw invalid_input("workload", "no serving plan fits " + s.name + ". The nearest, " + describe(nearest.plan) +
                                        ", breaks the " + nearest.violation + ". Fix: " + fix_for(nearest));
  }
};

}  // namespace detail

inline serving_plan_result plan_serving(const system& s, const serving_workload& w, const planner_options& o = {},
                                        std::vector<model::compressor_cost> codecs = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  if (codecs.empty()) codecs = kv_codecs(s);
  const std::size_t identity = detail::identity_codec(codecs, ": KV kept in 16 bits");
  return solve(detail::serving_problem{{s, w, o, codecs, identity}}, o);
}

//! What each tier buys: for every tier of the system, the best plan that fits with its prefix cache there (none
//! where no such plan fits), by the objective; `no_cache` is the best that fits without one.
struct tier_choices {
  std::optional<std::size_t> no_cache;
  std::vector<std::optional<std::size_t>> by_tier;
};

inline tier_choices best_by_cache_tier(const serving_plan_result& r, std::size_t tiers, objective o) {
  tier_choices out{std::nullopt, std::vector<std::optional<std::size_t>>(tiers)};
  const auto consider = [&](std::optional<std::size_t>& slot, std::size_t i) {
    if (!slot || detail::score(r.candidates[i].cost, o) < detail::score(r.candidates[*slot].cost, o)) slot = i;
  };
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& e = r.candidates[i];
    if (!e.fits()) continue;
    if (e.plan.cache > bytes{})
      consider(out.by_tier.at(e.plan.cache_tier), i);
    else
      consider(out.no_cache, i);
  }
  return out;
}

namespace presets {

//! Llama-3-70B serving Mooncake's conversation traffic: prompts of 12,035 tokens and answers of 343 on average
//! (../shared/traces/README.md, the trace's own summary; a test recomputes them from the trace where it is),
//! the prefix cache's hit rate the power law fitted to the trace's LRU replay, capped at its infinite-capacity
//! bound (plan/detail/measured_curves.hpp, generated from bench/results/prefix-curve-mooncake.json). Assumptions to
//! replace with yours: TTFT within 10 s and TPOT within 100 ms (objectives, not measurements).
inline serving_workload llama3_70b_serve() {
  serving_workload w;
  w.name = "llama3-70b-serve";
  w.shape = model::shapes::llama3_70b;
  w.prompt_tokens = 12035;
  w.output_tokens = 343;
  w.ttft_slo = seconds{10};
  w.tpot_slo = seconds{0.1};
  w.hit_rate = model::power_law{per_byte{detail::mooncake_curve_kappa_per_gb * 1e-9}, detail::mooncake_curve_gamma};
  w.hit_rate_bound = detail::mooncake_curve_bound;
  assume(w.assumed, "error_budget", w.error_budget);
  assume(w.assumed, "precision", w.precision);
  return w;
}

inline std::optional<serving_workload> find_serving(std::string_view name) {
  if (name == "llama3-70b-serve") return llama3_70b_serve();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
