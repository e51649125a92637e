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
//! Candidates: no cache, or a capacity from 1 GB doubling up to what the tier holds, in each tier.
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
#include <trinity/plan/planner.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct diffusion_workload {
  std::string name;
  std::size_t steps = 50;          //!< S
  flops step_cost{};               //!< c_step
  std::size_t reuse_depth = 10;    //!< r: steps an average hit skips (`trinity cache replay` prints it)
  bytes latent_size{};             //!< one stored latent
  std::size_t stored_depths = 5;   //!< latents per entry (Table 1 stores 5, 10, 15, 20, 25)
  model::power_law hit_rate{};     //!< h(M), fitted to a replayed trace
  bytes model_bytes{};             //!< the model's weights, resident in tier 0
  std::string precision = "bf16";  //!< the precision a denoising step runs at (device.rate)

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
  trinity::detail::require(w.model_bytes <= s.tiers.front().capacity, "workload.model_bytes",
                           to_string(w.model_bytes) + " of weights do not fit " + s.tiers.front().name + " (" +
                               to_string(s.tiers.front().capacity) + ")");
}

struct cache_plan {
  bytes capacity{};      //!< 0: no cache
  std::size_t tier = 0;  //!< where the cache lives
  friend bool operator==(const cache_plan&, const cache_plan&) = default;
};

struct cache_cost {
  double hit_rate = 0;
  flops compute{};
  seconds compute_time{}, read_time{}, write_time{};
  std::vector<bytes> tier_bytes;
  resource_vector total;  //!< per request: compute, bytes moved to and from the cache, bytes held, energy, time
  double dollars = 0;     //!< the device (and any priced tier) rented for the request
};

inline cache_cost price(const system& s, const diffusion_workload& w, const cache_plan& p) {
  cache_cost c;
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  c.tier_bytes[0] = w.model_bytes;
  const model::diffusion_cache m{w.steps, w.step_cost, w.reuse_depth, w.entry_size()};
  c.hit_rate = p.capacity > bytes{} ? w.hit_rate(p.capacity) : 0.0;
  c.compute = m.expected_cost(c.hit_rate);
  c.compute_time = c.compute / s.device.rate(w.precision);
  bytes moved{};
  if (p.capacity > bytes{}) {
    const auto& t = s.tiers[p.tier];
    c.tier_bytes[p.tier] += p.capacity;
    c.read_time = c.hit_rate * (t.latency + w.latent_size / t.bandwidth);
    c.write_time = (1.0 - c.hit_rate) * (t.latency + w.entry_size() / t.bandwidth);
    moved = c.hit_rate * w.latent_size + (1.0 - c.hit_rate) * w.entry_size();
    c.total.energy = moved * t.energy;
  }
  c.total.compute = c.compute;
  c.total.bandwidth = moved;
  c.total.memory = p.capacity;
  c.total.time = c.compute_time + c.read_time + c.write_time;
  c.total.energy += c.compute_time * s.device.power;
  c.dollars = dollars(s, c.total.time, c.tier_bytes, bytes{});
  return c;
}

struct cache_evaluated {
  cache_plan plan;
  cache_cost cost;
  std::string violation;
  [[nodiscard]] bool fits() const noexcept { return violation.empty(); }
};

struct cache_plan_result {
  std::vector<cache_evaluated> candidates;
  std::vector<std::size_t> pareto;  //!< feasible, non-dominated over (time, energy, cache bytes, dollars)
  std::size_t choice = 0, baseline = 0;
  plan::explanation explanation;
  [[nodiscard]] const cache_evaluated& chosen() const { return candidates.at(choice); }
};

inline std::string describe(const cache_plan& p, const system& s) {
  return p.capacity > bytes{} ? to_string(p.capacity) + " cache in " + s.tiers[p.tier].name : std::string("no cache");
}

