#pragma once
//! \file
//! A tiered object store: values (bytes) under keys, each living in one of a
//! list of tiers (fastest first, each a place::tier_resource), with put, get,
//! pin, evict and migrate. Every change that could fail half-way allocates
//! first and frees last, so a refused allocation or an interrupted copy leaves
//! every object whole and readable where it was; a tier's capacity is never
//! passed (its resource refuses). Not synchronised: one thread, or a lock
//! around it.
//!
//!   place::tier_resource hbm("hbm", 80_GB), cxl("cxl", 1_TB);
//!   place::tiered_store<std::uint64_t> store({&hbm, &cxl});
//!   store.put(key, bytes);              // the fastest tier with room
//!   store.migrate(key, 1);              // down to CXL; false (and intact) if CXL refuses
//!   auto v = store.get(key);            // std::optional<std::span<const std::byte>>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/place/tier_resource.hpp>

namespace trinity::place {

template <class Key = std::uint64_t, class Hash = std::hash<Key>>
class tiered_store {
 public:
  struct object_info {
    std::size_t tier = 0;
    std::size_t size = 0;
    bool pinned = false;
    std::uint64_t reads = 0;
  };

  explicit tiered_store(std::vector<tier_resource*> tiers) : tiers_(std::move(tiers)) {
    trinity::detail::require(!tiers_.empty(), "tiers", "a store needs at least one tier");
    for (std::size_t j = 0; j < tiers_.size(); ++j)
      trinity::detail::require(tiers_[j] != nullptr, "tiers[" + std::to_string(j) + "]", "is null");
  }
  tiered_store(const tiered_store&) = delete;
  tiered_store& operator=(const tiered_store&) = delete;
  ~tiered_store() {
    for (auto& [key, e] : map_) release(e);
  }

  //! Stores `value` under `key` in tier `tier`, or else in the fastest tier with room, and returns the tier.
  //! Replacing a key allocates the new copy before freeing the old, so a refusal keeps the old value; a
  //! pinned key is replaced in its own tier. Throws capacity_exceeded when no allowed tier takes it.
  std::size_t put(const Key& key, std::span<const std::byte> value, std::optional<std::size_t> tier = {}) {
    if (tier) check_tier(*tier, "tier");
    const auto it = map_.find(key);
    if (it != map_.end() && it->second.pinned) tier = it->second.tier;
    std::byte* block = nullptr;
    std::size_t where = 0;
    if (tier) {
      block = allocate(*tier, value.size());
      where = *tier;
    } else {
      for (std::size_t j = 0; j < tiers_.size() && !block; ++j) {
        if (tiers_[j]->free() < value.size()) continue;  // full: skip it without paying for an exception
        try {
          block = allocate(j, value.size());
          where = j;
        } catch (const capacity_exceeded&) {  // refused (a fault): try the next tier
        }
      }
      if (!block) {
        std::string state;
        for (const auto* t : tiers_)
          state += (state.empty() ? "" : ", ") + t->name() + " " + std::to_string(t->free()) + " bytes free";
        throw capacity_exceeded("trinity::place: no tier takes " + std::to_string(value.size()) + " bytes (" + state +
                                ")");
      }
    }
    if (!value.empty()) std::memcpy(block, value.data(), value.size());
    if (it != map_.end()) {
      entry old = it->second;
      it->second = entry{block, value.size(), static_cast<std::uint32_t>(where), old.pinned, 0};
      release(old);
    } else {
      try {
        map_.emplace(key, entry{block, value.size(), static_cast<std::uint32_t>(where), false, 0});
      } catch (...) {
        tiers_[where]->deallocate(block, value.size(), alignment);
        throw;
      }
    }
    return where;
  }

  //! The value under key, valid until the next put, evict or migrate of that key; nullopt if absent.
  [[nodiscard]] std::optional<std::span<const std::byte>> get(const Key& key) {
    const auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    ++it->second.reads;
    return std::span<const std::byte>(it->second.data, it->second.size);
  }

  [[nodiscard]] bool contains(const Key& key) const { return map_.find(key) != map_.end(); }
  [[nodiscard]] std::optional<object_info> info(const Key& key) const {
    const auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return object_info{it->second.tier, it->second.size, it->second.pinned, it->second.reads};
  }

  //! A pinned object is neither evicted nor migrated. False if absent.
  bool pin(const Key& key) { return set_pinned(key, true); }
  bool unpin(const Key& key) { return set_pinned(key, false); }

  //! Drops an unpinned object and frees its bytes. False, and nothing changes, if it is pinned or absent.
  bool evict(const Key& key) {
    const auto it = map_.find(key);
    if (it == map_.end() || it->second.pinned) return false;
    const entry e = it->second;
    map_.erase(it);
    release(e);
    return true;
  }

  //! Moves an unpinned object to tier `to`: allocate there, copy, then free the source. False, and the object
  //! untouched where it was, if it is pinned or absent, if the target refuses, or if the copy is interrupted.
  bool migrate(const Key& key, std::size_t to) {
    check_tier(to, "to");
    const auto it = map_.find(key);
    if (it == map_.end() || it->second.pinned) return false;
    entry& e = it->second;
    if (e.tier == to) return true;
    std::byte* block = nullptr;
    try {
      block = allocate(to, e.size);
    } catch (const capacity_exceeded&) {
      return false;
    }
    if (copy_fault_ && copy_fault_(key, e.tier, to)) {  // interrupted: the half-written copy is dropped
      tiers_[to]->deallocate(block, e.size, alignment);
      return false;
    }
    if (e.size) std::memcpy(block, e.data, e.size);
    const entry old = e;
    e.data = block;
    e.tier = static_cast<std::uint32_t>(to);
    release(old);
    return true;
  }

  //! Called before each migration's copy; returning true interrupts it (fault injection).
  void set_copy_fault_hook(std::function<bool(const Key&, std::size_t from, std::size_t to)> hook) {
    copy_fault_ = std::move(hook);
  }

  [[nodiscard]] std::size_t size() const noexcept { return map_.size(); }
  [[nodiscard]] std::size_t tiers() const noexcept { return tiers_.size(); }
  [[nodiscard]] const tier_resource& tier(std::size_t j) const { return *tiers_.at(j); }

  //! f(key, value, info) for every object, in no particular order.
  template <class F>
  void for_each(F f) const {
    for (const auto& [key, e] : map_)
      f(key, std::span<const std::byte>(e.data, e.size), object_info{e.tier, e.size, e.pinned, e.reads});
  }

 private:
  static constexpr std::size_t alignment = alignof(std::max_align_t);

  struct entry {
    std::byte* data;
    std::size_t size;
    std::uint32_t tier;
    bool pinned;
    std::uint64_t reads;
  };

  void check_tier(std::size_t j, const char* field) const {
    if (j >= tiers_.size())
      throw invalid_input(field, std::to_string(j) + " is not a tier of a store with " + std::to_string(tiers_.size()));
  }
  std::byte* allocate(std::size_t j, std::size_t n) {
    return static_cast<std::byte*>(tiers_[j]->allocate(n, alignment));
  }
  void release(const entry& e) noexcept { tiers_[e.tier]->deallocate(e.data, e.size, alignment); }
  bool set_pinned(const Key& key, bool pinned) {
    const auto it = map_.find(key);
    if (it == map_.end()) return false;
    it->second.pinned = pinned;
    return true;
  }

  std::vector<tier_resource*> tiers_;
  std::unordered_map<Key, entry, Hash> map_;
  std::function<bool(const Key&, std::size_t, std::size_t)> copy_fault_;
};

}  // namespace trinity::place
