#pragma once
//! \file
//! A per-rank ledger of resident bytes by kind of training state and by
//! placement (the device's own memory, or the slower tier optimizer states are
//! offloaded to), with peaks; and tracking_allocator, which books every
//! allocation of a std::vector in it. Sharding's promise is a number of bytes
//! per rank; the ledger is how a run checks it against model/sharding.hpp.
//!
//!   shard::memory_ledger ledger;
//!   shard::tracked_vector<float> m(n, shard::tracking_allocator<float>(ledger, shard::state_kind::optimizer_states));
//!   ledger.resident(shard::state_kind::optimizer_states);   // n * 4 bytes

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <string_view>
#include <vector>

namespace trinity::shard {

enum class state_kind : std::uint8_t { parameters, gradients, optimizer_states, activations, buffers };
inline constexpr std::size_t state_kinds = 5;
enum class placement : std::uint8_t { device, offload };

constexpr std::string_view to_string(state_kind k) noexcept {
  switch (k) {
    case state_kind::parameters:
      return "parameters";
    case state_kind::gradients:
      return "gradients";
    case state_kind::optimizer_states:
      return "optimizer_states";
    case state_kind::activations:
      return "activations";
    case state_kind::buffers:
      return "buffers";
  }
  return "unknown";
}

//! One rank's books. Not synchronised: each rank (thread or process) keeps its own.
class memory_ledger {
 public:
  void add(state_kind k, placement p, std::size_t bytes) noexcept {
    auto& e = at(k, p);
    e.now += bytes;
    if (e.now > e.peak) e.peak = e.now;
    auto& t = totals_[static_cast<std::size_t>(p)];
    t.now += bytes;
    if (t.now > t.peak) t.peak = t.now;
  }
  void remove(state_kind k, placement p, std::size_t bytes) noexcept {
    at(k, p).now -= bytes;
    totals_[static_cast<std::size_t>(p)].now -= bytes;
  }
  [[nodiscard]] std::size_t resident(state_kind k, placement p = placement::device) const noexcept {
    return at(k, p).now;
  }
  [[nodiscard]] std::size_t peak(state_kind k, placement p = placement::device) const noexcept { return at(k, p).peak; }
  //! All kinds together, now and at their highest.
  [[nodiscard]] std::size_t resident(placement p = placement::device) const noexcept {
    return totals_[static_cast<std::size_t>(p)].now;
  }
  [[nodiscard]] std::size_t peak(placement p = placement::device) const noexcept {
    return totals_[static_cast<std::size_t>(p)].peak;
  }
  //! Starts the peaks afresh from what is resident now (per step, say).
  void reset_peaks() noexcept {
    for (auto& row : entries_)
      for (auto& e : row) e.peak = e.now;
    for (auto& t : totals_) t.peak = t.now;
  }

 private:
  struct entry {
    std::size_t now = 0, peak = 0;
  };
  entry& at(state_kind k, placement p) noexcept {
    return entries_[static_cast<std::size_t>(p)][static_cast<std::size_t>(k)];
  }
  const entry& at(state_kind k, placement p) const noexcept {
    return entries_[static_cast<std::size_t>(p)][static_cast<std::size_t>(k)];
  }
  std::array<std::array<entry, state_kinds>, 2> entries_{};
  std::array<entry, 2> totals_{};
};

//! An allocator that books what it hands out in a ledger, under one kind and placement, and takes the memory
//! from a std::pmr::memory_resource (new/delete unless told: a tier_resource, a NUMA node's).
template <class T>
class tracking_allocator {
 public:
  using value_type = T;

  tracking_allocator(memory_ledger& ledger, state_kind kind, placement where = placement::device,
                     std::pmr::memory_resource* upstream = std::pmr::new_delete_resource()) noexcept
      : ledger_(&ledger), kind_(kind), where_(where), upstream_(upstream) {}
  template <class U>
  tracking_allocator(const tracking_allocator<U>& o) noexcept  // NOLINT: rebinding is implicit by design
      : ledger_(o.ledger()), kind_(o.kind()), where_(o.where()), upstream_(o.upstream()) {}

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    T* p = static_cast<T*>(upstream_->allocate(n * sizeof(T), alignof(T)));
    ledger_->add(kind_, where_, n * sizeof(T));
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ledger_->remove(kind_, where_, n * sizeof(T));
    upstream_->deallocate(p, n * sizeof(T), alignof(T));
  }

  [[nodiscard]] memory_ledger* ledger() const noexcept { return ledger_; }
  [[nodiscard]] state_kind kind() const noexcept { return kind_; }
  [[nodiscard]] placement where() const noexcept { return where_; }
  [[nodiscard]] std::pmr::memory_resource* upstream() const noexcept { return upstream_; }
  template <class U>
  bool operator==(const tracking_allocator<U>& o) const noexcept {
    return ledger_ == o.ledger() && kind_ == o.kind() && where_ == o.where() && upstream_->is_equal(*o.upstream());
  }

 private:
  memory_ledger* ledger_;
  state_kind kind_;
  placement where_;
  std::pmr::memory_resource* upstream_;
};

template <class T>
using tracked_vector = std::vector<T, tracking_allocator<T>>;

}  // namespace trinity::shard
