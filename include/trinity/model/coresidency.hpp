#pragma once
//! \file
//! Spatial sharing for multimodal pre-processing (paper §5.2): a curation
//! pipeline runs CPU-bound operators (decode, split) and GPU-bound models
//! (aesthetic scoring, OCR, captioning). With one model per device, a device
//! whose model has no work idles, and the devices split among the models in
//! whole numbers never match their loads; keeping several models resident on
//! a device (spending its memory) lets it run whichever has work.
//!
//! A placement says which models each device holds. Samples flow at X per
//! second when the models' work can be spread over the devices that hold them:
//! by Hall's condition on the bipartite models-devices graph, the most is
//!   X_gpu = min over sets J of models of  Σ_{d holding any of J} η_d / Σ_{j∈J} w_j
//! with w_j = (share of samples reaching j) · (device-seconds per sample of j)
//! and η_d the share of its compute a device keeps (1 alone; the sharing
//! efficiency when it holds more than one model, for their interference).
//! The CPU operators give X_cpu = W / Σ_i f_i · t_i over W workers, and
//!   X = min(X_cpu, X_gpu),  device utilisation = X · Σ_j w_j / D.
//!
//! placement_for(budget) finds a placement whose devices each hold models
//! within `budget` bytes: devices are alike, so it tries every multiset of the
//! sets of models that fit when there are at most 200,000 (ties: fewer models
//! held); past that, a local search from the best one-model-per-device split
//! over how many devices hold each set (see the code for its moves). Sweeping the budget gives throughput and
//! utilisation against the memory given to co-residency, and the smallest
//! budget past which more memory stops helping.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! One operator of the pipeline.
struct curation_operator {
  std::string name;
  bool gpu = false;               //!< a model on a device, or a CPU-bound operator
  double seconds_per_sample = 0;  //!< on one CPU worker, or on one whole device with nothing beside it
  bytes memory{};                 //!< a model's resident footprint on a device (weights and working set)
  double share = 1;               //!< share of the samples that reach it (filters before it drop some)
};

struct curation_cluster {
  std::size_t cpu_workers = 1;
  std::size_t devices = 1;
  bytes device_memory{};
  double sharing_efficiency = 1;  //!< compute a device keeps when it runs more than one model
};

inline void validate(const std::vector<curation_operator>& ops, const curation_cluster& c) {
  trinity::detail::require(!ops.empty(), "operators", "give at least one operator");
  std::size_t models = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string at = "operators[" + std::to_string(i) + "]";
    trinity::detail::require(ops[i].seconds_per_sample > 0, at + ".seconds_per_sample", "must be positive");
    trinity::detail::require(ops[i].share > 0 && ops[i].share <= 1, at + ".share", "must lie in (0, 1]");
    trinity::detail::require(ops[i].memory.value() >= 0, at + ".memory", "must not be negative");
    if (ops[i].gpu) {
      ++models;
      trinity::detail::require(ops[i].memory <= c.device_memory, at + ".memory",
                               "is more than a device holds: the model cannot be placed");
    }
  }
  trinity::detail::require(models <= 16, "operators", "at most 16 models (the bound is exact over their subsets)");
  trinity::detail::require(c.cpu_workers >= 1, "cpu_workers", "must be at least 1");
  trinity::detail::require(c.devices >= 1, "devices", "must be at least 1");
  trinity::detail::require(c.sharing_efficiency > 0 && c.sharing_efficiency <= 1, "sharing_efficiency",
                           "must lie in (0, 1]");
}

//! Which models each device holds: holds[d] is a bit set over the pipeline's models, in their order.
using device_models = std::vector<std::uint32_t>;

namespace detail {
inline std::vector<double> model_work(const std::vector<curation_operator>& ops) {
  std::vector<double> w;
  for (const auto& o : ops)
    if (o.gpu) w.push_back(o.share * o.seconds_per_sample);
  return w;
}
inline double cpu_rate(const std::vector<curation_operator>& ops, const curation_cluster& c) {
  double work = 0;
  for (const auto& o : ops)
    if (!o.gpu) work += o.share * o.seconds_per_sample;
  return work > 0 ? static_cast<double>(c.cpu_workers) / work : std::numeric_limits<double>::infinity();
}
}  // namespace detail

