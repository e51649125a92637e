#pragma once
//! \file
//! frame_buffer: the bytes an encoder appends frames to. It grows without
//! zero-filling (a std::vector<std::byte> would write every byte twice, which
//! costs as much as the identity codec itself) and is reused across calls so
//! a steady stream of encodes allocates once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <cstring>
#include <memory>
#include <span>

namespace trinity::compress {

class frame_buffer {
 public:
  frame_buffer() = default;
  frame_buffer(frame_buffer&&) noexcept = default;
  frame_buffer& operator=(frame_buffer&&) noexcept = default;
  frame_buffer(const frame_buffer& other) { append(other.bytes()); }
  frame_buffer& operator=(const frame_buffer& other) {
    if (this != &other) {
      clear();
      append(other.bytes());
    }
    return *this;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<std::byte> bytes() noexcept { return {data_.get(), size_}; }

  void clear() noexcept { size_ = 0; }
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    auto bigger = std::make_unique_for_overwrite<std::byte[]>(n);
    if (size_) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = n;
  }
  //! Adds n bytes of unspecified value at the end; returns where they start.
  //! Earlier pointers into the buffer are invalidated, offsets are not.
  std::byte* grow(std::size_t n) {
    // Also tells the optimizer that n is an object size, which GCC's
    // -Wstringop-overflow cannot otherwise see through the inlined callers.
    if (n > static_cast<std::size_t>(PTRDIFF_MAX) - size_) throw std::length_error("frame_buffer: larger than memory");
    if (size_ + n > capacity_) reserve(std::max(size_ + n, capacity_ + capacity_ / 2));
    std::byte* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void append(std::span<const std::byte> b) {
    if (!b.empty()) std::memcpy(grow(b.size()), b.data(), b.size());
  }
  //! Drops bytes from the end, e.g. the unused tail a worst-case bound reserved.
  void shrink_to(std::size_t n) noexcept { size_ = std::min(size_, n); }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace trinity::compress
