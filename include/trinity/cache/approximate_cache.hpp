#pragma once
//! \file
//! The approximate cache (paper §5.1.3; NIRVANA): entries keyed by prompt
//! embeddings, each holding latents saved at several denoising depths. A
//! request looks up the entry of highest similarity; the reuse table turns
//! that similarity into a depth, and the request resumes from the deepest
//! stored latent at or below it, skipping that many steps. Capacity counts the
//! latents' bytes and is never exceeded: an insert evicts by the policy until
//! it fits, and an entry larger than the whole cache is refused.
//!
//!   cache::approximate_cache<cache::flat_index> c(cache::flat_index(768),
//!       {.capacity = 10_GB, .step_cost = 1e9_FLOP});
//!   auto r = c.lookup(prompt);                 // r.hit, r.depth, r.similarity, r.payload
//!   if (!r.hit || r.depth < 25) c.insert(prompt, latents_at_5_10_15_20_25);
//!
//! Template arguments pick the index (exact or HNSW), the eviction policy, the
//! reuse table (run time or compile time) and what a latent carries.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <trinity/cache/eviction.hpp>
#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/reuse_table.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/detail/byte_count.hpp>
#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cache {

//! A latent that holds nothing but its size: for replaying traces and sizing caches.
struct no_payload {};

//! The state after `depth` denoising steps, `size` bytes of it.
template <class Payload = no_payload>
struct stored_latent {
  int depth = 0;
  bytes size{};
  Payload data{};
};

struct cache_config {
  bytes capacity{};   //!< bytes of latents the cache may hold
  flops step_cost{};  //!< c_step: what one skipped denoising step saves
};

struct cache_stats {
  std::uint64_t lookups = 0, hits = 0, misses = 0, insertions = 0, evictions = 0, rejected = 0;
  std::map<int, std::uint64_t> hits_per_depth;  //!< depth reused → hits
  flops saved{};                                //!< Σ depth × c_step over hits

  [[nodiscard]] double hit_rate() const noexcept {
    return lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0;
  }
};

template <class Payload>
struct lookup_result {
  bool hit = false;
  int depth = 0;                     //!< steps the request skips (0 on a miss)
  int table_depth = 0;               //!< what the reuse table allowed at this similarity
  double similarity = 0;             //!< of the nearest entry; 0 when the cache is empty
  std::uint64_t entry = 0;           //!< the nearest entry's id (valid when something was found)
  const Payload* payload = nullptr;  //!< the reused latent's data, until the entry is evicted
};

template <SimilarityIndex Index = flat_index, EvictionPolicy Eviction = lru, ReusePolicy Reuse = runtime_reuse,
          class Payload = no_payload>
class approximate_cache {
 public:
  using index_type = Index;
  using eviction_type = Eviction;
  using payload_type = Payload;

  approximate_cache(Index index, cache_config config, Reuse reuse = Reuse{}, Eviction eviction = Eviction{})
      : index_(std::move(index)), reuse_(std::move(reuse)), eviction_(std::move(eviction)), config_(config) {
    trinity::detail::require(config.capacity.value() >= 0 && std::isfinite(config.capacity.value()), "capacity",
                             "must be a finite number of bytes, zero or more");
    trinity::detail::require(config.step_cost.value() >= 0 && std::isfinite(config.step_cost.value()), "step_cost",
                             "must be a finite number of FLOPs, zero or more");
    trinity::detail::require(index_.size() == 0, "index", "must start empty; the cache owns what it holds");
  }

