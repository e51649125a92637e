#pragma once
//! \file
//! How a collective cuts `count` elements among `n` ranks: as evenly as it
//! can, the first `count % n` chunks one element longer. Sharding uses the
//! same cut, so rank r's shard is exactly the chunk a reduce-scatter leaves on
//! rank r, and the shards of a tensor partition it whatever n is.

#include <cstddef>
#include <span>

#include <trinity/error.hpp>

namespace trinity::comm {

struct partition {
  std::size_t count = 0;
  int parts = 1;

  constexpr partition(std::size_t count_, int parts_) : count(count_), parts(parts_) {
    trinity::detail::require(parts_ >= 1, "parts", "a partition needs at least one part");
  }
  [[nodiscard]] constexpr std::size_t size(int c) const noexcept {
    const auto n = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(c);
    return count / n + (i < count % n ? 1 : 0);
  }
  [[nodiscard]] constexpr std::size_t begin(int c) const noexcept {
    const auto n = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(c);
    const std::size_t base = count / n, extra = count % n;
    return i * base + (i < extra ? i : extra);
  }
  [[nodiscard]] constexpr std::size_t end(int c) const noexcept { return begin(c) + size(c); }
  [[nodiscard]] constexpr std::size_t largest() const noexcept { return size(0); }

  //! Chunk c of a span of `count` elements.
  template <class T>
  [[nodiscard]] constexpr std::span<T> chunk(std::span<T> all, int c) const noexcept {
    return all.subspan(begin(c), size(c));
  }
};

}  // namespace trinity::comm
