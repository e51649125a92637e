#pragma once
//! \file
//! The CPU backend: host memory from the global allocator, memcpy, and the
//! steady clock. It is what `trinity verify` measures predictions against.

#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>
#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/detail/byte_count.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/chrono.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cpu {

class backend {
 public:
  using backend_concept = backend_tag;
  using memory_tier = tiers::host_ddr;
  static constexpr std::string_view name = "cpu";

  [[nodiscard]] void* allocate(bytes n, std::size_t alignment = alignof(std::max_align_t)) {
    return ::operator new (trinity::detail::byte_count(n), std::align_val_t{alignment});
  }
  void deallocate(void* p, bytes, std::size_t alignment = alignof(std::max_align_t)) noexcept {
    ::operator delete (p, std::align_val_t{alignment});
  }
  void copy(void* dst, const void* src, bytes n) {
    if (const std::size_t count = trinity::detail::byte_count(n)) std::memcpy(dst, src, count);
  }
  //! Host memory is the backend's memory: moving in and out is a copy.
  void upload(void* dst, const void* host_src, bytes n) { copy(dst, host_src, n); }
  void download(void* host_dst, const void* src, bytes n) { copy(host_dst, src, n); }
  [[nodiscard]] seconds now() const noexcept {
    return from_chrono(std::chrono::steady_clock::now().time_since_epoch());
  }

 private:
};

}  // namespace trinity::cpu
