#pragma once
//! \file
//! cast<element::bf16> and cast<element::f16>: narrow each float to 16 bits,
//! rounding to nearest even. Half the bytes for one instruction's work per
//! element; the cheapest lossy codec, and often the only one that pays on a
//! fast link. NaN and infinity are representable and pass through; a finite
//! value beyond fp16's range (|x| >= 65520) is refused, since it would
//! silently become infinity.

#include <bit>
#include <cstdint>
#include <span>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/cast_kernel.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/element.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

template <element To>
struct cast {
  static_assert(To == element::bf16 || To == element::f16,
                "trinity: compress::cast narrows to element::bf16 or element::f16; other widths have no codec");

  using compressor_concept = compressor_tag;
  // Round to nearest even leaves at most half an ulp: 2^-8 of |x| for bf16's
  // 8-bit significand, 2^-11 for fp16's 11 bits (in fp16's normal range).
  static constexpr compressor_traits traits{.name = To == element::bf16 ? "bf16" : "fp16",
                                            .wire_codec = codec::cast,
                                            .role = role::values,
                                            .error = {error_kind::relative, To == element::bf16 ? 0x1p-8 : 0x1p-11},
                                            .expected_ratio = 2.0};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) const {
    detail::require_residual_size(in.size(), residual.size());
    const std::size_t at = detail::begin_frame(out, codec::cast, To, in.size());
    std::byte* p = out.grow(in.size() * 2);
    // On the CPU's widest vectors (detail/cast_kernel.hpp), the same bytes as to_bf16 / to_f16.
    const std::size_t beyond =
        detail::narrow(To == element::bf16, in.data(), in.size(), p, residual.empty() ? nullptr : residual.data());
    if (beyond < in.size()) {
      out.shrink_to(at);
      throw invalid_input("input[" + std::to_string(beyond) + "]",
                          std::to_string(in[beyond]) + " is beyond fp16's range (65504); use cast<element::bf16>");
    }
    detail::finish_frame(out, at);
  }

  [[nodiscard]] static constexpr float widen(std::uint16_t h) noexcept {
    return To == element::bf16 ? from_bf16(h) : from_f16(h);
  }
};

namespace detail {
inline void decode_cast_body(const frame_view& f, std::span<float> out, element want) {
  if (want != element::f32) fail("header.element", "a narrowed cast frame holds numbers, where words were expected");
  const element e = f.header.element;
  if (e != element::bf16 && e != element::f16)
    fail("header.element", std::string(to_string(e)) + " is not a cast target (bf16 or f16)");
  require_body_size(f, checked_mul(out.size(), 2, "header.count"), "cast");
  widen(e == element::bf16, f.body.data(), out.size(), out.data());
}
}  // namespace detail

using bf16 = cast<element::bf16>;
using fp16 = cast<element::f16>;

namespace detail {
//! cast frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder cast_frames{"cast", &decode_with<&decode_cast_body>};
inline const bool cast_frames_registered = register_frame_decoder(codec::cast, cast_frames);
}  // namespace detail

}  // namespace trinity::compress
