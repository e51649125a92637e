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

#include <trinity/compress/decode.hpp>
#include <trinity/compress/detail/bytes.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

namespace trinity::fuzz {

inline constexpr compress::decode_limits fuzz_limits{.max_bytes = std::size_t{64} << 20, .max_depth = 4,
                                                     .verify_hashes = false};

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

//! Decodes, accepting a decode_error as the answer to bad bytes.
inline void decode_expecting_errors(compress::decoder& rx, std::span<const std::byte> frame) {
  try {
    const auto out = rx.decode(frame);
    if (out.size() != compress::decoded_count(frame, fuzz_limits)) std::abort();
  } catch (const compress::decode_error&) {
  }
}

}  // namespace trinity::fuzz

// One target per decoder: fuzz_<codec>.cpp defines TRINITY_FUZZ_CODEC and includes this.
#ifdef TRINITY_FUZZ_CODEC
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto frame = fuzz::frame_of(compress::codec::TRINITY_FUZZ_CODEC, data, size);
  fuzz::decode_expecting_errors(rx, frame.bytes());
  return 0;
}
#endif
