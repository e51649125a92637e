#pragma once
//! \file
//! An embedding table whose rows live in a capacity tier (CXL, host memory) behind a cache of hot rows in the
//! fast tier, as TorchRec's and FBGEMM's UVM-caching tables keep them: a lookup that finds its row cached reads
//! the fast tier; one that misses reads the capacity tier and puts the row in the cache, evicting the row the
//! policy picks:
//!  - LRU: the least recently used;
//!  - LFU: the least often used since the table was made (counts kept for every row, cached or not, as
//!    FBGEMM's LFU keeps them), the least recently used among equals.
//! prefetch() brings the next batch's rows in ahead of it. Rows are read from where they live: the table's
//! storage is allocated from the capacity tier's place::tier_resource and the cache's from the fast tier's,
//! which refuse what does not fit. Bytes and reads are counted per tier (0 fast, 1 capacity).
//!
//!   place::tier_resource hbm("hbm", 1_MB), cxl("cxl-capacity", 1_GB);
//!   embedding::tiered_table table(rows, 64, values, {&hbm, &cxl}, 4096, embedding::cache_policy::lru);
//!   table.bag(batch, embedding::pooling::sum, out);   // embedding_bag's bits, through the cache

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/error.hpp>
#include <trinity/place/tier_resource.hpp>

namespace trinity::embedding {

enum class cache_policy { lru, lfu };

//! What lookups read: per tier (0 fast, 1 capacity) bytes and row reads, and the cache's hits and misses.
struct table_traffic {
  double bytes[2] = {0, 0};
  double reads[2] = {0, 0};
  std::uint64_t hits = 0, misses = 0, prefetched = 0;
  [[nodiscard]] double hit_rate() const noexcept {
    return hits + misses ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0;
  }
};

class tiered_table {
 public:
  //! `values` holds rows × dim floats; tiers are {fast, capacity}; `cache_rows` rows fit in the cache.
  tiered_table(std::size_t rows, std::size_t dim, std::span<const float> values,
               std::span<place::tier_resource* const> tiers, std::size_t cache_rows, cache_policy policy)
      : dim_(dim),
        rows_(rows),
        policy_(policy),
        slots_(cache_rows),
        table_(checked(rows, dim, values, tiers), tiers[1]),
        cache_(cache_rows * dim, 0.0f, tiers[0]),
        counts_(rows, 0) {
    table_.assign(values.begin(), values.end());
    free_.reserve(cache_rows);
    for (std::size_t s = cache_rows; s-- > 0;) free_.push_back(s);
  }

  //! Row i, from the cache (a hit) or from the capacity tier into the cache (a miss).
  [[nodiscard]] std::span<const float> row(std::uint64_t i) {
    trinity::detail::require(i < rows_, "index", [&] {
      return std::to_string(i) + " is past the table's " + std::to_string(rows_) + " rows";
    });
    ++counts_[i];
    ++tick_;
    if (const auto it = where_.find(i); it != where_.end()) {
      ++traffic_.hits;
      touch(i, it->second);
      return read(0, it->second.slot);
    }
    ++traffic_.misses;
    if (slots_ == 0) return read_capacity(i);
    return read(0, *bring_in(i));  // nothing is pinned outside prefetch: a victim is always there
  }

  //! Brings the batch's rows into the cache ahead of its lookups (read from the capacity tier, counted as
  //! prefetched, neither hit nor miss); rows already cached are left as they are. The batch's rows are pinned
  //! while it is prefetched, as FBGEMM's cache locks them: bringing one in never evicts another the batch needs
  //! (under LFU a row just brought in has the fewest uses, and would be the next victim). A batch of more
  //! distinct rows than the cache holds brings in what fits; the rest miss.
  void prefetch(const bag_batch& b) {
    validate(b, rows_);
    if (slots_ == 0) return;
    pinned_.clear();
    pinned_.insert(b.indices.begin(), b.indices.end());
    for (const auto i : b.indices)
      if (!where_.contains(i)) {
        if (!bring_in(i)) break;  // every cached row is the batch's
        ++traffic_.prefetched;
      }
    pinned_.clear();
  }

  //! embedding_bag over this table's rows, looked up through the cache.
  void bag(const bag_batch& b, pooling p, std::span<float> out) {
    validate(b, rows_);
    pool_bags(b, dim_, p, out, [&](std::uint64_t i) { return row(i); });
  }

