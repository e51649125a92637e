#pragma once
//! \file
//! zstd<Level>: Zstandard, lossless, from libzstd. On its own it compresses
//! the floats' bytes (little gain on gradients: their mantissas are noise);
//! at the end of a chain it squeezes what a quantizer or sparsifier left.
//! Part of the trinity::compress target, which links libzstd.

#include <zstd.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>

#include <trinity/compress/detail/byte_stage.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

template <int Level = 3>
struct zstd {
  static_assert(Level >= -7 && Level <= 22, "trinity: zstd levels run from -7 (fastest) to 22 (smallest)");

  using compressor_concept = compressor_tag;
  // 1.08: zstd -3 on 64 MiB of N(0,1) fp32 (bench/compress.cpp, ratio counter).
  static constexpr compressor_traits traits{.name = "zstd",
                                            .wire_codec = codec::zstd,
                                            .role = role::bytes,
                                            .error = {error_kind::exact, 0.0},
                                            .expected_ratio = 1.08};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    wrap(std::as_bytes(in), out, element::f32, in.size());
    std::fill(residual.begin(), residual.end(), 0.0f);
  }

  //! Appends a zstd frame holding `raw`: `count` elements of type `e`, or a frame when e is element::frame.
  void wrap(std::span<const std::byte> raw, frame_buffer& out, element e, std::uint64_t count) {
    if (!cctx_) cctx_.reset(ZSTD_createCCtx());
    const std::size_t at = detail::begin_frame(out, codec::zstd, e, count, detail::raw_size_params(raw.size()));
    const std::size_t bound = ZSTD_compressBound(raw.size());
    std::byte* dst = out.grow(bound);
    const std::size_t n = ZSTD_compressCCtx(cctx_.get(), dst, bound, raw.data(), raw.size(), Level);
    if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.shrink_to(at + header_size + n);
    detail::finish_frame(out, at);
  }

 private:
  struct free_cctx {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  std::unique_ptr<ZSTD_CCtx, free_cctx> cctx_;
};

namespace detail {
inline void decode_zstd_body(const frame_view& f, std::span<float> out, element want, decode_context& ctx,
                             const nested_decoder& nested) {
  const byte_stage_plan plan = plan_byte_stage(f, out, want, ctx, "zstd");
  finish_byte_stage(plan, out, want, nested, [&](std::byte* dst, std::uint64_t size) {
    struct free_dctx {
      void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
    };
    std::unique_ptr<ZSTD_DCtx, free_dctx> dctx(ZSTD_createDCtx());
    // The window a frame may ask for is bounded by what it decompresses to, so a
    // hostile frame header cannot make zstd allocate beyond the caller's limit.
    int window_log = 10;
    while (window_log < 31 && (std::uint64_t{1} << window_log) < size) ++window_log;
    ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, window_log);
    const std::size_t n =
        ZSTD_decompressDCtx(dctx.get(), dst, static_cast<std::size_t>(size), f.body.data(), f.body.size());
    if (ZSTD_isError(n)) fail("zstd.body", std::string("does not decompress: ") + ZSTD_getErrorName(n));
    if (n != size)
      fail("zstd.body",
           "decompresses to " + std::to_string(n) + " bytes where the header says " + std::to_string(size));
  });
}
}  // namespace detail

namespace detail {
//! zstd frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder zstd_frames{"zstd", &decode_with<&decode_zstd_body>};
inline const bool zstd_frames_registered = register_frame_decoder(codec::zstd, zstd_frames);
}  // namespace detail

}  // namespace trinity::compress
