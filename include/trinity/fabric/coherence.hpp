#pragma once
//! \file
//! What the fabric's memory shows its agents (the report §4.2 and §6.2–6.3, at
//! the lines below), with real values so tests can see staleness:
//!  - an XLink partition belongs to one accelerator; its writes are not seen
//!    in another's cached copy until that one copies again, and reading a
//!    partition one does not own is an XLink transfer (L2057–2066);
//!  - a coherent region (CXL.cache with back-invalidation, CXL 3.0) invalidates
//!    every other cached copy on a write (L1223–1224);
//!  - under HBR a pool segment belongs to exactly one host; several hosts may
//!    map it only under PBR (L1202–1206).
//! exclusive_cache is tier-1 as an exclusive cache of tier-2, moved by bulk
//! transfers only (L2138–2142); bridge_cache the XLink↔CXL bridge's cache of
//! converted requests (L2006–2017).

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/parameters.hpp>
#include <trinity/fabric/topology.hpp>

namespace trinity::fabric {

enum class region_kind : std::uint8_t { xlink_partition, coherent };

class memory_model {
 public:
  explicit memory_model(const topology& t) : topo_(&t) {}

  //! A region of `words` 64-bit words. An XLink partition has one owner; a coherent region lists the agents
  //! that map it. Several hosts on one region need CXL 3.0 sharing, and PBR.
  std::uint32_t add_region(region_kind kind, std::vector<std::uint32_t> agents, std::size_t words) {
    trinity::detail::require(!agents.empty(), "agents", "a region is mapped by at least one agent");
    if (kind == region_kind::xlink_partition && agents.size() != 1)
      throw invalid_input("xlink.partition",
                          "an XLink partition belongs to exactly one accelerator (static partitioning, L2057-2066)");
    std::size_t hosts = 0;
    for (auto a : agents) hosts += topo_->at(a).kind == node_kind::host;
    const auto& prof = topo_->settings();
    if (hosts > 1 && prof.cxl_version < 3)
      throw invalid_input("cxl" + std::to_string(prof.cxl_version) + ".sharing",
                          "memory shared by several hosts needs CXL 3.0 (Table 1: sharing, back-invalidation)");
    if (hosts > 1 && !prof.pbr)
      throw invalid_input("hbr.static_partition",
                          "under hierarchy-based routing a pool segment belongs to one host; "
                          "map it from several with PBR (L1202-1206)");
    regions_.push_back({kind, std::move(agents), std::vector<std::uint64_t>(words, 0), {}});
    return static_cast<std::uint32_t>(regions_.size() - 1);
  }

  void store(std::uint32_t agent, std::uint32_t r, std::size_t word, std::uint64_t value) {
    auto& reg = region(r, word);
    if (reg.kind == region_kind::xlink_partition && agent != reg.agents[0])
      throw invalid_input("store",
                          topo_->at(agent).name + " does not own this XLink partition; write your own and copy");
    reg.home[word] = value;
    auto& mine = reg.cached[agent];
    mine[word] = value;
    if (reg.kind == region_kind::coherent)  // back-invalidation: every other copy of the line goes
      for (auto& [other, lines] : reg.cached)
        if (other != agent) invalidations_ += lines.erase(word);
  }

  [[nodiscard]] std::uint64_t load(std::uint32_t agent, std::uint32_t r, std::size_t word) {
    auto& reg = region(r, word);
    auto& mine = reg.cached[agent];
    if (const auto it = mine.find(word); it != mine.end()) return it->second;  // a cached copy, current or stale
    if (reg.kind == region_kind::xlink_partition && agent != reg.agents[0]) ++xlink_transfers_;
    return mine[word] = reg.home[word];
  }

  //! An explicit copy: refreshes every line the agent holds of the region from home.
  void copy(std::uint32_t agent, std::uint32_t r) {
    auto& reg = regions_.at(r);
    auto& mine = reg.cached[agent];
    for (auto& [word, value] : mine) value = reg.home[word];
    if (reg.kind == region_kind::xlink_partition && agent != reg.agents[0]) ++xlink_transfers_;
  }

