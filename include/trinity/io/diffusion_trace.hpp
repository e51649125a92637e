#pragma once
//! \file
//! A diffusion workload's hit-rate curve from the request trace it brought
//! (workloads/diffusion.hpp): the trace replayed through the exact cache (flat index,
//! LRU, Table 1 reuse) at each capacity, the power law fitted to the points,
//! and, unless the workload gave it, the mean steps a hit skips measured; then
//! the workload is validated against the system.
//!
//!   auto file = workloads::diffusion::read_file(j, system, base);
//!   if (file.trace) w = io::fit_trace(file.workload, *file.trace, system);

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <trinity/cache/approximate_cache.hpp>
#include <trinity/cache/eviction.hpp>
#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::io {

//! The exact cache the planner's curves are measured with, replayed over a trace.
inline cache::replay_result replay_exact(const cache::embedding_matrix& e, const std::vector<cache::request>& trace,
                                         const cache::replay_options& o) {
  cache::approximate_cache<cache::flat_index, cache::lru> c(cache::flat_index(e.dimension), {o.capacity, o.step_cost});
  return cache::replay(c, e, trace, o);
}

//! w with its hit rate (and reuse depth, when the trace is to measure it) fitted from the trace, validated.
//! `progress` hears of each replay before it starts.
inline plan::diffusion_workload fit_trace(plan::diffusion_workload w, const diffusion_trace& t, const plan::system& s,
                                          const std::function<void(const std::string&)>& progress = {}) {
  cache::embedding_matrix e;
  std::vector<cache::request> requests;
  try {
    e = cache::read_fvecs(t.embeddings);
  } catch (const invalid_input& x) {
    fail("trace.embeddings", x.what());
  }
  try {
    requests = cache::read_trace(t.requests, e.rows());
  } catch (const invalid_input& x) {
    fail("trace.requests", x.what());
  }
  std::vector<model::capacity_point> points;
  double saved = 0, hits = 0;
  for (const bytes c : t.capacities) {
    if (progress)
      progress("replaying " + std::to_string(requests.size()) + " requests of the workload's trace at " + to_string(c));
    const cache::replay_options o{.capacity = c,
                                  .latent_size = w.latent_size,
                                  .step_cost = w.step_cost,
                                  .steps = static_cast<int>(w.steps),
                                  .warmup = 0.2};
    const auto m = replay_exact(e, requests, o);
    if (m.hit_rate > 0 && m.hit_rate < 1) points.push_back({c, m.hit_rate});
    saved += m.saved.value();
    hits += static_cast<double>(m.hits);
  }
  if (points.size() < 2)
    fail("trace",
         "gave fewer than two capacities with a hit rate strictly between 0 and 1; choose capacities "
         "around the trace's working set");
  w.hit_rate = model::fit_power_law(points).model;
  if (t.measure_reuse_depth && hits > 0)
    w.reuse_depth = static_cast<std::size_t>(std::lround(saved / (hits * w.step_cost.value())));
  return detail::validated(std::move(w), s);
}

}  // namespace trinity::io
