#pragma once
//! \file
//! A prefix cache of KV blocks across tiers: device memory (HBM) first, then
//! host or CXL memory, then optionally NVMe, each with its own capacity and
//! the link a block is loaded back over. A request's chain of block ids:
//!  - hits the longest prefix whose blocks are all cached, in whatever tier;
//!  - each hit block in a lower tier is loaded back when that beats
//!    recomputing it (latency + block bytes / link bandwidth against the
//!    block's prefill FLOPs at its depth / the device's rate); otherwise its
//!    KV is recomputed, as for a miss;
//!  - afterwards every block of the chain is in device memory, stamped with
//!    the request's index; over a tier's capacity the oldest blocks (ties: the
//!    deepest) are demoted to the next tier instead of dropped, and leave only
//!    from the last.
//! Tenants (salts) never share a block, whatever their ids. It counts, per
//! tier, the hits it served, the bytes loaded and demoted, and the prefill
//! FLOPs the hits saved. The KV itself is not held: this is the cache's
//! bookkeeping, what a server's block manager keeps beside its pages.
//!
//!   cache::tiered_prefix_cache kv({.tiers = {{"HBM", 1000, ...}, {"host", 100000, 50e9 B/s, 5 µs}},
//!                                  .block_bytes = ..., .prefill = [&](std::size_t depth) { ... },
//!                                  .device_rate = ...});
//!   const auto served = kv.request(tenant, chain);

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cache {

struct prefix_tier {
  std::string name;
  std::uint64_t capacity_blocks = 0;
  bytes_per_second bandwidth{};  //!< loading a block back to the device over this tier's link (ignored for tier 0)
  seconds latency{};
};

struct tiered_prefix_config {
  std::vector<prefix_tier> tiers;  //!< the device's own memory first
  bytes block_bytes{};             //!< KV bytes of one block
  //! Prefill FLOPs of the block at this depth (0: the first block), given the blocks before it cached.
  std::function<flops(std::size_t depth)> prefill;
  flops_per_second device_rate{};  //!< what recomputing a block runs at
  //! Where the blocks' KV lives, when something holds it (cache::tiered_kv_store): told of every move before
  //! the cache records it, and free to refuse it (a full or failing tier). `from` is no_tier for a block just
  //! computed into device memory, `to` no_tier for a block leaving the cache, which is never refused. A
  //! refused new block stays uncached, a refused load is recomputed where the block sits, and a refused
  //! demotion drops the block: a cache may forget, never serve what it does not hold.
  std::function<bool(std::uint64_t tenant, std::uint32_t id, std::size_t from, std::size_t to)> move{};
};

//! `from` or `to` of a move that enters or leaves the cache.
inline constexpr std::size_t no_tier = static_cast<std::size_t>(-1);

//! A tenant's block, what the tiered cache keys blocks by: tenants never share one, whatever their ids.
struct tenant_block {
  std::uint64_t tenant;
  std::uint32_t id;
  friend bool operator==(const tenant_block&, const tenant_block&) = default;
};
struct tenant_block_hash {
  std::size_t operator()(const tenant_block& k) const noexcept {
    std::uint64_t h = (k.tenant * 0x9e3779b97f4a7c15ull) ^ k.id;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

//! What one tier did over a replay.
struct tier_counts {
  std::uint64_t hits = 0;        //!< blocks served from this tier
  std::uint64_t recomputed = 0;  //!< blocks cached here but recomputed, because loading them was slower
  bytes loaded{};                //!< loaded back to the device from this tier
  bytes demoted{};               //!< written into this tier from the one above
  std::uint64_t dropped = 0;     //!< blocks that left the cache from this tier (the last one, or a refused demotion)
  std::uint64_t refused = 0;     //!< moves into this tier its holder refused (tiered_prefix_config::move)
};

//! What one request found.
struct request_outcome {
  std::size_t hit_blocks = 0;     //!< the cached prefix
  std::size_t served_blocks = 0;  //!< of those, the ones not recomputed
  flops saved{};                  //!< prefill FLOPs the served blocks did not need
  seconds load_time{};            //!< loading the served blocks from lower tiers, one after another
  //! Moves of this request's blocks the holder refused (tiered_prefix_config::move): a block left uncached, a
  //! load recomputed, a demotion dropped. Non-zero means the tiers' resources, not the cache's capacities, bound
  //! it: a device resource without room for the chain above its capacity (tiered_kv_store's contract).
  std::size_t refused_moves = 0;
};

class tiered_prefix_cache {
 public:
  explicit tiered_prefix_cache(tiered_prefix_config c) : c_(std::move(c)) {
    trinity::detail::require(!c_.tiers.empty(), "tiers", "name at least the device's own memory");
    for (std::size_t t = 1; t < c_.tiers.size(); ++t) {
      const auto field = "tiers[" + std::to_string(t) + "]";
      trinity::detail::require(c_.tiers[t].bandwidth.value() > 0 && std::isfinite(c_.tiers[t].bandwidth.value()),
                               field + ".bandwidth", "must be positive and finite: blocks are loaded back over it");
      trinity::detail::require(c_.tiers[t].latency.value() >= 0, field + ".latency", "must not be negative");
    }
    trinity::detail::require(c_.block_bytes.value() > 0, "block_bytes", "must be positive");
    trinity::detail::require(static_cast<bool>(c_.prefill), "prefill", "give the prefill FLOPs of a block by depth");
    trinity::detail::require(c_.device_rate.value() > 0, "device_rate", "must be positive");
    order_.resize(c_.tiers.size());
    counts_.resize(c_.tiers.size());
  }

  //! Serves one request of `tenant` whose prompt is this chain of block ids, then caches the chain.
  request_outcome request(std::uint64_t tenant, std::span<const std::uint32_t> chain) {
    ++clock_;
    refused_now_ = 0;
    request_outcome out;
    for (; out.hit_blocks < chain.size(); ++out.hit_blocks) {
      const auto it = blocks_.find(key{tenant, chain[out.hit_blocks]});
      if (it == blocks_.end()) break;
      const std::size_t t = it->second.tier;
      const flops recompute = c_.prefill(out.hit_blocks);
      const seconds load = t == 0 ? seconds{} : c_.tiers[t].latency + c_.block_bytes / c_.tiers[t].bandwidth;
      if (t != 0 && load >= recompute / c_.device_rate) {
        ++counts_[t].recomputed;
        continue;
      }
      if (t != 0 && !moved(it->first, t, 0)) {
        ++counts_[t].recomputed;
        continue;
      }
      ++counts_[t].hits;
      ++out.served_blocks;
      out.saved += recompute;
      out.load_time += load;
      if (t != 0) {
        counts_[t].loaded += c_.block_bytes;
        relocate(it->first, it->second, 0);  // its bytes are in device memory now: below, only a restamp
      }
    }
    // Every block of the chain into device memory, stamped now; one the holder refuses stays where it is
    // (restamped) or uncached.
    for (std::size_t d = 0; d < chain.size(); ++d) {
      const key k{tenant, chain[d]};
      const auto it = blocks_.find(k);
      if (it == blocks_.end()) {
        if (!moved(k, no_tier, 0)) continue;
        const auto at = blocks_.emplace(k, entry{0, clock_, static_cast<std::uint32_t>(d)}).first;
        order_[0].insert(rank(k, at->second));
        continue;
      }
      if (it->second.tier == 0 && it->second.stamp == clock_) continue;  // loaded above
      relocate(k, it->second, it->second.tier == 0 || moved(k, it->second.tier, 0) ? 0 : it->second.tier);
    }
    settle();
    out.refused_moves = refused_now_;
    return out;
  }

  [[nodiscard]] const std::vector<tier_counts>& counts() const noexcept { return counts_; }
  //! Blocks each tier holds now.
  [[nodiscard]] std::vector<std::uint64_t> resident() const {
    std::vector<std::uint64_t> r;
    for (const auto& o : order_) r.push_back(o.size());
    return r;
  }
  //! The tier holding this tenant's block, if cached.
  [[nodiscard]] std::optional<std::size_t> tier_of(std::uint64_t tenant, std::uint32_t id) const {
    const auto it = blocks_.find(key{tenant, id});
    if (it == blocks_.end()) return std::nullopt;
    return it->second.tier;
  }
  [[nodiscard]] const tiered_prefix_config& config() const noexcept { return c_; }

 private:
  using key = tenant_block;
  using key_hash = tenant_block_hash;
  struct entry {
    std::size_t tier;
    std::uint64_t stamp;
    std::uint32_t depth;
  };
  // Oldest first, ties to the deepest: a parent (stamped whenever its child is) never leaves before its child.
  using ranked =
      std::tuple<std::uint64_t, std::uint32_t, std::uint64_t, std::uint32_t>;  // stamp, shallowness, tenant, id
  static ranked rank(const key& k, const entry& e) {
    return {e.stamp, std::numeric_limits<std::uint32_t>::max() - e.depth, k.tenant, k.id};
  }

  bool moved(const key& k, std::size_t from, std::size_t to) {
    if (!c_.move || c_.move(k.tenant, k.id, from, to)) return true;
    ++counts_[to].refused;
    ++refused_now_;
    return false;
  }
  void relocate(const key& k, entry& e, std::size_t to) {
    order_[e.tier].erase(rank(k, e));
    e.tier = to;
    e.stamp = clock_;
    order_[to].insert(rank(k, e));
  }

  // Over capacity, a tier's oldest blocks go down one tier; the last tier's leave.
  void settle() {
    for (std::size_t t = 0; t < order_.size(); ++t)
      while (order_[t].size() > c_.tiers[t].capacity_blocks) demote_oldest(t);
  }
  // The tier below is given room first, so a holder's tier never holds more than its capacity for a moment
  // (device memory aside, which holds a request's chain before the cache settles).
  void demote_oldest(std::size_t t) {
    const auto [stamp, shallow, tenant, id] = *order_[t].begin();
    const auto it = blocks_.find(key{tenant, id});
    const std::size_t below = t + 1;
    if (below < order_.size())
      while (!order_[below].empty() && order_[below].size() >= c_.tiers[below].capacity_blocks) demote_oldest(below);
    order_[t].erase(order_[t].begin());
    if (below == order_.size() || !moved(it->first, t, below)) {
      if (c_.move) c_.move(tenant, id, t, no_tier);
      ++counts_[t].dropped;
      blocks_.erase(it);
      return;
    }
    it->second.tier = below;
    order_[below].insert(rank(it->first, it->second));
    counts_[below].demoted += c_.block_bytes;
  }

  tiered_prefix_config c_;
  std::unordered_map<key, entry, key_hash> blocks_;
  std::vector<std::set<ranked>> order_;  // per tier, first to leave first
  std::vector<tier_counts> counts_;
  std::size_t refused_now_ = 0;  // refused moves of the request in progress
  std::uint64_t clock_ = 0;
};

}  // namespace trinity::cache
