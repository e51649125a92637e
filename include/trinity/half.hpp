#pragma once
//! \file
//! 16-bit floats as storage: bfloat16 (the top half of a binary32) and IEEE
//! binary16. The conversions round to nearest even, keep a NaN a quiet NaN,
//! send overflow to infinity and keep fp16's subnormals; arithmetic happens
//! in float. data_parallel keeps 16-bit parameters and gradients in them (with
//! fp32 master weights), the collectives sum them, the casting codecs write
//! them (compress/cast.hpp).
//!
//!   trinity::bfloat16 h(3.14159f);   // 3.140625
//!   float x = static_cast<float>(h);

#include <bit>
#include <cstdint>

namespace trinity {

//! binary32 -> bfloat16, round to nearest even; a NaN stays a quiet NaN.
[[nodiscard]] constexpr std::uint16_t to_bf16(float f) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

[[nodiscard]] constexpr float from_bf16(std::uint16_t h) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

//! binary32 -> binary16, round to nearest even. Magnitudes from 65520 up
//! become infinity (the IEEE rule); below 2^-24 they go through fp16's
//! subnormals to zero.
[[nodiscard]] constexpr std::uint16_t to_f16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a >= 0x38800000u) {  // a normal half: rebias the exponent 127 -> 15, round 13 bits away
    std::uint32_t m = a - 0x38000000u;
    m += 0x0fffu + ((m >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (m >> 13));
  }
  if (a < 0x33000000u) return sign;  // below 2^-25: zero (2^-25 itself ties to the even zero)
  // A half subnormal counts units of 2^-24: shift the 24-bit significand down.
  const std::uint32_t e = a >> 23;
  const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - e;  // 14..24 for e in 102..112
  std::uint32_t q = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<std::uint16_t>(sign | q);
}

[[nodiscard]] constexpr float from_f16(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e != 0) return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
  const float v = static_cast<float>(m) * 0x1p-24f;  // subnormal (or zero): exact in binary32
  return sign ? -v : v;
}

//! A 16-bit float type, `Bits` its encoding's conversions: storage, compared and summed through float.
template <std::uint16_t (*Narrow)(float), float (*Widen)(std::uint16_t)>
struct basic_half {
  std::uint16_t bits = 0;

  constexpr basic_half() noexcept = default;
  explicit constexpr basic_half(float f) noexcept : bits(Narrow(f)) {}
  [[nodiscard]] static constexpr basic_half from_bits(std::uint16_t b) noexcept {
    basic_half h;
    h.bits = b;
    return h;
  }
  explicit constexpr operator float() const noexcept { return Widen(bits); }

  //! The sum rounded once, to the nearest 16-bit value.
  friend constexpr basic_half operator+(basic_half a, basic_half b) noexcept {
    return basic_half(static_cast<float>(a) + static_cast<float>(b));
  }
  friend constexpr bool operator<(basic_half a, basic_half b) noexcept {
    return static_cast<float>(a) < static_cast<float>(b);
  }
  friend constexpr bool operator==(basic_half a, basic_half b) noexcept {
    return static_cast<float>(a) == static_cast<float>(b);
  }
};

using bfloat16 = basic_half<to_bf16, from_bf16>;
using float16 = basic_half<to_f16, from_f16>;

//! Whether T is one of trinity's 16-bit float types.
template <class T>
inline constexpr bool is_half_float = false;
template <std::uint16_t (*N)(float), float (*W)(std::uint16_t)>
inline constexpr bool is_half_float<basic_half<N, W>> = true;

}  // namespace trinity
