#pragma once
//! \file
//! frame_pool: buffers for outgoing frames, kept for reuse when ZeroMQ lets go
//! of them. A producer keeps a window of frames alive for sending again, so a
//! fresh allocation per sample would touch new pages every time (page faults
//! cost more than the copy on a virtual machine); recycled buffers stay mapped.
//!
//! ZeroMQ frees a frame from whichever thread drops its last reference (its own
//! I/O thread, often), through release(); each buffer in use holds the pool
//! alive, so a frame may outlive the producer that made it. Free buffers are
//! kept up to max_free_bytes, by size class (eight classes per doubling, so at
//! most an eighth is wasted).

#include <bit>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

namespace trinity::stream::detail {

class frame_pool : public std::enable_shared_from_this<frame_pool> {
 public:
  static std::shared_ptr<frame_pool> make(std::size_t max_free_bytes) {
    return std::shared_ptr<frame_pool>(new frame_pool(max_free_bytes));
  }
  frame_pool(const frame_pool&) = delete;
  frame_pool& operator=(const frame_pool&) = delete;
  ~frame_pool() {
    for (auto& [capacity, list] : free_)
      for (auto* h : list) destroy(h);
  }

  //! A frame of size bytes, in a recycled buffer where one fits.
  zmq::message_t make_frame(std::size_t size) {
    const std::size_t capacity = size_class(size);
    auto self = shared_from_this();
    header* h = nullptr;
    {
      std::lock_guard lk(mutex_);
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        h = it->second.back();
        it->second.pop_back();
        free_bytes_ -= capacity;
        h->owner = std::move(self);
      }
    }
    if (!h) {
      auto* raw = static_cast<std::byte*>(::operator new (header_space + capacity, std::align_val_t{64}));
      h = new (raw) header{{}, capacity};
      // Published under the lock that release() takes first: ZeroMQ's own hand-over between threads orders
      // the two already, but through atomics of an uninstrumented library; this is an order TSan sees too.
      std::lock_guard lk(mutex_);
      h->owner = std::move(self);
    }
    return zmq::message_t(data_of(h), size, &release, this);
  }

  [[nodiscard]] std::size_t free_bytes() const {
    std::lock_guard lk(mutex_);
    return free_bytes_;
  }

  //! The capacity a buffer for n bytes gets.
  static std::size_t size_class(std::size_t n) noexcept {
    if (n <= 4096) return (n + 63) / 64 * 64;
    const std::size_t step = std::bit_floor(n - 1) / 8;
    return (n + step - 1) / step * step;
  }

 private:
  struct header {
    std::shared_ptr<frame_pool> owner;  // set while in use
    std::size_t capacity;
  };
  static constexpr std::size_t header_space = 64;  // keeps the data 64-byte aligned
  static_assert(sizeof(header) <= header_space);

  explicit frame_pool(std::size_t max_free_bytes) : max_free_bytes_(max_free_bytes) {}

  static std::byte* data_of(header* h) noexcept { return reinterpret_cast<std::byte*>(h) + header_space; }

  static void destroy(header* h) noexcept {
    h->~header();
    ::operator delete (static_cast<void*>(h), std::align_val_t{64});
  }

  // ZeroMQ's free function: back to the free list, or freed when the list is full.
  // The pool comes as ZeroMQ's hint, so nothing of the buffer is read before the lock. The buffer holds its
  // pool, so the pool outlives this call; its last reference may go with it, after the lock is let go.
  static void release(void* data, void* hint) noexcept {
    auto* pool = static_cast<frame_pool*>(hint);
    auto* h = reinterpret_cast<header*>(static_cast<std::byte*>(data) - header_space);
    std::shared_ptr<frame_pool> keep;
    bool kept = false;
    {
      std::lock_guard lk(pool->mutex_);
      keep = std::move(h->owner);
      if (pool->free_bytes_ + h->capacity <= pool->max_free_bytes_) {
        try {
          pool->free_[h->capacity].push_back(h);
          pool->free_bytes_ += h->capacity;
          kept = true;
        } catch (...) {  // no memory for the list: free the buffer instead
        }
      }
    }
    if (!kept) destroy(h);
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<header*>> free_;
  std::size_t free_bytes_ = 0;
  std::size_t max_free_bytes_;
};

}  // namespace trinity::stream::detail
