#pragma once
//! \file
//! Planning the third trade: how large an approximate cache of diffusion
//! latents to keep, and in which tier. Per request, with the paper's model
//! (§5.1.2, model/cache.hpp) and a hit-rate curve h(M) measured by
//! `trinity cache replay` (its power-law fit):
//!  - compute E[C](M) = S·c_step − h(M)·r·c_step, at the device's rate;
//!  - a hit reads one latent from the cache's tier (latency + size / bandwidth);
//!  - a miss writes its entry, one latent per stored depth, into that tier;
//!  - the cache's bytes count against the tier's capacity, the model's weights against tier 0.
//!  - the latents may be stored through a value codec (compute for memory): a capacity then holds
//!    ratio × more entries, h(ratio·M), and every hit decodes and every insert encodes on the device;
//!    the codec's error counts against the workload's error budget.
//! Candidates: no cache, or a capacity from 1 GB doubling up to what the tier holds, in each tier, with
//! each codec.
//! Bigger caches save compute and cost capacity; a slow tier's reads can eat the saving, which is
//! exactly what the planner weighs.

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/cache.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/detail/measured_curves.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct diffusion_workload {
  std::string name;
  std::size_t steps = 50;           //!< S
  flops step_cost{};                //!< c_step
  std::size_t reuse_depth = 10;     //!< r: steps an average hit skips (`trinity cache replay` prints it)
  bytes latent_size{};              //!< one stored latent
  std::size_t stored_depths = 5;    //!< latents per entry (Table 1 stores 5, 10, 15, 20, 25)
  model::power_law hit_rate{};      //!< h(M), fitted to a replayed trace
  bytes model_bytes{};              //!< the model's weights, resident in tier 0
  double latent_element_bytes = 4;  //!< bytes per element of a latent as the model holds it (4: fp32)
  double error_budget = model::default_error_budget;  //!< largest relative error a codec may add to a stored latent
  std::string precision = "bf16";                     //!< the precision a denoising step runs at (device.rate)
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};

  [[nodiscard]] bytes entry_size() const noexcept { return static_cast<double>(stored_depths) * latent_size; }
};

inline void validate(const diffusion_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  trinity::detail::require(w.steps >= 1, "workload.steps", "must be at least 1");
  detail::require_positive(w.step_cost, "workload.step_flops");
  trinity::detail::require(w.reuse_depth <= w.steps, "workload.reuse_depth",
                           "must not exceed workload.steps: a hit cannot skip more steps than a request runs");
  detail::require_positive(w.latent_size, "workload.latent_size");
  trinity::detail::require(w.stored_depths >= 1, "workload.stored_depths", "must be at least 1");
  detail::require_positive(w.hit_rate.kappa, "workload.hit_rate.kappa");
  detail::require_positive(w.hit_rate.gamma, "workload.hit_rate.gamma");
  detail::require_non_negative(w.model_bytes, "workload.model_bytes");
  trinity::detail::require(w.latent_element_bytes == 1 || w.latent_element_bytes == 2 || w.latent_element_bytes == 4,
                           "workload.latent_element_bytes", "is 4 (fp32), 2 (bf16, fp16) or 1 (int8, fp8)");
  detail::require_non_negative(w.error_budget, "workload.error_budget");
  detail::require_precision(w.precision, "workload.precision");
  trinity::detail::require(w.model_bytes <= s.tiers.front().capacity, "workload.model_bytes",
                           to_string(w.model_bytes) + " of weights do not fit " + s.tiers.front().name + " (" +
                               to_string(s.tiers.front().capacity) + ")");
}

struct cache_plan {
  bytes capacity{};       //!< 0: no cache
  std::size_t tier = 0;   //!< where the cache lives
  std::size_t codec = 0;  //!< how its latents are stored: an index into the codec list ("identity": as they are)
  friend bool operator==(const cache_plan&, const cache_plan&) = default;
};

//! Codecs a latent may be stored through: the value codecs the device runs (GPU kernels on a GPU), applied
//! once, so without error feedback.
inline std::vector<model::compressor_cost> latent_codecs(const system& s) {
  std::vector<model::compressor_cost> out;
  for (auto c : default_codecs_for(s)) {
    if (c.name == "int8-ef") c.name = "int8";
    if (c.name == "identity" || c.name == "bf16" || c.name == "int8") out.push_back(c);
  }
  return out;
}

//! How many times more latents a byte of cache holds through this codec (1 for identity; below 1: no gain).
inline double storage_ratio(const diffusion_workload& w, const model::compressor_cost& k) {
  return k.name == "identity" ? 1.0 : w.latent_element_bytes * k.ratio / 4.0;
}

struct cache_cost {
  double hit_rate = 0;
  flops compute{};
  seconds compute_time{}, read_time{}, write_time{};
  seconds codec_time{};  //!< decoding hits and encoding inserts, per request
  double error = 0;      //!< what the codec adds to a reused latent
  std::vector<bytes> tier_bytes;
  resource_vector total;  //!< per request: compute, bytes moved to and from the cache, bytes held, energy, time
  double dollars = 0;     //!< the device (and any priced tier) rented for the request
};