  [[nodiscard]] const table_traffic& traffic() const noexcept { return traffic_; }
  void reset_traffic() { traffic_ = {}; }
  [[nodiscard]] bool cached(std::uint64_t i) const { return where_.contains(i); }
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }

 private:
  struct entry {
    std::size_t slot;
    std::list<std::uint64_t>::iterator lru;  // LRU's place
    std::uint64_t used = 0;                  // LFU's tie-break: the tick of its last use
  };

  static std::size_t checked(std::size_t rows, std::size_t dim, std::span<const float> values,
                             std::span<place::tier_resource* const> tiers) {
    trinity::detail::require(dim >= 1, "dim", "must be at least 1");
    trinity::detail::require(values.size() == rows * dim, "values", "must hold rows x dim floats");
    trinity::detail::require(tiers.size() == 2 && tiers[0] && tiers[1], "tiers", "a fast tier and a capacity tier");
    return 0;
  }
  std::span<const float> read(std::size_t tier, std::size_t slot) {
    traffic_.bytes[tier] += static_cast<double>(dim_ * sizeof(float));
    traffic_.reads[tier] += 1;
    return std::span<const float>(cache_).subspan(slot * dim_, dim_);
  }
  std::span<const float> read_capacity(std::uint64_t i) {
    traffic_.bytes[1] += static_cast<double>(dim_ * sizeof(float));
    traffic_.reads[1] += 1;
    return std::span<const float>(table_).subspan(i * dim_, dim_);
  }
  void touch(std::uint64_t i, entry& e) {
    if (policy_ == cache_policy::lru) {
      order_.splice(order_.end(), order_, e.lru);
      return;
    }
    // The node moved, not freed and allocated again: a hit costs no allocation.
    auto node = lfu_.extract({counts_[i] - 1, e.used, i});
    e.used = tick_;
    node.value() = {counts_[i], e.used, i};
    lfu_.insert(std::move(node));
  }
  bool pinned(std::uint64_t row) const { return !pinned_.empty() && pinned_.contains(row); }
  // Evicts the row the policy picks among those not pinned (LRU's oldest; LFU's fewest uses, then the oldest) and
  // returns its slot; nothing when every cached row is pinned.
  std::optional<std::size_t> evict() {
    std::uint64_t row = 0;
    if (policy_ == cache_policy::lru) {
      const auto it = std::find_if(order_.begin(), order_.end(), [&](std::uint64_t r) { return !pinned(r); });
      if (it == order_.end()) return std::nullopt;
      row = *it;
      order_.erase(it);
    } else {
      const auto it = std::find_if(lfu_.begin(), lfu_.end(), [&](const auto& e) { return !pinned(std::get<2>(e)); });
      if (it == lfu_.end()) return std::nullopt;
      row = std::get<2>(*it);
      lfu_.erase(it);
    }
    const auto at = where_.find(row);
    const std::size_t slot = at->second.slot;
    where_.erase(at);
    return slot;
  }
  // Row i into a free slot, or the victim's: read from the capacity tier, written to the fast one. Nothing when
  // there is no free slot and every cached row is pinned.
  std::optional<std::size_t> bring_in(std::uint64_t i) {
    std::size_t slot = 0;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else if (const auto freed = evict()) {
      slot = *freed;
    } else {
      return std::nullopt;
    }
    const auto src = read_capacity(i);
    std::copy(src.begin(), src.end(), cache_.begin() + static_cast<std::ptrdiff_t>(slot * dim_));
    entry e{slot, {}, tick_};
    if (policy_ == cache_policy::lru)
      e.lru = order_.insert(order_.end(), i);
    else
      lfu_.insert({counts_[i], e.used, i});
    where_.emplace(i, e);
    return slot;
  }

  std::size_t dim_, rows_;
  cache_policy policy_;
  std::size_t slots_;
  std::pmr::vector<float> table_, cache_;
  std::vector<std::uint64_t> counts_;  // every row's uses, for LFU
  std::vector<std::size_t> free_;
  std::unordered_map<std::uint64_t, entry> where_;
  std::unordered_set<std::uint64_t> pinned_;                               // the batch being prefetched
  std::list<std::uint64_t> order_;                                         // LRU: oldest first
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> lfu_;  // LFU: (uses, last use, row)
  std::uint64_t tick_ = 0;
  table_traffic traffic_;
};

}  // namespace trinity::embedding
