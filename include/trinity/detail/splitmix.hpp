#pragma once
//! \file
//! splitmix64 (Steele, Lea and Flood 2014, as in Vigna's reference code): one 64-bit mixing step. Every
//! input bit reaches every output bit, so it serves as a check over a few fields and as a counter-based
//! source of reproducible values.

#include <cstdint>

namespace trinity::detail {

constexpr std::uint64_t splitmix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

//! The next value of Vigna's splitmix64 generator whose state is `state`: the state steps by the golden ratio.
constexpr std::uint64_t splitmix_next(std::uint64_t& state) noexcept {
  const std::uint64_t z = splitmix64(state);
  state += 0x9e3779b97f4a7c15ULL;
  return z;
}

}  // namespace trinity::detail