  [[nodiscard]] std::uint64_t invalidations() const noexcept { return invalidations_; }
  [[nodiscard]] std::uint64_t xlink_transfers() const noexcept { return xlink_transfers_; }

 private:
  struct region_state {
    region_kind kind;
    std::vector<std::uint32_t> agents;
    std::vector<std::uint64_t> home;
    std::map<std::uint32_t, std::unordered_map<std::size_t, std::uint64_t>> cached;
  };
  region_state& region(std::uint32_t r, std::size_t word) {
    auto& reg = regions_.at(r);
    trinity::detail::require(word < reg.home.size(), "word", "lies outside the region");
    return reg;
  }

  const topology* topo_;
  std::vector<region_state> regions_;
  std::uint64_t invalidations_ = 0, xlink_transfers_ = 0;
};

//! Tier-1 as an exclusive cache over tier-2: each block lives in exactly one tier, and tier-2 is reached
//! only by bulk moves (no load or store into it). Least recently used blocks go back down.
class exclusive_cache {
 public:
  exclusive_cache(std::size_t tier1_blocks, std::size_t blocks) : capacity_(tier1_blocks), tier2_() {
    trinity::detail::require(tier1_blocks >= 1, "tier1_blocks", "at least one");
    for (std::size_t b = 0; b < blocks; ++b) tier2_.insert(b);
  }
  //! Touches a block through tier-1: a hit, or a bulk move up (and one down if tier-1 is full).
  bool access(std::size_t block) {
    if (const auto it = where_.find(block); it != where_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return true;
    }
    trinity::detail::require(tier2_.count(block) == 1, "block", "is not a block of this store");
    if (lru_.size() == capacity_) {
      const auto victim = lru_.back();
      lru_.pop_back();
      where_.erase(victim);
      tier2_.insert(victim);
      ++bulk_moves_;
    }
    tier2_.erase(block);
    lru_.push_front(block);
    where_[block] = lru_.begin();
    ++bulk_moves_;
    return false;
  }
  //! A load or store straight into tier-2 is not a thing in this mode.
  [[noreturn]] void load_from_tier2(std::size_t) const {
    throw invalid_input("tier2",
                        "in exclusive-cache mode tier-2 is reached only by bulk CXL.io moves (L2138-2142); "
                        "access the block through tier-1");
  }
  [[nodiscard]] bool in_tier1(std::size_t b) const { return where_.count(b) == 1; }
  [[nodiscard]] bool in_tier2(std::size_t b) const { return tier2_.count(b) == 1; }
  [[nodiscard]] std::uint64_t bulk_moves() const noexcept { return bulk_moves_; }
  [[nodiscard]] std::uint64_t hits() const noexcept { return hits_; }

 private:
  std::size_t capacity_;
  std::set<std::size_t> tier2_;
  std::list<std::size_t> lru_;
  std::unordered_map<std::size_t, std::list<std::size_t>::iterator> where_;
  std::uint64_t bulk_moves_ = 0, hits_ = 0;
};

//! The XLink↔CXL bridge: converting a request costs parameters::bridge_conversion, unless the bridge's
//! cache of converted requests (least recently used out) already holds it.
class bridge_cache {
 public:
  explicit bridge_cache(std::size_t entries) : capacity_(entries) {}
  seconds cross(std::uint64_t address) {
    if (const auto it = where_.find(address); it != where_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return parameters::bridge_cache_hit;
    }
    if (capacity_ > 0) {
      if (lru_.size() == capacity_) {
        where_.erase(lru_.back());
        lru_.pop_back();
      }
      lru_.push_front(address);
      where_[address] = lru_.begin();
    }
    return parameters::bridge_conversion;
  }

 private:
  std::size_t capacity_;
  std::list<std::uint64_t> lru_;
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace trinity::fabric
