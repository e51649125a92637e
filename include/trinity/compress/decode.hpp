#pragma once
//! \file
//! Decoding: one entry point for every codec and every chain, since a frame
//! says what it is. `decode(bytes)` is stateless; `decoder` keeps the previous
//! frame of a delta-coded stream. Each frame goes to the decoder its codec
//! registered (compress/frame_decoders.hpp): this header brings the codecs
//! that need no library; zstd, lz4 and delta frames decode where
//! <trinity/compress/lossless/*.hpp> is included too.
//!
//!   compress::decoder rx{{.max_bytes = 256 << 20}};
//!   std::vector<float> g = rx.decode(frame);   // throws compress::decode_error
//!
//! Every failure is a decode_error naming the field; the output is written
//! only by a decode that succeeds in full.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/cast.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/frame_decoders.hpp>
#include <trinity/compress/identity.hpp>
#include <trinity/compress/powersgd.hpp>
#include <trinity/compress/qsgd.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/sign.hpp>
#include <trinity/compress/sparse.hpp>
#include <trinity/compress/wire.hpp>

namespace trinity::compress {

namespace detail {
//! Decodes exactly one frame filling `bytes` into `out` (out.size() == count).
inline void decode_frame(std::span<const std::byte> bytes, std::span<float> out, element want, decode_context& ctx,
                         unsigned depth) {
  if (depth > ctx.limits().max_depth)
    fail("frame", "frames nest deeper than decode_limits.max_depth (" + std::to_string(ctx.limits().max_depth) + ")");
  const frame_view f = parse_frame(bytes, ctx.limits());
  if (header_size + f.header.body_size != bytes.size())
    fail("frame", std::to_string(bytes.size() - header_size - f.header.body_size) +
                      " bytes follow the frame's body where none belong");
  require_count(f.header, out.size(), "header.count");
  const nested_decoder nested{&ctx, depth, &decode_frame};
  // parse_frame refused a codec with no registered decoder.
  registered_frame_decoder(f.header.codec)->decode(f, out, want, ctx, nested);
}

inline std::vector<float> decode_top(std::span<const std::byte> bytes, const decode_limits& limits,
                                     delta_state* stream) {
  const frame_view f = parse_frame(bytes, limits);
  decode_context ctx(limits, stream);
  ctx.charge(f.header.count, sizeof(float), "header.count");
  std::vector<float> out(static_cast<std::size_t>(f.header.count));
  decode_frame(bytes, out, element::f32, ctx, 0);
  return out;
}
}  // namespace detail

//! The element count a frame decodes to, from its header alone.
[[nodiscard]] inline std::uint64_t decoded_count(std::span<const std::byte> frame, const decode_limits& limits = {}) {
  return parse_frame(frame, limits).header.count;
}

//! Decodes one frame, which must fill `frame` exactly. A delta frame needs a decoder.
[[nodiscard]] inline std::vector<float> decode(std::span<const std::byte> frame, const decode_limits& limits = {}) {
  return detail::decode_top(frame, limits, nullptr);
}

//! A receiver: the caller's limits, and the state of one delta-coded stream.
class decoder {
 public:
  explicit decoder(decode_limits limits = {}) : limits_(limits) {}

  [[nodiscard]] std::vector<float> decode(std::span<const std::byte> frame) {
    return detail::decode_top(frame, limits_, &stream_);
  }

  //! Into caller memory: out.size() must be the frame's count. On failure `out` may hold partial output.
  void decode_into(std::span<const std::byte> frame, std::span<float> out) {
    decode_context ctx(limits_, &stream_);
    detail::decode_frame(frame, out, element::f32, ctx, 0);
  }

  [[nodiscard]] const decode_limits& limits() const noexcept { return limits_; }

 private:
  decode_limits limits_;
  detail::delta_state stream_;
};

}  // namespace trinity::compress
