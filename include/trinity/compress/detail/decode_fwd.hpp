#pragma once
//! \file
//! What every codec's decoder shares, so that a codec header needs no other codec: the recursive step a nesting
//! codec calls (decode a frame that sits inside another frame's body into `out`, one level deeper; defined in
//! compress/decode.hpp), the state a delta stream's decoder keeps, and decode_with, which makes any codec's body
//! decoder the one signature the frame registry holds (compress/frame_decoders.hpp).

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <trinity/compress/element.hpp>
#include <trinity/compress/frame_decoders.hpp>
#include <trinity/compress/wire.hpp>

namespace trinity::compress::detail {

//! `want` is f32 (numbers) or word32 (raw 32-bit words); `out.size()` is the
//! element count the enclosing frame promised.
struct nested_decoder {
  decode_context* ctx;
  unsigned depth;
  void (*fn)(std::span<const std::byte>, std::span<float>, element, decode_context&, unsigned);

  void operator()(std::span<const std::byte> frame, std::span<float> out, element want) const {
    fn(frame, out, want, *ctx, depth + 1);
  }
};

//! The previous frame a delta stream's decoder holds (compress/lossless/delta.hpp writes such streams).
struct delta_state {
  std::vector<std::uint32_t> previous;
  std::uint64_t next_frame = 0;
  bool started = false;
};

//! A body decoder that takes (frame, out, want), (..., decode_context&) or (..., decode_context&, nested_decoder)
//! as a frame_body_decoder.
template <auto Body>
void decode_with(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                 const nested_decoder& nested) {
  using body = decltype(Body);
  if constexpr (std::is_invocable_v<body, const frame_view&, std::span<float>, element, decode_context&,
                                    const nested_decoder&>)
    Body(f, out, want, ctx, nested);
  else if constexpr (std::is_invocable_v<body, const frame_view&, std::span<float>, element, decode_context&>)
    Body(f, out, want, ctx);
  else
    Body(f, out, want);
}

//! The element count in header.count as a size the caller's output must match.
inline void require_count(const frame_header& h, std::size_t expected, const char* field) {
  if (h.count != expected)
    fail(field, std::to_string(h.count) + " elements, where the enclosing frame expects " + std::to_string(expected));
}

//! body_size == expected, compared without overflow.
inline void require_body_size(const frame_view& f, std::uint64_t expected, const char* codec_name) {
  if (f.header.body_size != expected)
    fail(std::string(codec_name) + ".body", std::to_string(f.header.body_size) +
                                                " bytes where the header's count and "
                                                "parameters imply " +
                                                std::to_string(expected));
}

//! a * b, or fail naming `field` when it overflows 64 bits.
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* field) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail(field, "is so large that the frame's size overflows 64 bits");
  return r;
}
inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* field) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail(field, "is so large that the frame's size overflows 64 bits");
  return r;
}

}  // namespace trinity::compress::detail
