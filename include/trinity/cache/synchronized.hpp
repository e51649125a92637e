#pragma once
//! \file
//! A cache shared between threads: every call takes one mutex. A lookup
//! changes recency and counters, so readers exclude each other too; the index
//! searches stay parallel inside the call. Payloads are read inside with(),
//! since an entry may be evicted by another thread as soon as the lock drops.
//!
//!   cache::synchronized<cache::approximate_cache<>> shared(std::move(c));
//!   auto r = shared.lookup(prompt);                        // r.payload is null here
//!   shared.with([&](auto& c) { auto r = c.lookup(prompt); use(*r.payload); });

#include <mutex>
#include <span>
#include <utility>

namespace trinity::cache {

template <class Cache>
class synchronized {
 public:
  explicit synchronized(Cache cache) : cache_(std::move(cache)) {}

  //! Runs f(cache) under the lock and returns what it returns.
  template <class F>
  decltype(auto) with(F&& f) {
    std::lock_guard lock(mutex_);
    return std::forward<F>(f)(cache_);
  }

  //! The cache's lookup, with the payload pointer cleared (it would dangle once the lock is released).
  auto lookup(std::span<const float> key) requires requires(Cache& c) { c.lookup(key); }
  {
    std::lock_guard lock(mutex_);
    auto r = cache_.lookup(key);
    r.payload = nullptr;
    return r;
  }

  template <class... Args>
  auto insert(Args&&... args) {
    std::lock_guard lock(mutex_);
    return cache_.insert(std::forward<Args>(args)...);
  }

  //! A copy of the counters, taken under the lock.
  auto stats() {
    std::lock_guard lock(mutex_);
    return cache_.stats();
  }

 private:
  std::mutex mutex_;
  Cache cache_;
};

}  // namespace trinity::cache
