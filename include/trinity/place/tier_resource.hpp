#pragma once
//! \file
//! A tier as a std::pmr::memory_resource: allocations come from an upstream
//! resource (host memory by default; a NUMA node's, a GPU's) and are refused
//! with capacity_exceeded once the tier's capacity would be passed, so a
//! std::pmr::vector can live in a tier and never overfill it. A fault hook
//! lets tests refuse allocations on purpose.
//!
//! Thread-safe, as a pmr resource in a server is expected to be, when its
//! upstream is (new_delete_resource and place::host_resource are): bytes are
//! reserved against the capacity with one atomic compare-exchange before the
//! upstream is asked, so concurrent allocations never overfill the tier and
//! used() returns to 0 when everything is freed. Set the fault hook before the
//! tier is shared.
//!
//!   place::tier_resource cxl("cxl-capacity", 64_GB);
//!   std::pmr::vector<float> v(&cxl);            // counts against the 64 GB

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory_resource>
#include <new>
#include <string>
#include <utility>

#include <trinity/detail/byte_count.hpp>
#include <trinity/error.hpp>
#include <trinity/tiers/tier_descriptor.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::place {

//! Thrown when a tier cannot take an allocation: full, or refused by its fault hook.
class capacity_exceeded : public std::bad_alloc {
 public:
  explicit capacity_exceeded(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

class tier_resource : public std::pmr::memory_resource {
 public:
  tier_resource(std::string name, bytes capacity, std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : name_(std::move(name)), capacity_(trinity::detail::byte_count(capacity)), upstream_(upstream) {
    trinity::detail::require(upstream != nullptr, "upstream", "a tier needs memory to hand out");
  }
  //! A tier preset's name and capacity: `tier_resource cxl(tiers::cxl_capacity::descriptor, &node2)`.
  explicit tier_resource(const tier_descriptor& d,
                         std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : tier_resource(std::string(d.name), d.capacity, upstream) {}
  tier_resource(const tier_resource&) = delete;
  tier_resource& operator=(const tier_resource&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t free() const noexcept { return capacity_ - used(); }
  //! Called before every allocation with its size; returning true refuses it (fault injection).
  void set_fault_hook(std::function<bool(std::size_t)> hook) { fault_ = std::move(hook); }

 private:
  void* do_allocate(std::size_t n, std::size_t alignment) override {
    // Reserve first: two threads can then never both take the last bytes.
    std::size_t was = used_.load(std::memory_order_relaxed);
    do {
      if (n > capacity_ - was)
        throw capacity_exceeded("trinity::place: tier " + name_ + " has " + std::to_string(capacity_ - was) +
                                " bytes free, " + std::to_string(n) + " asked");
    } while (!used_.compare_exchange_weak(was, was + n, std::memory_order_relaxed));
    try {
      if (fault_ && fault_(n))
        throw capacity_exceeded("trinity::place: tier " + name_ + " refused the allocation (injected)");
      return upstream_->allocate(n, alignment);
    } catch (...) {
      used_.fetch_sub(n, std::memory_order_relaxed);
      throw;
    }
  }
  void do_deallocate(void* p, std::size_t n, std::size_t alignment) override {
    upstream_->deallocate(p, n, alignment);
    used_.fetch_sub(n, std::memory_order_relaxed);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  std::string name_;
  std::size_t capacity_;
  std::atomic<std::size_t> used_{0};
  std::pmr::memory_resource* upstream_;
  std::function<bool(std::size_t)> fault_;
};

}  // namespace trinity::place