struct curation_rates {
  double samples_per_second = 0;
  double cpu_bound = 0;              //!< X_cpu
  double gpu_bound = 0;              //!< X_gpu
  double device_utilization = 0;     //!< busy share of the devices' time
  std::uint32_t binding_models = 0;  //!< the set of models that bounds X_gpu (empty when CPU-bound or no models)
};

namespace detail {
//! Hall's bound on X_gpu for a placement, and the set of models that binds it; nothing checked, for the
//! placement search, which calls it once per trial.
struct gpu_bound_result {
  double bound = std::numeric_limits<double>::infinity();
  std::uint32_t binding = 0;
};
inline gpu_bound_result gpu_bound(const std::vector<double>& w, const device_models& holds, double sharing) {
  gpu_bound_result r;
  for (std::uint32_t J = 1; J < (std::uint32_t{1} << w.size()); ++J) {
    double work = 0, compute = 0;
    for (std::size_t j = 0; j < w.size(); ++j)
      if ((J >> j) & 1u) work += w[j];
    for (const auto h : holds)
      if (h & J) compute += std::popcount(h) > 1 ? sharing : 1.0;
    const double x = compute / work;
    if (x < r.bound) r = {x, J};
  }
  return r;
}
}  // namespace detail

//! Samples per second and the devices' utilisation for a placement.
inline curation_rates rates(const std::vector<curation_operator>& ops, const curation_cluster& c,
                            const device_models& holds) {
  validate(ops, c);
  trinity::detail::require(holds.size() == c.devices, "placement", "needs one entry per device");
  const auto w = detail::model_work(ops);
  for (std::size_t d = 0; d < holds.size(); ++d) {
    bytes used{};
    std::size_t i = 0;
    for (const auto& o : ops)
      if (o.gpu && ((holds[d] >> i++) & 1u)) used += o.memory;
    trinity::detail::require(used <= c.device_memory, "placement",
                             "device " + std::to_string(d) + " holds more than its memory");
  }
  curation_rates r;
  r.cpu_bound = detail::cpu_rate(ops, c);
  const auto g = detail::gpu_bound(w, holds, c.sharing_efficiency);
  r.gpu_bound = g.bound;
  r.binding_models = g.binding;
  r.samples_per_second = std::min(r.cpu_bound, r.gpu_bound);
  if (r.cpu_bound <= r.gpu_bound) r.binding_models = 0;
  double total = 0;
  for (double x : w) total += x;
  r.device_utilization = r.samples_per_second * total / static_cast<double>(c.devices);
  return r;
}

namespace detail {
//! The models' memory, and whether a set of them (bit j: model j) fits a device's budget.
struct model_sets {
  std::vector<bytes> memory;
  bytes budget;
  [[nodiscard]] bool fits(std::uint32_t set) const {
    bytes used{};
    for (std::size_t j = 0; j < memory.size(); ++j)
      if ((set >> j) & 1u) used += memory[j];
    return used <= budget;
  }
};

inline int models_held(const device_models& h) {
  int n = 0;
  for (auto x : h) n += std::popcount(x);
  return n;
}

//! A first placement: with a device per model or more, one model per device in whole numbers (each further
//! device to the model with the least per its work); with fewer, each model packed onto the first device it fits.
inline device_models first_placement(const std::vector<double>& w, const model_sets& m, std::size_t devices) {
  const std::size_t k = w.size();
  device_models holds(devices, 0);
  if (devices >= k) {
    std::vector<std::size_t> n(k, 1);
    for (std::size_t d = k; d < devices; ++d) {
      std::size_t best = 0;
      for (std::size_t j = 1; j < k; ++j)
        if (static_cast<double>(n[j]) / w[j] < static_cast<double>(n[best]) / w[best]) best = j;
      ++n[best];
    }
    std::size_t d = 0;
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t i = 0; i < n[j]; ++i) holds[d++] = std::uint32_t{1} << j;
    return holds;
  }
  for (std::size_t j = 0; j < k; ++j) {
    std::size_t d = 0;
    while (d < devices && !m.fits(holds[d] | (std::uint32_t{1} << j))) ++d;
    trinity::detail::require(d < devices, "budget",
                             "fewer devices than models, and the models do not fit "
                             "together within the budget");
    holds[d] |= std::uint32_t{1} << j;
  }
  return holds;
}

