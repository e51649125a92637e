#pragma once
//! \file
//! The lossy codecs' rule for NaN and infinity: refuse them with an error that
//! says where, because an error bound relative to a block's largest magnitude
//! means nothing once that magnitude is infinite, and error feedback would
//! spread one NaN into every later step. The lossless codecs carry them
//! bit-exactly instead.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <trinity/error.hpp>

namespace trinity::compress::detail {

//! True for the bits of an infinity or a NaN: exponent all ones.
[[nodiscard]] constexpr bool non_finite_bits(std::uint32_t bits) noexcept {
  return (bits & 0x7f800000u) == 0x7f800000u;
}

[[noreturn]] inline void refuse_non_finite(std::string_view codec_name, std::size_t index, float value) {
  throw invalid_input("input[" + std::to_string(index) + "]",
                      std::string(value != value ? "NaN" : "infinity") + ": the lossy codec " +
                          std::string(codec_name) +
                          " needs finite input (its error bound is undefined otherwise); find the overflow upstream, "
                          "skip the step, or send it with a lossless codec (identity, zstd, lz4)");
}

//! A finite input whose block statistic (a sum, a norm, a product) leaves the
//! fp32 range: the codec cannot represent its scale, so it refuses by name.
[[noreturn]] inline void refuse_overflow(std::string_view codec_name, std::string_view statistic) {
  throw invalid_input("input", "the lossy codec " + std::string(codec_name) + "'s " + std::string(statistic) +
                                   " overflows fp32 (magnitudes near 3.4e38); scale the tensor down, or send it "
                                   "with a lossless codec");
}

//! Finds the first non-finite element and refuses it; called once a fused
//! pass has already seen that one exists, so it costs nothing on clean input.
[[noreturn]] inline void refuse_first_non_finite(std::string_view codec_name, std::span<const float> in) {
  for (std::size_t i = 0; i < in.size(); ++i)
    if (non_finite_bits(std::bit_cast<std::uint32_t>(in[i]))) refuse_non_finite(codec_name, i, in[i]);
  throw invalid_input("input", "has a non-finite value");  // unreachable when called as documented
}

inline void require_finite(std::string_view codec_name, std::span<const float> in) {
  std::uint32_t any = 0;
  for (const float x : in) any |= static_cast<std::uint32_t>(non_finite_bits(std::bit_cast<std::uint32_t>(x)));
  if (any) refuse_first_non_finite(codec_name, in);
}

//! The lossy codecs keep their state in a vector sized to the input; a
//! residual span, when given, must match it.
inline void require_residual_size(std::size_t in, std::size_t residual) {
  if (residual != 0 && residual != in)
    throw invalid_input("residual", "has " + std::to_string(residual) + " elements for an input of " +
                                        std::to_string(in) + "; pass one of the input's size, or none");
}

}  // namespace trinity::compress::detail
