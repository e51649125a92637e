#pragma once
//! \file
//! The element types a frame can carry, and the narrowing conversions that
//! make bf16 and fp16 cheap codecs of their own: round to nearest even, NaN
//! kept a NaN, overflow to infinity, fp16 subnormals kept.

#include <bit>
#include <cstdint>
#include <string_view>

namespace trinity::compress {

//! What a decoded frame holds. The numbers are on the wire: never renumber.
enum class element : std::uint8_t {
  f32 = 1,    //!< IEEE binary32: every codec's input and output
  bf16 = 2,   //!< bfloat16: the top half of a binary32
  f16 = 3,    //!< IEEE binary16
  word32 = 4, //!< 32-bit words that are not numbers (a delta encoder's XOR residuals)
  frame = 5,  //!< the body is another frame (a lossless stage wrapped around a lossy one)
};

[[nodiscard]] constexpr std::string_view to_string(element e) noexcept {
  switch (e) {
    case element::f32: return "f32";
    case element::bf16: return "bf16";
    case element::f16: return "f16";
    case element::word32: return "word32";
    case element::frame: return "frame";
  }
  return "unknown";
}

[[nodiscard]] constexpr bool is_known(element e) noexcept {
  return e == element::f32 || e == element::bf16 || e == element::f16 || e == element::word32 || e == element::frame;
}

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

}  // namespace trinity::compress
