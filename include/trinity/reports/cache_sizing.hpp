#pragma once
//! \file
//! `trinity model cache`: the memory -> compute trade of an approximate cache of diffusion latents (the AI
//! Trinity paper, §5.1.2) at one capacity: the cache, the hit rate there and where it came from (given, or one of
//! the two hit-rate families, given or fitted to measured points), what a request saves, and the capacity a target
//! saving needs; as JSON and as text.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <trinity/model/cache.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

//! Both families fitted to one file of measured points.
struct cache_fits {
  model::fit_result<model::exponential_saturation> exponential;
  model::fit_result<model::power_law> power;

  [[nodiscard]] bool power_law_better() const { return power.rmse < exponential.rmse; }
  [[nodiscard]] std::string better() const { return power_law_better() ? "power-law" : "exponential-saturation"; }
  [[nodiscard]] nlohmann::json to_json() const {
    return {
        {"points", exponential.points},
        {"exponential_saturation",
         {{"beta", exponential.model.beta}, {"rmse", exponential.rmse}, {"max_abs_error", exponential.max_abs_error}}},
        {"power_law",
         {{"kappa_per_gb", power.model.kappa.value() * 1e9},
          {"gamma", power.model.gamma},
          {"rmse", power.rmse},
          {"max_abs_error", power.max_abs_error}}},
        {"better", better()}};
  }
};

//! What was asked, checked: the cache, its capacity, the curves and where each came from, the hit rate at the
//! capacity and where it came from, and the saving to size for.
struct cache_question {
  model::diffusion_cache cache;
  bytes capacity{};
  std::optional<model::exponential_saturation> exp_curve;
  std::optional<model::power_law> pow_curve;
  std::string exp_origin, pow_origin;
  std::optional<cache_fits> fits;
  double h = 0;
  std::string h_origin;
  std::optional<flops> target;
};

namespace detail {
inline nlohmann::json curve_json(const model::diffusion_cache& c, const auto& h, bytes capacity) {
  return {{"hit_rate_at_capacity", h(capacity)},
          {"expected_cost_flops", model::expected_cost(c, h, capacity).value()},
          {"marginal_flops_per_byte", model::marginal_cost(c, h, capacity).value()}};
}
}  // namespace detail

[[nodiscard]] inline nlohmann::json to_json(const cache_question& q) {
  const auto& c = q.cache;
  const auto trade = model::memory_for_compute{c}.price({q.capacity, q.h});
  nlohmann::json out{{"model", "cache"},
                     {"steps", c.steps},
                     {"step_flops", c.step_cost.value()},
                     {"reuse_depth", c.reuse_depth},
                     {"entry_size_bytes", c.entry_size.value()},
                     {"capacity_bytes", q.capacity.value()},
                     {"full_cost_flops", c.full_cost().value()},
                     {"saved_per_hit_flops", c.saved_per_hit().value()},
                     {"entries", c.entries(q.capacity)},
                     {"hit_rate", q.h},
                     {"hit_rate_from", q.h_origin},
                     {"saved_flops_per_request", c.saved_per_request(q.h).value()},
                     {"expected_cost_flops", c.expected_cost(q.h).value()},
                     {"average_flops_saved_per_byte", c.average_benefit(q.capacity, q.h).value()},
                     {"trade",
                      {{"spends", "memory"},
                       {"saves", "compute"},
                       {"spent_bytes", trade.spent().value()},
                       {"saved_flops", trade.saved().value()}}}};
  const auto add_curve = [&](const char* key, const auto& curve, const std::string& origin) {
    out[key] = detail::curve_json(c, curve, q.capacity);
    out[key]["from"] = origin;
    if (q.target) out[key]["capacity_for_target_bytes"] = model::memory_for_saving(c, curve, *q.target).value();
  };
  if (q.exp_curve) {
    add_curve("exponential_saturation", *q.exp_curve, q.exp_origin);
    out["exponential_saturation"]["beta"] = q.exp_curve->beta;
  }
  if (q.pow_curve) {
    add_curve("power_law", *q.pow_curve, q.pow_origin);
    out["power_law"]["kappa_per_gb"] = q.pow_curve->kappa.value() * 1e9;
    out["power_law"]["gamma"] = q.pow_curve->gamma;
  }
  if (q.fits) out["fits"] = q.fits->to_json();
  if (q.target) out["target_saving_flops"] = q.target->value();
  return out;
}