inline cache_cost price(const system& s, const diffusion_workload& w, const cache_plan& p,
                        const std::vector<model::compressor_cost>& codecs) {
  cache_cost c;
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  c.tier_bytes[0] = w.model_bytes;
  const model::diffusion_cache m{w.steps, w.step_cost, w.reuse_depth, w.entry_size()};
  const auto& k = codecs.at(p.codec);
  const double ratio = storage_ratio(w, k);
  c.hit_rate = p.capacity > bytes{} ? w.hit_rate(ratio * p.capacity) : 0.0;
  c.compute = m.expected_cost(c.hit_rate);
  c.compute_time = c.compute / s.device.rate(w.precision);
  bytes moved{};
  if (p.capacity > bytes{}) {
    const auto& t = s.tiers[p.tier];
    c.tier_bytes[p.tier] += p.capacity;
    const bytes latent = w.latent_size / ratio, entry = w.entry_size() / ratio;
    c.read_time = c.hit_rate * (t.latency + latent / t.bandwidth);
    c.write_time = (1.0 - c.hit_rate) * (t.latency + entry / t.bandwidth);
    if (k.name != "identity") {
      // Codec rates are per fp32 byte of input.
      const double widen = 4.0 / w.latent_element_bytes;
      c.codec_time = c.hit_rate * (widen * w.latent_size / k.decode_rate) +
                     (1.0 - c.hit_rate) * (widen * w.entry_size() / k.encode_rate);
      c.error = k.relative_error;
    }
    moved = c.hit_rate * latent + (1.0 - c.hit_rate) * entry;
    c.total.energy = moved * t.energy;
  }
  c.total.compute = c.compute;
  c.total.bandwidth = moved;
  c.total.memory = p.capacity;
  c.total.time = c.compute_time + c.read_time + c.write_time + c.codec_time;
  // The device waits, at its idle power, while a hit's latent is read and a miss's entry written.
  c.total.energy +=
      (c.compute_time + c.codec_time) * s.device.power + (c.read_time + c.write_time) * s.device.idle_power;
  c.dollars = dollars(s, c.total.time, c.tier_bytes, bytes{});
  return c;
}

using cache_evaluated = candidate<cache_plan, cache_cost>;
//! Pareto keys: time, energy, cache bytes, dollars.
using cache_plan_result = result<cache_plan, cache_cost>;

inline std::string describe(const cache_plan& p, const system& s, const std::vector<model::compressor_cost>& codecs) {
  if (p.capacity <= bytes{}) return "no cache";
  const std::string where = to_string(p.capacity) + " cache in " + s.tiers[p.tier].name;
  return codecs.at(p.codec).name == "identity" ? where : where + ", latents stored as " + codecs[p.codec].name;
}

namespace detail {

//! The cache as the engine sees it: no cache, or a capacity x tier x codec.
struct diffusion_problem : codec_workload<diffusion_workload> {
  struct capacity {
    using spends = resources::memory;
    using saves = resources::compute;
    static constexpr std::string_view name = "cache capacity";
    static auto& of(cache_plan& p) { return p.capacity; }
  };
  struct tier {
    using spends = resources::time;
    using saves = resources::memory;
    static constexpr std::string_view name = "cache tier";
    static auto& of(cache_plan& p) { return p.tier; }
  };
  struct latent_codec {
    using spends = resources::compute;
    using saves = resources::memory;
    static constexpr std::string_view name = "latent codec";
    static auto& of(cache_plan& p) { return p.codec; }
  };
  using slots = slot_list<capacity, tier, latent_codec>;
  using plan_type = cache_plan;
  using cost_type = cache_cost;
  static constexpr const char* time_word = "request time";

