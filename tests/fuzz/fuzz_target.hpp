#pragma once
// What every decoder's fuzz target shares. The fuzzer's bytes become a frame
// of one fixed codec, with a valid magic, version and hashes, so the search
// spends its time in that codec's body decoder rather than on the header hash:
//
//   data[0]      element
//   data[1..8]   count (little-endian)
//   data[9..24]  params[0..3]
//   data[25..]   body
//
// Decoding runs with hashes off (nested frames inside the body would need
// their own) and a 64 MiB allocation limit. A decode_error is the expected
// answer to garbage; any other exception, a crash, a sanitizer report or a
// leak is a finding.

#include "fuzz_require.hpp"

#include <trinity/compress/decode.hpp>
#include <trinity/compress/detail/bytes.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace trinity::fuzz {

inline constexpr compress::decode_limits fuzz_limits{
    .max_bytes = std::size_t{64} << 20, .max_depth = 4, .verify_hashes = false};

//! The frame the fuzzer's bytes describe, for codec `c`.
inline compress::frame_buffer frame_of(compress::codec c, const std::uint8_t* data, std::size_t size) {
  compress::frame_buffer out;
  std::uint8_t fixed[25] = {};
  std::memcpy(fixed, data, size < 25 ? size : 25);
  std::array<std::uint32_t, 4> params{};
  for (std::size_t i = 0; i < 4; ++i) std::memcpy(&params[i], fixed + 9 + 4 * i, 4);
  std::uint64_t count = 0;
  std::memcpy(&count, fixed + 1, 8);
  const std::size_t at = compress::detail::begin_frame(out, c, static_cast<compress::element>(fixed[0]), count, params);
  if (size > 25) out.append(std::as_bytes(std::span(data + 25, size - 25)));
  compress::detail::finish_frame(out, at);
  return out;
}

//! Decodes, accepting a decode_error as the answer to bad bytes: nothing when
//! refused, the output when accepted, after checking it has the header's count.
inline std::optional<std::vector<float>> try_decode(compress::decoder& rx, std::span<const std::byte> frame) {
  try {
    auto out = rx.decode(frame);
    TRINITY_FUZZ_REQUIRE(out.size() == compress::decoded_count(frame, fuzz_limits));
    return out;
  } catch (const compress::decode_error&) {
    return std::nullopt;
  }
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

//! The header's params[i] of a frame the fuzzer's bytes describe.
inline std::uint32_t param(const compress::frame_buffer& f, std::size_t i) {
  return compress::detail::load<std::uint32_t>(f.data() + 16 + 4 * i);
}

//! One decoder's target: decode the fuzzer's frame of codec `c`; the caller
//! TRINITY_FUZZ_REQUIREs its property of every output the decoder accepts.
struct decoded {
  compress::frame_buffer frame;
  std::optional<std::vector<float>> out;
};
inline decoded decode_as(compress::codec c, compress::decoder& rx, const std::uint8_t* data, std::size_t size) {
  decoded d{frame_of(c, data, size), std::nullopt};
  d.out = try_decode(rx, d.frame.bytes());
  return d;
}

//! A decode has no state and reads no uninitialized memory: twice gives the same bits.
inline bool decodes_the_same_twice(const compress::frame_buffer& frame, const std::vector<float>& out,
                                   compress::decoder& rx) {
  const auto again = try_decode(rx, frame.bytes());
  return again && same_bits(out, *again);
}

}  // namespace trinity::fuzz