namespace detail {
inline void print_cache_fits(std::ostream& os, const cache_fits& fits) {
  const auto& e = fits.exponential;
  const auto& p = fits.power;
  os << "\nFits to " << e.points << " measured points:\n";
  table t({"family", "parameters", "rmse", "max |error|"});
  t.add({"exponential saturation", "beta = " + significant(e.model.beta, 4), significant(e.rmse, 4),
         significant(e.max_abs_error, 4)});
  t.add({"power law",
         "kappa = " + significant(p.model.kappa.value() * 1e9, 4) + "/GB, gamma = " + significant(p.model.gamma, 4),
         significant(p.rmse, 4), significant(p.max_abs_error, 4)});
  t.print(os);
  os << "better fit: " << fits.better() << "\n";
}
}  // namespace detail

inline void print(std::ostream& os, const cache_question& q) {
  const auto& c = q.cache;
  const flops saved = c.saved_per_request(q.h);
  const flops_per_byte rate = c.average_benefit(q.capacity, q.h);
  const auto trade = model::memory_for_compute{c}.price({q.capacity, q.h});
  os << "Memory -> compute: an approximate cache of diffusion latents (paper §5.1.2)\n"
     << "  a full generation costs C_full = " << c.steps << " steps x " << to_string(c.step_cost) << " = "
     << to_string(c.full_cost()) << "\n"
     << "  a hit at reuse depth r = " << c.reuse_depth << " skips c_saved(r) = " << to_string(c.saved_per_hit()) << "\n"
     << "  capacity M = " << to_string(q.capacity) << " holds N(M) = floor(M / s_e) = " << c.entries(q.capacity)
     << " entries of " << to_string(c.entry_size) << "\n"
     << "  hit rate h = " << significant(q.h, 4) << " (" << q.h_origin << ")\n"
     << "  saved per request h·c_saved = " << to_string(saved) << "; E[C] = " << to_string(c.expected_cost(q.h)) << " ("
     << significant(100.0 * (saved / c.full_cost()), 3) << "% less)\n"
     << "Trade: " << to_string(trade.spent()) << " of memory saves " << to_string(trade.saved())
     << " per request: " << to_string(flops{rate.value() * 1e9}) << " per GB";
  if (rate > flops_per_byte{})
    os << ", i.e. every " << to_string(bytes{2e9 / rate.value()}) << " of memory yields 2 GFLOP";
  os << ".\n";
  const auto describe = [&](std::string_view name, const auto& curve, const std::string& origin,
                            const std::string& params) {
    os << "  " << name << " (" << origin << ", " << params << "): h(M) = " << significant(curve(q.capacity), 4)
       << ", marginal dE/dM = " << to_string(flops{model::marginal_cost(c, curve, q.capacity).value() * 1e9})
       << " per GB";
    if (q.target)
      os << "; saving " << to_string(*q.target) << " per request needs "
         << to_string(model::memory_for_saving(c, curve, *q.target));
    os << "\n";
  };
  if (q.exp_curve)
    describe("exponential saturation", *q.exp_curve, q.exp_origin, "beta = " + significant(q.exp_curve->beta, 4));
  if (q.pow_curve)
    describe("power law", *q.pow_curve, q.pow_origin,
             "kappa = " + significant(q.pow_curve->kappa.value() * 1e9, 4) +
                 "/GB, gamma = " + significant(q.pow_curve->gamma, 4));
  if (q.fits) detail::print_cache_fits(os, *q.fits);
}

}  // namespace trinity::reports
