#pragma once
//! \file
//! Which entry leaves when a cache is full. A policy hears of every insert,
//! hit and removal, and names the victim:
//!   lru            least recently inserted or hit (the paper's, §5.1.3)
//!   lfu            fewest hits, the older first among equals
//!   benefit_aware  least (saved compute × frequency / size), Greedy-Dual-Size-
//!                  Frequency style: an entry's priority is the last victim's
//!                  priority plus its own benefit density, so entries that
//!                  stopped earning age out instead of squatting forever.
//! All three are O(log n) or better per event and deterministic: ties go to
//! the entry that arrived first.

#include <concepts>
#include <cstdint>
#include <iterator>
#include <list>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>

namespace trinity::cache {

//! What a policy may weigh: the entry's size, its hits, the compute its hits saved, and what one deepest hit saves.
struct entry_record {
  double size_bytes = 0;
  std::uint64_t hits = 0;
  double saved_flops = 0;
  double deepest_saving_flops = 0;
};

template <class P>
concept opts_into_eviction_policy = requires {
  typename P::eviction_policy_concept;
}
&&std::same_as<typename P::eviction_policy_concept, eviction_policy_tag>;

template <class P>
concept EvictionPolicy = opts_into_eviction_policy<P> && names_itself<P> &&
    requires(P& p, const P& cp, std::uint64_t id, const entry_record& e) {
  p.inserted(id, e);
  p.hit(id, e);
  p.erased(id);
  { p.pop_victim() } -> std::same_as<std::uint64_t>;
  { cp.empty() } -> std::same_as<bool>;
};

template <class P>
consteval bool diagnose_eviction_policy() {
  static_assert(opts_into_eviction_policy<P>,
                "trinity: this type is not an EvictionPolicy. Fix: add `using eviction_policy_concept = "
                "trinity::eviction_policy_tag;`.");
  if constexpr (opts_into_eviction_policy<P>) {
    static_assert(names_itself<P>,
                  "trinity: an EvictionPolicy names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(EvictionPolicy<P>,
                  "trinity: an EvictionPolicy hears of inserts, hits and removals and names victims. Fix: add "
                  "`void inserted(std::uint64_t, const trinity::cache::entry_record&)`, `void hit(std::uint64_t, "
                  "const entry_record&)`, `void erased(std::uint64_t)`, `std::uint64_t pop_victim()` and `bool "
                  "empty() const`.");
  }
  return EvictionPolicy<P>;
}

class lru {
 public:
  using eviction_policy_concept = eviction_policy_tag;
  static constexpr std::string_view name = "lru";

  void inserted(std::uint64_t id, const entry_record&) { where_[id] = order_.insert(order_.end(), id); }
  void hit(std::uint64_t id, const entry_record&) { order_.splice(order_.end(), order_, where_.at(id)); }
  void erased(std::uint64_t id) {
    if (const auto it = where_.find(id); it != where_.end()) order_.erase(it->second), where_.erase(it);
  }
  std::uint64_t pop_victim() {
    const std::uint64_t id = order_.front();
    erased(id);
    return id;
  }
  [[nodiscard]] bool empty() const noexcept { return order_.empty(); }

 private:
  std::list<std::uint64_t> order_;  // least recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

namespace detail {
// A policy that evicts the smallest key, keys kept in a set beside an id → key map.
template <class Key>
class ranked {
 public:
  void set(std::uint64_t id, Key key) {
    erase(id);
    ranks_.emplace(key, id);
    key_of_.emplace(id, key);
  }
  void erase(std::uint64_t id) {
    if (const auto it = key_of_.find(id); it != key_of_.end()) ranks_.erase({it->second, id}), key_of_.erase(it);
  }
  [[nodiscard]] std::pair<Key, std::uint64_t> pop() {
    const auto first = *ranks_.begin();
    erase(first.second);
    return first;
  }
  [[nodiscard]] bool empty() const noexcept { return ranks_.empty(); }

 private:
  std::set<std::pair<Key, std::uint64_t>> ranks_;
  std::unordered_map<std::uint64_t, Key> key_of_;
};
}  // namespace detail

class lfu {
 public:
  using eviction_policy_concept = eviction_policy_tag;
  static constexpr std::string_view name = "lfu";

  void inserted(std::uint64_t id, const entry_record& e) { ranks_.set(id, {e.hits, ++tick_}); }
  void hit(std::uint64_t id, const entry_record& e) { ranks_.set(id, {e.hits, ++tick_}); }
  void erased(std::uint64_t id) { ranks_.erase(id); }
  std::uint64_t pop_victim() { return ranks_.pop().second; }
  [[nodiscard]] bool empty() const noexcept { return ranks_.empty(); }

 private:
  detail::ranked<std::pair<std::uint64_t, std::uint64_t>> ranks_;  // (hits, last touched)
  std::uint64_t tick_ = 0;
};

class benefit_aware {
 public:
  using eviction_policy_concept = eviction_policy_tag;
  static constexpr std::string_view name = "benefit-aware";

  void inserted(std::uint64_t id, const entry_record& e) { ranks_.set(id, {priority(e), ++tick_}); }
  void hit(std::uint64_t id, const entry_record& e) { ranks_.set(id, {priority(e), ++tick_}); }
  void erased(std::uint64_t id) { ranks_.erase(id); }
  std::uint64_t pop_victim() {
    const auto [key, id] = ranks_.pop();
    inflation_ = key.first;  // later entries start above what was just thrown out
    return id;
  }
  [[nodiscard]] bool empty() const noexcept { return ranks_.empty(); }

  //! inflation + saved per hit × (hits + 1) / size; an entry never hit is priced at one deepest hit.
  [[nodiscard]] double priority(const entry_record& e) const noexcept {
    const double per_hit = e.hits ? e.saved_flops / static_cast<double>(e.hits) : e.deepest_saving_flops;
    return inflation_ + per_hit * static_cast<double>(e.hits + 1) / (e.size_bytes > 0 ? e.size_bytes : 1.0);
  }

 private:
  detail::ranked<std::pair<double, std::uint64_t>> ranks_;  // (priority, last touched)
  double inflation_ = 0;
  std::uint64_t tick_ = 0;
};

static_assert(diagnose_eviction_policy<lru>() && diagnose_eviction_policy<lfu>() &&
              diagnose_eviction_policy<benefit_aware>());

}  // namespace trinity::cache
