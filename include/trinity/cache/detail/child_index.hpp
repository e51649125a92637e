#pragma once
//! \file
//! The prefix tree's edges in one flat table: (parent, block of tokens) to
//! child, open addressing with linear probing, keyed by the chain's hash. One table for the whole tree,
//! rather than a hash map per node, because a lookup walks a chain of blocks
//! and each step would otherwise touch a separate map's buckets and nodes; here
//! a step is one probe into a single array whose slot holds the hash, the
//! parent and the block's first token, and the rest of the child's block is
//! compared only when those match, so a match stays exact whatever the hash;
//! a block of one token (a hashed block id) is then found without touching the
//! child at all.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace trinity::cache::detail {

//! The hash of a chain of blocks: its parent's chain hash and its own tokens, as vLLM hashes a block with its
//! parent's hash. It depends on the tokens only, not on where the nodes lie, so a lookup can hash a whole
//! chain first and fetch every slot it will probe at once.
template <class Token>
std::uint64_t chain_hash(std::uint64_t parent, std::span<const Token> block) noexcept {
  std::uint64_t h = parent ^ 0x9e3779b97f4a7c15ull;
  for (const Token t : block) {
    h ^= static_cast<std::uint64_t>(t);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

//! Node needs `parent` (a pointer) and `block` (a range of at least one token).
template <class Node>
class child_index {
 public:
  template <class Token>
  [[nodiscard]] Node* find(const Node* parent, std::span<const Token> block, std::uint64_t h) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (!s.child) return nullptr;
      if (s.hash == h && s.parent == parent && s.first == block.front() &&
          (block.size() == 1 || std::ranges::equal(s.child->block, block)))
        return s.child;
    }
  }

  //! Starts fetching the slot a lookup of this hash probes first.
  void prefetch(std::uint64_t h) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
  }

  //! Adds an edge to a child not in the table.
  void insert(Node* child, std::uint64_t h) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place({h, child->parent, child, child->block.front()});
    ++size_;
  }

  //! Removes the edge to a child that is in the table, under the hash it was inserted with.
  void erase(const Node* child, std::uint64_t h) noexcept {
    std::size_t i = h & mask_;
    while (slots_[i].child != child) i = (i + 1) & mask_;
    // Backward-shift deletion: pull later slots of the run into the hole when their home allows it, so no
    // tombstones build up and a miss still stops at the first empty slot.
    for (std::size_t j = (i + 1) & mask_; slots_[j].child; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].hash & mask_;
      // Slot j may move to i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = slot{};
    --size_;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct slot {
    std::uint64_t hash = 0;
    const Node* parent = nullptr;
    Node* child = nullptr;
    std::uint64_t first = 0;  // the block's first token
  };
  void place(const slot& s) noexcept {
    std::size_t i = s.hash & mask_;
    while (slots_[i].child) i = (i + 1) & mask_;
    slots_[i] = s;
  }
  void grow() {
    std::vector<slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const auto& s : old)
      if (s.child) place(s);
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
};

}  // namespace trinity::cache::detail
