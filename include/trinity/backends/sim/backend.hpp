#pragma once
//! \file
//! The simulated backend: real bytes (so results can be checked) on a virtual
//! clock. Every copy advances the clock by the α-β cost the tier's descriptor
//! gives, and allocation beyond the tier's capacity is refused, so a model can
//! be run at sizes this machine does not have the time for.

#include <cstddef>
#include <cstring>
#include <new>
#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/detail/byte_count.hpp>
#include <trinity/tiers/tier.hpp>
#include <trinity/links/link_traits.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::sim {

//! Thrown when an allocation would exceed the simulated tier's capacity.
class capacity_exceeded : public std::bad_alloc {
 public:
  const char* what() const noexcept override { return "trinity::sim: allocation exceeds the tier's capacity"; }
};

template <class MemoryTier = tiers::host_ddr>
class backend {
  static_assert(diagnose_tier<MemoryTier>());
  static_assert(link_traits<tiers::host_ddr, MemoryTier>::reachable,
                "trinity::sim::backend: the host cannot reach this tier, so upload and download cannot be priced. "
                "Fix: declare trinity::direct_link<trinity::tiers::host_ddr, YourTier> (or a staging_tier).");
  using host_route = link_traits<tiers::host_ddr, MemoryTier>;

 public:
  using backend_concept = backend_tag;
  using memory_tier = MemoryTier;
  static constexpr std::string_view name = "sim";

  [[nodiscard]] void* allocate(bytes n, std::size_t alignment = alignof(std::max_align_t)) {
    if (resident_ + n > MemoryTier::descriptor.capacity) throw capacity_exceeded{};
    void* p = ::operator new (trinity::detail::byte_count(n), std::align_val_t{alignment});
    resident_ += n;
    return p;
  }
  void deallocate(void* p, bytes n, std::size_t alignment = alignof(std::max_align_t)) noexcept {
    ::operator delete (p, std::align_val_t{alignment});
    resident_ -= n;
  }
  //! Copies for real and charges the tier's cost of reading and writing n bytes.
  void copy(void* dst, const void* src, bytes n) {
    move(dst, src, n, link_traits<MemoryTier, MemoryTier>::transfer_time(n));
  }
  //! Moves bytes in from the host and charges the host-to-tier route.
  void upload(void* dst, const void* host_src, bytes n) { move(dst, host_src, n, host_route::transfer_time(n)); }
  //! Moves bytes out to the host over the same route.
  void download(void* host_dst, const void* src, bytes n) { move(host_dst, src, n, host_route::transfer_time(n)); }
  //! Charges time spent elsewhere (compute, a transfer modelled by the caller).
  void advance(seconds dt) noexcept { clock_ += dt; }

  [[nodiscard]] seconds now() const noexcept { return clock_; }
  [[nodiscard]] bytes resident() const noexcept { return resident_; }

 private:
  // Copies for real, then charges `cost`; a size that cannot be counted throws
  // before anything moves or is charged.
  void move(void* dst, const void* src, bytes n, seconds cost) {
    if (const std::size_t count = trinity::detail::byte_count(n)) std::memcpy(dst, src, count);
    clock_ += cost;
  }

  seconds clock_{};
  bytes resident_{};
};

}  // namespace trinity::sim
