#pragma once
//! \file
//! Replays a request trace through an approximate cache of a given capacity,
//! with the semantics `trinity cache replay` documents (docs/cache.md):
//!  1. requests run in timestamp order;
//!  2. each finds the cached entry of highest cosine similarity; the reuse
//!     table gives the depth; depth > 0 is a hit, which refreshes that entry's
//!     recency and saves depth × c_step;
//!  3. every request that is not a hit at the deepest depth then inserts its
//!     own entry, holding latents at every depth of the table (5 × latent size
//!     for Table 1), evicting by the policy until it fits;
//!  4. counters start after the warm-up fraction of the requests.
//! The points it yields, (capacity, hit rate), are what model/fit.hpp fits.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <trinity/cache/approximate_cache.hpp>
#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cache {

struct replay_options {
  bytes capacity{};
  bytes latent_size{};   //!< one stored latent (0.016 GB at 720p, paper §5.1.3)
  flops step_cost{1e9};  //!< c_step (the paper's worked example, §5.1.2)
  int steps = 50;        //!< S, denoising steps of a full request
  double warmup = 0.2;   //!< share of requests that only warm the cache
};

struct replay_result {
  bytes capacity{}, latent_size{}, entry_size{};
  std::uint64_t requests = 0, hits = 0, insertions = 0, evictions = 0;
  std::map<int, std::uint64_t> hits_per_depth;
  flops saved{};
  double hit_rate = 0;
  double saved_share = 0;  //!< saved / (requests × S × c_step)
  std::size_t entries_at_end = 0;
};

template <class Cache>
replay_result replay(Cache& cache, const embedding_matrix& embeddings, std::span<const request> trace,
                     const replay_options& o) {
  trinity::detail::require(o.warmup >= 0 && o.warmup < 1, "warmup",
                           "is a share of the requests: it must lie in [0, 1)");
  trinity::detail::require(o.steps >= cache.deepest(), "steps",
                           "a request cannot skip more steps (" + std::to_string(cache.deepest()) + ") than it runs");
  trinity::detail::require(o.latent_size.value() > 0 && std::isfinite(o.latent_size.value()), "latent_size",
                           "must be a positive, finite number of bytes");
  const auto depths = cache.reuse().depths();
  const std::size_t warm = static_cast<std::size_t>(o.warmup * static_cast<double>(trace.size()));
  std::vector<stored_latent<typename Cache::payload_type>> latents;
  for (const int d : depths) latents.push_back({d, o.latent_size, {}});
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (i == warm) cache.reset_stats();
    if (trace[i].row >= embeddings.rows())
      throw invalid_input("trace[" + std::to_string(i) + "].row",
                          "is past the embeddings' " + std::to_string(embeddings.rows()) + " rows");
    const auto key = embeddings.row(trace[i].row);
    const auto r = cache.lookup(key);
    if (!r.hit || r.depth < cache.deepest()) cache.insert(key, latents);
  }
  const auto& s = cache.stats();
  replay_result out;
  out.capacity = o.capacity;
  out.latent_size = o.latent_size;
  out.entry_size = static_cast<double>(depths.size()) * o.latent_size;
  out.requests = s.lookups;
  out.hits = s.hits;
  out.insertions = s.insertions;
  out.evictions = s.evictions;
  out.hits_per_depth = s.hits_per_depth;
  out.saved = s.saved;
  out.hit_rate = s.hit_rate();
  const double full = static_cast<double>(s.lookups) * o.steps * o.step_cost.value();
  out.saved_share = full > 0 ? s.saved.value() / full : 0.0;
  out.entries_at_end = cache.entries();
  return out;
}

//! Replays with a fresh cache built by make_index() at each capacity of o (o.capacity is ignored).
template <class MakeIndex, class Eviction = lru, class Reuse = runtime_reuse>
std::vector<replay_result> replay_curve(MakeIndex make_index, const embedding_matrix& embeddings,
                                        std::span<const request> trace, std::span<const bytes> capacities,
                                        replay_options o, Reuse reuse = Reuse{}) {
  std::vector<replay_result> out;
  for (const bytes c : capacities) {
    using index_t = decltype(make_index());
    approximate_cache<index_t, Eviction, Reuse> cache(make_index(), {c, o.step_cost}, reuse);
    o.capacity = c;
    out.push_back(replay(cache, embeddings, trace, o));
  }
  return out;
}

}  // namespace trinity::cache
