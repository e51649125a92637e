#pragma once
//! \file
//! An STL allocator over a tier, for containers that are not std::pmr ones:
//! `std::vector<float, place::tier_allocator<float>> v(place::tier_allocator<float>(cxl))`.
//! Unlike std::pmr::polymorphic_allocator it follows its container on copy,
//! move and swap, so a copied vector stays in (and counts against) the same tier,
//! and two allocators compare equal only when they draw from the same tier.

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include <trinity/place/tier_resource.hpp>

namespace trinity::place {

template <class T>
class tier_allocator {
  static_assert(!std::is_const_v<T> && !std::is_reference_v<T>,
                "trinity::place::tier_allocator<T>: T must be an object type. Fix: drop const or & from T.");

 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  explicit tier_allocator(tier_resource& tier) noexcept : tier_(&tier) {}
  template <class U>
  tier_allocator(const tier_allocator<U>& other) noexcept : tier_(&other.tier()) {}  // NOLINT: rebinding is implicit

  //! Throws capacity_exceeded when the tier is full (or refuses), std::bad_array_new_length when n·sizeof(T) overflows.
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length{};
    return static_cast<T*>(tier_->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { tier_->deallocate(p, n * sizeof(T), alignof(T)); }

  [[nodiscard]] tier_resource& tier() const noexcept { return *tier_; }

  template <class U>
  friend bool operator==(const tier_allocator& a, const tier_allocator<U>& b) noexcept {
    return &a.tier() == &b.tier();
  }

 private:
  tier_resource* tier_;
};

}  // namespace trinity::place
