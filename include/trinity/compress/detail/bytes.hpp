#pragma once
//! \file
//! Little-endian loads and stores on unaligned bytes, and the XXH3 hash the
//! wire format checks. memcpy is the defined way to read a float from bytes.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

// xxHash inlined (header-only, nothing to link). GCC 12 misreads its AVX-512
// path under -march=native as using an uninitialized vector; the warning is
// a known false positive, so it is silenced for this header only.
#define XXH_INLINE_ALL
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xxhash.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace trinity::compress::detail {

static_assert(std::endian::native == std::endian::little,
              "trinity: the wire format is little-endian and this port reads it natively; add byte swaps for "
              "a big-endian target");

template <class T>
[[nodiscard]] inline T load(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void store(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof(T));
}

[[nodiscard]] inline std::uint64_t hash(std::span<const std::byte> data) noexcept {
  return XXH3_64bits(data.data(), data.size());
}

//! A 32-bit avalanche hash (MurmurHash3's finalizer): uniform bits per counter
//! value, for random draws that vectorize and reproduce from a seed.
constexpr std::uint32_t mix32(std::uint32_t h) noexcept {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace trinity::compress::detail
