#pragma once
//! \file
//! The wire format: every encoded message is a frame, a 56-byte header and a
//! body. The header names the format version, the codec, the element type, the
//! element count, four codec parameters, the body's size and two XXH3 hashes
//! (one of the body, one of the header itself).
//!
//!   offset  size  field
//!        0     4  magic "TRNC"
//!        4     1  version (1)
//!        5     1  codec (compress::codec)
//!        6     1  element (compress::element)
//!        7     1  flags (0; reserved)
//!        8     8  count: elements the frame decodes to
//!       16    16  params[4]: u32 each, meaning per codec
//!       32     8  body_size
//!       40     8  body_hash: XXH3-64 of the body
//!       48     8  header_hash: XXH3-64 of bytes 0..47
//!
//! All integers little-endian. A lossless stage wraps another frame: its
//! element is `frame` and its body decompresses to that frame, so a chain is
//! a nest of frames that the decoder unwraps one level at a time.
//!
//! Parsing treats every byte as hostile: each field is checked before it is
//! used, sizes are compared by subtraction so nothing overflows, and the
//! caller's decode_limits bound every allocation and the nesting depth.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/element.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/frame_decoders.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

inline constexpr std::array<std::byte, 4> frame_magic{std::byte{'T'}, std::byte{'R'}, std::byte{'N'}, std::byte{'C'}};
inline constexpr std::uint8_t wire_version = 1;
inline constexpr std::size_t header_size = 56;

//! A frame that cannot be decoded. field() names the header field or body
//! section at fault ("header.count", "sparse.indices[3]"); problem() says what
//! is wrong with it.
class decode_error : public invalid_input {
 public:
  using invalid_input::invalid_input;
};

//! What the caller lets a decoder spend. Every allocation a decode makes,
//! output included, is charged against max_bytes before it happens.
struct decode_limits {
  std::size_t max_bytes = std::size_t{1} << 30;  //!< all allocations of one decode together
  unsigned max_depth = 4;                        //!< frames nested in frames
  //! Off only where the bytes are known intact and the hashes cost too much,
  //! and in fuzzing, to reach the body decoders. Decoding stays memory-safe
  //! either way: a hash detects corruption, it does not make parsing safe.
  bool verify_hashes = true;
};

struct frame_header {
  compress::codec codec = codec::identity;
  compress::element element = element::f32;
  std::uint64_t count = 0;
  std::array<std::uint32_t, 4> params{};
  std::uint64_t body_size = 0;
};

struct frame_view {
  frame_header header;
  std::span<const std::byte> body;
};

namespace detail {
[[noreturn]] inline void fail(std::string field, std::string problem) {
  throw decode_error(std::move(field), std::move(problem));
}

//! Starts a frame: writes a header with sizes and hashes still empty and
//! returns its offset; the encoder then appends the body.
inline std::size_t begin_frame(frame_buffer& out, codec c, element e, std::uint64_t count,
                               std::array<std::uint32_t, 4> params = {}) {
  const std::size_t at = out.size();
  std::byte* h = out.grow(header_size);
  for (std::size_t i = 0; i < 4; ++i) h[i] = frame_magic[i];
  h[4] = std::byte{wire_version};
  h[5] = static_cast<std::byte>(c);
  h[6] = static_cast<std::byte>(e);
  h[7] = std::byte{0};
  store<std::uint64_t>(h + 8, count);
  for (std::size_t i = 0; i < 4; ++i) store<std::uint32_t>(h + 16 + 4 * i, params[i]);
  return at;
}

//! Ends the frame begun at `at`: the body is everything appended since.
inline void finish_frame(frame_buffer& out, std::size_t at) {
  std::byte* h = out.data() + at;
  const std::size_t body = out.size() - at - header_size;
  store<std::uint64_t>(h + 32, body);
  store<std::uint64_t>(h + 40, hash({h + header_size, body}));
  store<std::uint64_t>(h + 48, hash({h, 48}));
}

inline void set_param(frame_buffer& out, std::size_t at, std::size_t i, std::uint32_t v) {
  store<std::uint32_t>(out.data() + at + 16 + 4 * i, v);
}
}  // namespace detail

//! What a codec writes its frames with, a user's own included (it registers their decoder under its id,
//! compress/frame_decoders.hpp): begin_frame writes the header and returns its offset, the codec appends the
//! body, and finish_frame writes the body's size and the hashes.
using detail::begin_frame;
using detail::finish_frame;