//! Every multiset of `devices` sets tried (devices are alike): the best bound, then the fewest models held
//! (memory spent only where it buys throughput).
inline device_models best_of_every_placement(const std::vector<double>& w, const std::vector<std::uint32_t>& sets,
                                             const curation_cluster& c, device_models holds) {
  double now = gpu_bound(w, holds, c.sharing_efficiency).bound;
  std::vector<std::size_t> pick(c.devices, 0);  // nondecreasing indices into sets
  device_models trial(c.devices);
  for (;;) {
    for (std::size_t d = 0; d < c.devices; ++d) trial[d] = sets[pick[d]];
    const double x = gpu_bound(w, trial, c.sharing_efficiency).bound;
    if (x > now * (1 + 1e-12) || (x >= now * (1 - 1e-12) && models_held(trial) < models_held(holds)))
      holds = trial, now = x;
    std::size_t d = c.devices;
    while (d > 0 && pick[d - 1] + 1 == sets.size()) --d;
    if (d == 0) break;
    ++pick[d - 1];
    for (std::size_t e = d; e < c.devices; ++e) pick[e] = pick[d - 1];
  }
  return holds;
}

//! Local search over how many devices hold each set (devices are alike), while the bound rises: move one device
//! to another set; then merge two devices' sets onto one and give the other any set (how light models pack
//! together, freeing a device for a heavy one); then, where it is cheap enough, move any two devices at once.
inline device_models improved_placement(const std::vector<double>& w, const model_sets& m,
                                        const std::vector<std::uint32_t>& sets, const curation_cluster& c,
                                        const device_models& start) {
  const std::size_t k = w.size();
  const std::size_t T = sets.size();
  const auto index_of = [&](std::uint32_t set) {
    return static_cast<std::size_t>(std::find(sets.begin(), sets.end(), set) - sets.begin());
  };
  std::vector<std::size_t> n(T, 0);
  for (const auto h : start) ++n[index_of(h)];
  std::vector<double> work(std::size_t{1} << k, 0.0);
  for (std::uint32_t J = 1; J < (std::uint32_t{1} << k); ++J)
    for (std::size_t j = 0; j < k; ++j)
      if ((J >> j) & 1u) work[J] += w[j];
  const auto bound = [&](const std::vector<std::size_t>& count) {
    double x = std::numeric_limits<double>::infinity();
    for (std::uint32_t J = 1; J < (std::uint32_t{1} << k); ++J) {
      double compute = 0;
      for (std::size_t t = 0; t < T; ++t)
        if (count[t] && (sets[t] & J))
          compute += static_cast<double>(count[t]) * (std::popcount(sets[t]) > 1 ? c.sharing_efficiency : 1.0);
      x = std::min(x, compute / work[J]);
    }
    return x;
  };
  double now = bound(n);
  // Applies `change` (removals, then additions) when the bound rises; otherwise leaves n as it was.
  const auto attempt = [&](std::initializer_list<std::size_t> out, std::initializer_list<std::size_t> in) {
    std::size_t taken = 0;
    for (auto t : out) {
      if (n[t] == 0) {
        for (auto u = out.begin(); taken > 0; ++u, --taken) ++n[*u];
        return false;
      }
      --n[t];
      ++taken;
    }
    for (auto t : in) ++n[t];
    const double x = bound(n);
    if (x > now * (1 + 1e-12)) {
      now = x;
      return true;
    }
    for (auto t : in) --n[t];
    for (auto t : out) ++n[t];
    return false;
  };
  const bool pairs = static_cast<double>(T) * T * T * T * static_cast<double>(T << k) <= 2e8;
  for (bool improved = true; improved;) {
    improved = false;
    for (std::size_t a = 0; a < T; ++a)
      for (std::size_t b = 0; b < T; ++b) improved |= a != b && attempt({a}, {b});
    if (improved) continue;
    for (std::size_t a = 0; a < T && !improved; ++a)
      for (std::size_t b = a; b < T && !improved; ++b) {
        if (!m.fits(sets[a] | sets[b])) continue;
        const std::size_t u = index_of(sets[a] | sets[b]);
        for (std::size_t d = 0; d < T && !improved; ++d) improved = attempt({a, b}, {u, d});
      }
    if (improved || !pairs) continue;
    for (std::size_t a = 0; a < T && !improved; ++a)
      for (std::size_t b = a; b < T && !improved; ++b)
        for (std::size_t x = 0; x < T && !improved; ++x)
          for (std::size_t y = x; y < T && !improved; ++y) improved = attempt({a, b}, {x, y});
  }
  device_models holds;
  for (std::size_t t = 0; t < T; ++t) holds.insert(holds.end(), n[t], sets[t]);
  return holds;
}
}  // namespace detail

