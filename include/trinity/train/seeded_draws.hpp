#pragma once
//! \file
//! The reference trainer's random draws, each a pure function of (seed, what, index): any rank draws any weight or
//! sample without drawing the ones before it, so a run's values do not depend on how many ranks share it, and a
//! rank holding an expert, a slice or a stage draws the same values a single rank would.

#include <cmath>
#include <cstdint>

#include <trinity/detail/splitmix.hpp>

namespace trinity::train::detail {

//! The counter a draw hashes: the seed, then three coordinates (what is drawn, and where in it).
inline std::uint64_t key(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept {
  using trinity::detail::splitmix64;
  return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b) ^ (c * 0x9E3779B97F4A7C15ull);
}

//! A uniform in [0, 1) from a counter: the hash's top 53 bits.
inline double uniform(std::uint64_t counter) noexcept {
  return static_cast<double>(trinity::detail::splitmix64(counter) >> 11) * 0x1p-53;
}

//! A uniform in [−bound, bound) from a counter: LeCun-uniform weights take bound = √(3/fan_in).
inline float symmetric(std::uint64_t counter, float bound) noexcept {
  return static_cast<float>((2.0 * uniform(counter) - 1.0) * bound);
}

//! A standard normal from a counter (Box-Muller on two hashed uniforms).
inline float normal(std::uint64_t counter) noexcept {
  using trinity::detail::splitmix64;
  const std::uint64_t a = splitmix64(counter), b = splitmix64(counter ^ 0xD1B54A32D192ED03ull);
  const double u = (static_cast<double>(a >> 11) + 0.5) * 0x1p-53;
  const double v = static_cast<double>(b >> 11) * 0x1p-53;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v));
}

}  // namespace trinity::train::detail