inline cache_plan_result plan_diffusion(const system& s, const diffusion_workload& w, const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  cache_plan_result r;
  r.candidates.push_back({{}, price(s, w, {}), {}});
  for (std::size_t t = 0; t < s.tiers.size(); ++t)
    for (double gb = 1; gb * 1e9 <= s.tiers[t].capacity.value(); gb *= 2) {
      const cache_plan p{bytes{gb * 1e9}, t};
      cache_evaluated e{p, price(s, w, p), {}};
      if (e.cost.tier_bytes[t] > s.tiers[t].capacity)
        e.violation = s.tiers[t].name + " capacity: needs " + to_string(e.cost.tier_bytes[t]) + " of " +
                      to_string(s.tiers[t].capacity) + " (the model's weights share it)";
      r.candidates.push_back(std::move(e));
    }
  const auto score = [&](const cache_cost& c) { return detail::score(c.total.time, c.total.energy, c.dollars, o.objective); };
  // The objective, then the smaller cache: memory not needed is memory left for something else.
  const auto better = [&](const cache_evaluated& a, const cache_evaluated& b) {
    const double sa = score(a.cost), sb = score(b.cost);
    if (sa != sb) return sa < sb;
    return a.plan.capacity < b.plan.capacity;
  };
  std::size_t best = 0;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& e = r.candidates[i];
    if (!e.fits()) continue;
    if (better(e, r.candidates[best])) best = i;
    bool dominated = false;
    const auto keys = [](const cache_cost& c) {
      return std::array{c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.dollars};
    };
    for (std::size_t j = 0; j < r.candidates.size() && !dominated; ++j)
      dominated = j != i && r.candidates[j].fits() && detail::dominates_on(keys(r.candidates[j].cost), keys(e.cost));
    if (!dominated) r.pareto.push_back(i);
  }
  r.choice = best;
  const auto& c = r.chosen();
  const auto& b = r.candidates[0].cost;
  auto& x = r.explanation;
  x.binding_before = "compute: " + to_string(b.compute) + " per request (" + to_string(b.compute_time) + ")";
  x.binding_after = c.plan.capacity > bytes{}
                        ? "compute " + to_string(c.cost.compute_time) + " + cache reads and writes " +
                              to_string(c.cost.read_time + c.cost.write_time) + "; hit rate " +
                              units::detail::format_number(c.cost.hit_rate)
                        : x.binding_before;
  if (c.plan.capacity > bytes{})
    x.trades.push_back(describe(c.plan, s) + " (memory for compute): compute " + to_string(b.compute) + " -> " +
                       to_string(c.cost.compute) + " per request, request time " + to_string(b.total.time) + " -> " +
                       to_string(c.cost.total.time));
  else
    x.trades.push_back("none: no cache pays for its reads and writes here");
  // Neighbours: the next capacity down and up in the same tier, and the same capacity in other tiers.
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& e = r.candidates[i];
    const bool same_tier_next = e.plan.tier == c.plan.tier && (e.plan.capacity == 2.0 * c.plan.capacity ||
                                                               e.plan.capacity * 2.0 == c.plan.capacity);
    const bool other_tier = e.plan.capacity == c.plan.capacity && e.plan.tier != c.plan.tier;
    const bool none = i == 0 && i != r.choice;
    if (!(same_tier_next || other_tier || none) || i == r.choice) continue;
    if (!e.fits()) x.rejected.push_back(describe(e.plan, s) + ": breaks the " + e.violation);
    else
      x.rejected.push_back(describe(e.plan, s) + ": " +
                           detail::versus(e.cost.total.time, e.cost.total.energy, e.cost.dollars, c.cost.total.time,
                                          c.cost.total.energy, c.cost.dollars, o.objective, "request time"));
  }
  return r;
}

namespace presets {

//! A 12-billion-parameter diffusion transformer (Flux.1-dev's size) generating 1024×1024 images: 4,096 latent
//! tokens, so one step is about 2·12e9·4096 ≈ 9.8e13 FLOPs (forward pass ≈ 2 FLOPs per parameter per token);
//! 50 steps; weights 24 GB in bf16. The latent size (0.016 GB) is the paper's 720p figure (§5.1.3); the hit-rate
//! curve is the power-law fit to the SYNTHETIC 10,000-request trace in docs/cache.md (kappa 0.1151/GB,
//! gamma 0.6996), whose hits reuse 10 steps on average.
inline diffusion_workload diffusion_dit_12b() {
  return {"diffusion-dit-12b", 50, flops{2.0 * 12e9 * 4096}, 10, bytes{0.016e9}, 5,
          model::power_law{per_byte{0.1151e-9}, 0.6996}, bytes{24e9}};
}
inline std::optional<diffusion_workload> find_diffusion(std::string_view name) {
  if (name == "diffusion-dit-12b") return diffusion_dit_12b();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