  template <class F>
  void for_each_plan(F&& f) const {
    f(cache_plan{bytes{}, 0, identity});
    for (std::size_t t = 0; t < s.tiers.size(); ++t)
      for (double gb = 1; gb * 1e9 <= s.tiers[t].capacity.value(); gb *= 2)
        for (std::size_t k = 0; k < ks.size(); ++k) {
          if (k != identity && storage_ratio(w, ks[k]) <= 1.0) continue;  // stores nothing smaller
          f(cache_plan{bytes{gb * 1e9}, t, k});
        }
  }
  [[nodiscard]] cache_cost price(const cache_plan& p) const { return plan::price(s, w, p, ks); }
  [[nodiscard]] std::string check(const cache_plan& p, const cache_cost& c) const {
    if (p.capacity <= bytes{}) return {};
    if (c.error > w.error_budget)
      return "error budget: " + ks[p.codec].name + " adds relative error " + units::detail::format_number(c.error) +
             " to a reused latent, more than " + units::detail::format_number(w.error_budget);
    if (c.tier_bytes[p.tier] > s.tiers[p.tier].capacity)
      return s.tiers[p.tier].name + " capacity: needs " + to_string(c.tier_bytes[p.tier]) + " of " +
             to_string(s.tiers[p.tier].capacity) + " (the model's weights share it)";
    return {};
  }
  [[nodiscard]] bool is_baseline(const cache_plan& p) const { return p.capacity <= bytes{}; }
  // The objective, then the smaller cache (memory not needed is memory left for something else), then the
  // smaller error.
  [[nodiscard]] bool better(const cache_evaluated& a, const cache_evaluated& b) const {
    const double sa = score(a.cost, o.objective), sb = score(b.cost, o.objective);
    if (sa != sb) return sa < sb;
    if (a.plan.capacity != b.plan.capacity) return a.plan.capacity < b.plan.capacity;
    return a.cost.error < b.cost.error;
  }
  [[nodiscard]] std::array<double, 4> pareto_keys(const cache_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const cache_plan& p) const { return plan::describe(p, s, ks); }
  [[nodiscard]] std::string binding(const cache_evaluated& e) const {
    const auto& c = e.cost;
    if (e.plan.capacity <= bytes{})
      return "compute: " + to_string(c.compute) + " per request (" + to_string(c.compute_time) + ")";
    return "compute " + to_string(c.compute_time) + " + cache reads and writes " +
           to_string(c.read_time + c.write_time) + "; hit rate " + units::detail::format_number(c.hit_rate);
  }
  [[nodiscard]] std::vector<std::string> trades(const cache_plan_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline].cost;
    if (c.plan.capacity <= bytes{}) return {"none: no cache pays for its reads and writes here"};
    std::vector<std::string> out;
    const cache_plan plain{c.plan.capacity, c.plan.tier, identity};
    const auto as_is = price(plain);
    out.push_back(describe(plain) + " (memory for compute): compute " + to_string(b.compute) + " -> " +
                  to_string(as_is.compute) + " per request, request time " + to_string(b.total.time) + " -> " +
                  to_string(as_is.total.time));
    if (c.plan.codec != identity)
      out.push_back("latents stored as " + ks[c.plan.codec].name +
                    " (compute for memory): " + units::detail::format_number(storage_ratio(w, ks[c.plan.codec])) +
                    "x the entries, hit rate " + units::detail::format_number(as_is.hit_rate) + " -> " +
                    units::detail::format_number(c.cost.hit_rate) + ", coding " + to_string(c.cost.codec_time) +
                    " per request, request time " + to_string(as_is.total.time) + " -> " +
                    to_string(c.cost.total.time));
    return out;
  }
  // The next capacity down and up in the same tier, the same capacity in other tiers (both with the chosen
  // codec), the same cache with the other codecs, and no cache.
  [[nodiscard]] bool neighbour(const cache_plan_result& r, std::size_t i) const {
    const auto& e = r.candidates[i].plan;
    const auto& c = r.chosen().plan;
    const bool same_codec = e.codec == c.codec;
    const bool same_tier_next =
        same_codec && e.tier == c.tier && (e.capacity == 2.0 * c.capacity || e.capacity * 2.0 == c.capacity);
    const bool other_tier = same_codec && e.capacity == c.capacity && e.tier != c.tier;
    const bool other_codec = !same_codec && e.capacity == c.capacity && e.tier == c.tier;
    return same_tier_next || other_tier || other_codec || i == r.baseline;
  }
  [[noreturn]] void none_fits(const cache_plan_result&) const {
    throw invalid_input("workload", "no cache plan fits " + s.name + ", not even no cache. Fix: check the tiers");
  }
};

}  // namespace detail

inline cache_plan_result plan_diffusion(const system& s, const diffusion_workload& w, const planner_options& o = {},
                                        std::vector<model::compressor_cost> codecs = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  if (codecs.empty()) codecs = latent_codecs(s);
  const std::size_t identity = detail::identity_codec(codecs, ": latents stored as they are");
  // "No cache" always fits, so there is always a best.
  return solve(detail::diffusion_problem{{s, w, o, codecs, identity}}, o);
}

namespace presets {

//! A 12-billion-parameter diffusion transformer (Flux.1-dev's size) generating 1024×1024 images: 4,096 latent
//! tokens, so one step is about 2·12e9·4096 ≈ 9.8e13 FLOPs (forward pass ≈ 2 FLOPs per parameter per token);
//! 50 steps; weights 24 GB in bf16. The latent size (0.016 GB) is the paper's 720p figure (§5.1.3); the hit-rate
//! curve is the power-law fit to the SYNTHETIC 10,000-request trace of docs/cache.md, generated from its
//! recorded replay (plan/detail/measured_curves.hpp), whose hits reuse about 10 steps on average.
inline diffusion_workload diffusion_dit_12b() {
  diffusion_workload w{
      "diffusion-dit-12b",
      50,
      flops{2.0 * 12e9 * 4096},
      10,
      bytes{0.016e9},
      5,
      model::power_law{per_byte{detail::synthetic_curve_kappa_per_gb * 1e-9}, detail::synthetic_curve_gamma},
      bytes{24e9}};
  assume(w.assumed, "latent_element_bytes", w.latent_element_bytes);
  assume(w.assumed, "error_budget", w.error_budget);
  assume(w.assumed, "precision", w.precision);
  return w;
}
inline std::optional<diffusion_workload> find_diffusion(std::string_view name) {
  if (name == "diffusion-dit-12b") return diffusion_dit_12b();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
