#pragma once
//! \file
//! The k most similar of a stream of (id, similarity) pairs, in a bounded heap.
//! Ties go to the smaller id, so a search gives the same answer whatever the
//! order rows were scanned in (threads, blocks).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <trinity/concepts/similarity_index.hpp>

namespace trinity::cache::detail {

//! a ranks before b: more similar, or as similar with a smaller id.
inline bool ranks_before(const neighbour& a, const neighbour& b) noexcept {
  return a.similarity > b.similarity || (a.similarity == b.similarity && a.id < b.id);
}

class top_k {
 public:
  explicit top_k(std::size_t k) : k_(k) { heap_.reserve(k); }

  //! The least similarity that could still enter; -inf until k are held.
  [[nodiscard]] float floor() const noexcept { return floor_; }

  void offer(std::uint64_t id, float similarity) {
    if (k_ == 0 || similarity < floor_) return;
    const neighbour n{id, similarity};
    if (heap_.size() < k_) {
      heap_.push_back(n);
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);  // the worst kept is on top
      if (heap_.size() == k_) floor_ = heap_.front().similarity;
      return;
    }
    if (!ranks_before(n, heap_.front())) return;
    std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
    heap_.back() = n;
    std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    floor_ = heap_.front().similarity;
  }

  void merge(const top_k& other) {
    for (const auto& n : other.heap_) offer(n.id, n.similarity);
  }

  //! Most similar first.
  [[nodiscard]] std::vector<neighbour> sorted() && {
    std::sort(heap_.begin(), heap_.end(), ranks_before);
    return std::move(heap_);
  }

 private:
  std::size_t k_;
  std::vector<neighbour> heap_;
  float floor_ = -std::numeric_limits<float>::infinity();
};

}  // namespace trinity::cache::detail
