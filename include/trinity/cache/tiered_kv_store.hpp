#pragma once
//! \file
//! The tiered prefix cache holding the KV itself: cache::tiered_prefix_cache
//! decides where each block lives, and a place::tiered_store over the
//! caller's tier resources holds its bytes there, moved as the cache moves
//! it (tiered_prefix_config::move). The store allocates before it frees, so a
//! tier that refuses (full, or a fault injected into its resource) or a copy
//! that is interrupted leaves every block whole where it was; the cache then
//! forgets the block or recomputes it, never serves bytes it does not hold.
//! A block's KV comes from `compute` (the prefill's output for that block).
//!
//!   place::tier_resource hbm("hbm", 1_GB), host("host", 64_GB);
//!   cache::tiered_kv_store kv({.tiers = {...}, .block_bytes = ..., ...}, {&hbm, &host},
//!                             [&](std::uint64_t tenant, std::uint32_t id, std::span<std::byte> out) { ... });
//!   kv.request(tenant, chain);
//!   auto block = kv.read(tenant, chain[0]);   // its KV, from whichever tier holds it
//!
//! Device memory holds a request's chain before the cache settles, as a
//! server holds a running request's KV beside its cached blocks: give the
//! first resource room for its capacity plus the longest chain. The tiers
//! below never hold more than their capacities.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/detail/byte_count.hpp>
#include <trinity/error.hpp>
#include <trinity/place/tiered_store.hpp>

namespace trinity::cache {

class tiered_kv_store {
 public:
  using compute_fn = std::function<void(std::uint64_t tenant, std::uint32_t id, std::span<std::byte> out)>;

  tiered_kv_store(tiered_prefix_config c, std::vector<place::tier_resource*> tiers, compute_fn compute)
      : store_(checked(c, std::move(tiers))),
        compute_(std::move(compute)),
        scratch_(trinity::detail::byte_count(c.block_bytes)),
        cache_(hooked(std::move(c))) {
    trinity::detail::require(static_cast<bool>(compute_), "compute", "give the function that computes a block's KV");
  }
  tiered_kv_store(const tiered_kv_store&) = delete;  // the cache's hook points at this object
  tiered_kv_store& operator=(const tiered_kv_store&) = delete;

  //! Serves one request and caches its chain, moving the blocks' bytes as the cache moves them.
  request_outcome request(std::uint64_t tenant, std::span<const std::uint32_t> chain) {
    return cache_.request(tenant, chain);
  }

  //! A cached block's KV, from the tier the cache holds it in; nullopt if it is not cached.
  [[nodiscard]] std::optional<std::span<const std::byte>> read(std::uint64_t tenant, std::uint32_t id) {
    if (!cache_.tier_of(tenant, id)) return std::nullopt;
    return store_.get(tenant_block{tenant, id});
  }

  [[nodiscard]] const tiered_prefix_cache& cache() const noexcept { return cache_; }
  //! The bytes' holder: its tiers, and a hook to interrupt its copies (set_copy_fault_hook) for testing.
  [[nodiscard]] auto& store() noexcept { return store_; }

 private:
  static std::vector<place::tier_resource*> checked(const tiered_prefix_config& c,
                                                    std::vector<place::tier_resource*> t) {
    trinity::detail::require(t.size() == c.tiers.size(), "tiers",
                             "give one tier resource per cache tier (" + std::to_string(c.tiers.size()) + "), not " +
                                 std::to_string(t.size()));
    trinity::detail::require(!c.move, "move", "is the store's own hook; leave it empty");
    return t;
  }
  tiered_prefix_config hooked(tiered_prefix_config c) {
    c.move = [this](std::uint64_t tenant, std::uint32_t id, std::size_t from, std::size_t to) {
      return move(tenant_block{tenant, id}, from, to);
    };
    return c;
  }
  bool move(const tenant_block& k, std::size_t from, std::size_t to) {
    if (to == no_tier) {  // leaving never fails
      (void)store_.evict(k);
      return true;
    }
    if (from == no_tier) {
      compute_(k.tenant, k.id, scratch_);
      try {
        store_.put(k, scratch_, to);
      } catch (const place::capacity_exceeded&) {
        return false;
      }
      return true;
    }
    return store_.migrate(k, to);
  }

  place::tiered_store<tenant_block, tenant_block_hash> store_;
  compute_fn compute_;
  std::vector<std::byte> scratch_;
  tiered_prefix_cache cache_;  // last: its hook uses the members above
};

}  // namespace trinity::cache