//! A placement whose devices each hold models within `budget` bytes (see the file comment).
inline device_models placement_for(const std::vector<curation_operator>& ops, const curation_cluster& c, bytes budget) {
  validate(ops, c);
  const auto w = detail::model_work(ops);
  detail::model_sets m{{}, budget};
  for (const auto& o : ops)
    if (o.gpu) m.memory.push_back(o.memory);
  const std::size_t k = w.size();
  if (k == 0) return device_models(c.devices, 0);
  for (std::size_t j = 0; j < k; ++j)
    trinity::detail::require(m.memory[j] <= budget, "budget", "is smaller than a model: every model needs a device");
  const auto first = detail::first_placement(w, m, c.devices);
  // Devices are alike, so a placement is a multiset of the sets of models that fit. Where there are few
  // enough of those, try them all; otherwise search locally from the first placement.
  std::vector<std::uint32_t> sets;
  for (std::uint32_t set = 1; set < (std::uint32_t{1} << k); ++set)
    if (m.fits(set)) sets.push_back(set);
  double multisets = 1;  // C(|sets| + D - 1, D)
  for (std::size_t i = 1; i <= c.devices; ++i)
    multisets = multisets * static_cast<double>(sets.size() + i - 1) / static_cast<double>(i);
  if (multisets <= 200000) return detail::best_of_every_placement(w, sets, c, first);
  return detail::improved_placement(w, m, sets, c, first);
}

//! One point of the sweep: a budget, the placement it allows and what it gives.
struct coresidency_point {
  bytes budget{};
  device_models holds;
  curation_rates rates;
};

//! Throughput and utilisation against the memory per device given to co-residency, from the largest model
//! (one model per device) to the device's memory, in `steps` even steps.
inline std::vector<coresidency_point> sweep(const std::vector<curation_operator>& ops, const curation_cluster& c,
                                            std::size_t steps = 8) {
  validate(ops, c);
  trinity::detail::require(steps >= 1, "steps", "must be at least 1");
  bytes largest{};
  for (const auto& o : ops)
    if (o.gpu) largest = std::max(largest, o.memory);
  std::vector<coresidency_point> out;
  for (std::size_t i = 0; i <= steps; ++i) {
    const bytes b = largest + (c.device_memory - largest) * (static_cast<double>(i) / static_cast<double>(steps));
    auto h = placement_for(ops, c, b);
    out.push_back({b, h, rates(ops, c, h)});
  }
  return out;
}

//! The smallest budget of a sweep whose throughput the largest does not beat: more memory stops helping.
inline bytes enough_memory(const std::vector<coresidency_point>& points) {
  trinity::detail::require(!points.empty(), "points", "give a sweep");
  const double best = points.back().rates.samples_per_second;
  for (const auto& p : points)
    if (p.rates.samples_per_second >= best * (1 - 1e-9)) return p.budget;
  return points.back().budget;
}

}  // namespace trinity::model
