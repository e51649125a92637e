#pragma once
//! \file
//! lz4<Acceleration>: LZ4 block compression, lossless, from liblz4. Several
//! times faster than zstd for less gain; the lossless stage to try when the
//! link is fast. One lz4 block holds at most LZ4_MAX_INPUT_SIZE (~2 GiB).
//! Part of the trinity::compress target, which links liblz4.

#include <lz4.h>

#include <algorithm>
#include <climits>
#include <span>
#include <string>

#include <trinity/compress/detail/byte_stage.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

template <int Acceleration = 1>
struct lz4 {
  static_assert(Acceleration >= 1 && Acceleration <= 65537,
                "trinity: lz4 acceleration runs from 1 (default) to 65537 (fastest, least compression)");

  using compressor_concept = compressor_tag;
  // 1.0: LZ4 finds no repeats in N(0,1) mantissas (bench/compress.cpp, ratio counter).
  static constexpr compressor_traits traits{.name = "lz4",
                                            .wire_codec = codec::lz4,
                                            .role = role::bytes,
                                            .error = {error_kind::exact, 0.0},
                                            .expected_ratio = 1.0};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    wrap(std::as_bytes(in), out, element::f32, in.size());
    std::fill(residual.begin(), residual.end(), 0.0f);
  }

  void wrap(std::span<const std::byte> raw, frame_buffer& out, element e, std::uint64_t count) {
    if (raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      throw invalid_input("input", std::to_string(raw.size()) + " bytes exceed one LZ4 block (" +
                                       std::to_string(LZ4_MAX_INPUT_SIZE) + "); split the tensor or use zstd");
    const std::size_t at = detail::begin_frame(out, codec::lz4, e, count, detail::raw_size_params(raw.size()));
    const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
    std::byte* dst = out.grow(static_cast<std::size_t>(bound));
    const int n = LZ4_compress_fast(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(dst),
                                    static_cast<int>(raw.size()), bound, Acceleration);
    if (n <= 0 && !raw.empty()) throw std::runtime_error("lz4: compression failed");
    out.shrink_to(at + header_size + static_cast<std::size_t>(n));
    detail::finish_frame(out, at);
  }
};

namespace detail {
inline void decode_lz4_body(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                            const nested_decoder& nested) {
  const byte_stage_plan plan = plan_byte_stage(f, out, want, ctx, "lz4");
  if (plan.raw_size > static_cast<std::uint64_t>(LZ4_MAX_INPUT_SIZE) ||
      f.body.size() > static_cast<std::size_t>(INT_MAX))
    fail("lz4.raw_size", "larger than one LZ4 block can be");
  finish_byte_stage(plan, out, want, nested, [&](std::byte* dst, std::uint64_t size) {
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(f.body.data()), reinterpret_cast<char*>(dst),
                                      static_cast<int>(f.body.size()), static_cast<int>(size));
    if (n < 0) fail("lz4.body", "is not a valid LZ4 block");
    if (static_cast<std::uint64_t>(n) != size)
      fail("lz4.body", "decompresses to " + std::to_string(n) + " bytes where the header says " + std::to_string(size));
  });
}
}  // namespace detail

namespace detail {
//! lz4 frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder lz4_frames{"lz4", &decode_with<&decode_lz4_body>};
inline const bool lz4_frames_registered = register_frame_decoder(codec::lz4, lz4_frames);
}  // namespace detail

}  // namespace trinity::compress