//! Splits the first frame off `bytes` and checks its header. Trailing bytes
//! are left to the caller (a stream holds frames back to back).
[[nodiscard]] inline frame_view parse_frame(std::span<const std::byte> bytes, const decode_limits& limits) {
  using detail::fail;
  if (bytes.size() < header_size)
    fail("frame", std::to_string(bytes.size()) + " bytes is shorter than the " + std::to_string(header_size) +
                      "-byte header: the frame was truncated");
  const std::byte* h = bytes.data();
  for (std::size_t i = 0; i < 4; ++i)
    if (h[i] != frame_magic[i]) fail("header.magic", "not a trinity frame (expected \"TRNC\")");
  const auto version = std::to_integer<unsigned>(h[4]);
  if (version != wire_version)
    fail("header.version", std::to_string(version) + " is not a version this decoder reads (" +
                               std::to_string(wire_version) + "); decode it with the trinity that wrote it");
  if (limits.verify_hashes && detail::load<std::uint64_t>(h + 48) != detail::hash({h, 48}))
    fail("header.header_hash", "does not match the header: the header is corrupted");
  frame_header fh;
  fh.codec = static_cast<codec>(std::to_integer<std::uint8_t>(h[5]));
  if (registered_frame_decoder(fh.codec) == nullptr)
    fail("header.codec", unregistered_codec_problem(std::to_integer<std::uint8_t>(h[5])));
  fh.element = static_cast<element>(std::to_integer<std::uint8_t>(h[6]));
  if (!is_known(fh.element))
    fail("header.element", std::to_string(std::to_integer<unsigned>(h[6])) + " is not an element type (1-5)");
  if (h[7] != std::byte{0}) fail("header.flags", "must be 0 in version 1");
  fh.count = detail::load<std::uint64_t>(h + 8);
  for (std::size_t i = 0; i < 4; ++i) fh.params[i] = detail::load<std::uint32_t>(h + 16 + 4 * i);
  fh.body_size = detail::load<std::uint64_t>(h + 32);
  if (fh.body_size > bytes.size() - header_size)
    fail("header.body_size", std::to_string(fh.body_size) + " bytes, but only " +
                                 std::to_string(bytes.size() - header_size) + " follow the header: truncated");
  const std::span<const std::byte> body{h + header_size, static_cast<std::size_t>(fh.body_size)};
  if (limits.verify_hashes && detail::load<std::uint64_t>(h + 40) != detail::hash(body))
    fail("header.body_hash", "does not match the body: the body is corrupted");
  return {fh, body};
}

namespace detail {
struct delta_state;
}

//! What one decode has spent: every allocation is charged here first, so a
//! hostile count cannot make the decoder allocate more than the caller allowed.
class decode_context {
 public:
  explicit decode_context(const decode_limits& limits, detail::delta_state* stream = nullptr)
      : limits_(limits), stream_(stream) {}

  //! The previous frame of a delta-coded stream, when the caller keeps one (compress::decoder does).
  [[nodiscard]] detail::delta_state* stream() const noexcept { return stream_; }

  [[nodiscard]] const decode_limits& limits() const noexcept { return limits_; }

  //! Charges `count` elements of `size` bytes each to the budget, or fails naming `field`.
  void charge(std::uint64_t count, std::size_t size, const char* field) {
    const std::size_t left = limits_.max_bytes - used_;
    if (count > left / size)
      detail::fail(field, std::to_string(count) + " elements of " + std::to_string(size) +
                              " bytes exceed what this decode may allocate (" + std::to_string(left) +
                              " bytes left of decode_limits.max_bytes = " + std::to_string(limits_.max_bytes) +
                              "); raise the limit if the sender is trusted");
    used_ += static_cast<std::size_t>(count) * size;
  }

 private:
  decode_limits limits_;
  detail::delta_state* stream_;
  std::size_t used_ = 0;
};

//! Size of the first frame in `bytes` (header plus body), for walking a stream.
[[nodiscard]] inline std::size_t frame_size(std::span<const std::byte> bytes, const decode_limits& limits) {
  return header_size + static_cast<std::size_t>(parse_frame(bytes, limits).header.body_size);
}

}  // namespace trinity::compress