  //! Finds the most similar entry and what it lets this request skip; a hit refreshes the entry.
  lookup_result<Payload> lookup(std::span<const float> key) {
    lookup_result<Payload> r;
    const auto found = index_.search(key, 1);
    ++stats_.lookups;
    if (!found.empty()) {
      r.similarity = found.front().similarity;
      r.entry = found.front().id;
      r.table_depth = reuse_.depth(r.similarity);
      auto& e = entries_.at(r.entry);
      if (r.table_depth > 0) {
        // The deepest latent stored at or below the allowed depth.
        const stored_latent<Payload>* use = nullptr;
        for (const auto& l : e.latents)
          if (l.depth <= r.table_depth && (!use || l.depth > use->depth)) use = &l;
        if (use) {
          r.hit = true;
          r.depth = use->depth;
          r.payload = &use->data;
          const flops saved = static_cast<double>(use->depth) * config_.step_cost;
          ++stats_.hits;
          ++stats_.hits_per_depth[use->depth];
          stats_.saved += saved;
          ++e.record.hits;
          e.record.saved_flops += saved.value();
          eviction_.hit(r.entry, e.record);
        }
      }
    }
    if (!r.hit) ++stats_.misses;
    return r;
  }

  //! Stores an entry; evicts until it fits. Returns its id, or nothing when it alone exceeds the capacity.
  std::optional<std::uint64_t> insert(std::span<const float> key, std::vector<stored_latent<Payload>> latents) {
    trinity::detail::require(!latents.empty(), "latents", "an entry needs at least one stored latent");
    double size = 0;
    for (std::size_t i = 0; i < latents.size(); ++i) {
      const auto& l = latents[i];
      trinity::detail::require(l.depth > 0, "latents[" + std::to_string(i) + "].depth",
                               "must be a positive number of steps");
      trinity::detail::require(l.size.value() >= 0 && std::isfinite(l.size.value()),
                               "latents[" + std::to_string(i) + "].size", "must be a finite number of bytes");
      size += l.size.value();
    }
    if (size > config_.capacity.value()) {
      ++stats_.rejected;
      return std::nullopt;
    }
    const std::uint64_t id = next_id_;
    index_.add(id, key);  // checks the key before anything is evicted: a bad key changes nothing
    ++next_id_;
    while (resident_ + size > config_.capacity.value() && !eviction_.empty()) evict(eviction_.pop_victim());
    int deepest = 0;
    for (const auto& l : latents) deepest = std::max(deepest, l.depth);
    entry e{std::move(latents), {size, 0, 0.0, static_cast<double>(deepest) * config_.step_cost.value()}};
    eviction_.inserted(id, e.record);
    entries_.emplace(id, std::move(e));
    resident_ += size;
    ++stats_.insertions;
    return id;
  }

  //! Removes an entry by id; false when there is none.
  bool erase(std::uint64_t id) {
    if (!entries_.contains(id)) return false;
    eviction_.erased(id);
    drop(id);
    return true;
  }

  [[nodiscard]] const cache_stats& stats() const noexcept { return stats_; }
  //! Zeroes the counters (after a warm-up, say); what is cached stays.
  void reset_stats() noexcept { stats_ = {}; }
  [[nodiscard]] bytes resident() const noexcept { return bytes{resident_}; }
  [[nodiscard]] bytes capacity() const noexcept { return config_.capacity; }
  [[nodiscard]] std::size_t entries() const noexcept { return entries_.size(); }
  [[nodiscard]] bool contains(std::uint64_t id) const { return entries_.contains(id); }
  [[nodiscard]] const Index& index() const noexcept { return index_; }
  [[nodiscard]] const Reuse& reuse() const noexcept { return reuse_; }
  [[nodiscard]] int deepest() const noexcept { return reuse_.deepest(); }

 private:
  struct entry {
    std::vector<stored_latent<Payload>> latents;
    entry_record record;
  };

  void evict(std::uint64_t id) {
    drop(id);
    ++stats_.evictions;
  }
  void drop(std::uint64_t id) {
    const auto it = entries_.find(id);
    resident_ -= it->second.record.size_bytes;
    if (entries_.size() == 1) resident_ = 0;  // no rounding residue once empty
    index_.remove(id);
    entries_.erase(it);
  }

  Index index_;
  Reuse reuse_;
  Eviction eviction_;
  cache_config config_;
  std::unordered_map<std::uint64_t, entry> entries_;
  double resident_ = 0;
  std::uint64_t next_id_ = 0;
  cache_stats stats_;
};

}  // namespace trinity::cache
