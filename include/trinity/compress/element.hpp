#pragma once
//! \file
//! The element types a frame can carry, and the narrowing conversions that
//! make bf16 and fp16 cheap codecs of their own: round to nearest even, NaN
//! kept a NaN, overflow to infinity, fp16 subnormals kept.

#include <bit>
#include <cstdint>
#include <string_view>

#include <trinity/half.hpp>

namespace trinity::compress {

//! What a decoded frame holds. The numbers are on the wire: never renumber.
enum class element : std::uint8_t {
  f32 = 1,     //!< IEEE binary32: every codec's input and output
  bf16 = 2,    //!< bfloat16: the top half of a binary32
  f16 = 3,     //!< IEEE binary16
  word32 = 4,  //!< 32-bit words that are not numbers (a delta encoder's XOR residuals)
  frame = 5,   //!< the body is another frame (a lossless stage wrapped around a lossy one)
};

[[nodiscard]] constexpr std::string_view to_string(element e) noexcept {
  switch (e) {
    case element::f32:
      return "f32";
    case element::bf16:
      return "bf16";
    case element::f16:
      return "f16";
    case element::word32:
      return "word32";
    case element::frame:
      return "frame";
  }
  return "unknown";
}

[[nodiscard]] constexpr bool is_known(element e) noexcept {
  return e == element::f32 || e == element::bf16 || e == element::f16 || e == element::word32 || e == element::frame;
}

// The conversions live in the core (trinity/half.hpp: data_parallel's 16-bit parameters use them too).
using trinity::from_bf16;
using trinity::from_f16;
using trinity::to_bf16;
using trinity::to_f16;

}  // namespace trinity::compress
