#pragma once
//! \file
//! quantize<Bits, Block>: absmax block quantization to int8 or int4. Each
//! block of `Block` floats keeps one fp32 scale, max|x| / L with L = 127
//! (int8) or 7 (int4), and each element rounds to the nearest of the 2L+1
//! levels, so |x - y| <= max|x| / 2L within its block. Symmetric levels keep
//! zero exact. Add error feedback with `error_feedback<quantize<...>>`.
//!
//! Wire body: ceil(n / Block) scales (f32), then n int8 values, or n int4
//! values packed two per byte (low nibble first).

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/detail/levels.hpp>
#include <trinity/compress/detail/quantize_kernel.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

namespace detail {
inline constexpr std::uint32_t max_block = 1u << 20;

constexpr int quant_levels(unsigned bits) { return bits == 8 ? 127 : 7; }

}  // namespace detail

template <unsigned Bits = 8, std::uint32_t Block = 128>
struct quantize {
  static_assert(Bits == 8 || Bits == 4, "trinity: quantize<Bits> supports 8 (int8) and 4 (int4) bits");
  static_assert(Block >= 2 && Block <= detail::max_block && Block % 2 == 0,
                "trinity: quantize<Bits, Block> needs an even block of 2 to 2^20 elements");

  using compressor_concept = compressor_tag;
  static constexpr int levels = detail::quant_levels(Bits);
  static constexpr compressor_traits traits{.name = Bits == 8 ? "int8" : "int4",
                                            .wire_codec = codec::block_quant,
                                            .role = role::values,
                                            .error = {error_kind::block_absmax, 0.5 / levels},
                                            .expected_ratio = 32.0 / (Bits + 32.0 / Block)};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    run(in, nullptr, residual.empty() ? nullptr : residual.data(), out);
  }

  //! Error feedback in one pass (what error_feedback<quantize> calls): encodes in + error and leaves in
  //! `error` what this call lost. The same bytes and the same error as encode(in + error, out, error).
  void encode_with_feedback(std::span<const float> in, std::span<float> error, frame_buffer& out) {
    detail::require_residual_size(in.size(), error.size());
    run(in, error.data(), error.data(), out);
  }

 private:
  void run(std::span<const float> in, const float* add, float* residual, frame_buffer& out) {
    const std::size_t n = in.size();
    const std::size_t blocks = (n + Block - 1) / Block;
    const std::size_t at = detail::begin_frame(out, codec::block_quant, element::f32, n, {Bits, Block, 0, 0});
    const std::size_t scales_at = out.size();
    out.grow(blocks * 4 + detail::level_bytes(n, Bits));
    const std::size_t one = std::min<std::size_t>(Block, n);
    if (scratch_.size() < detail::quant_scratch_floats(n, Block))
      scratch_.resize(detail::quant_scratch_floats(n, Block));
    if (q_.size() < one) q_.resize(one);
    const detail::quant_job job{
        in.data(), add, residual, n, Block, Bits, out.data() + scales_at, out.data() + scales_at + blocks * 4};
    const auto stop = detail::quantize(job, scratch_.data(), q_.data());
    if (stop.what != detail::quant_stop::done) {
      out.shrink_to(at);  // no half-written frame is left behind
      const std::size_t lo = stop.block * Block, len = std::min<std::size_t>(Block, n - lo);
      if (stop.what == detail::quant_stop::non_finite) {
        detail::require_finite(traits.name, in.first(lo + len));
        detail::refuse_overflow(traits.name, "input plus its carried error");
      }
      detail::refuse_overflow(traits.name, "block scale");
    }
    detail::finish_frame(out, at);
  }

  std::vector<float> scratch_;
  std::vector<std::int8_t> q_;
};

namespace detail {
inline void decode_block_quant_body(const frame_view& f, std::span<float> out, element want) {
  if (want != element::f32 || f.header.element != element::f32)
    fail("header.element", "a block_quant frame decodes to f32");
  const std::uint32_t bits = f.header.params[0];
  const std::uint32_t block = f.header.params[1];
  if (bits != 8 && bits != 4) fail("block_quant.bits", std::to_string(bits) + " is not 8 or 4");
  if (block < 2 || block > max_block || block % 2)
    fail("block_quant.block", std::to_string(block) + " is not an even block size from 2 to 2^20");
  if (f.header.params[2] || f.header.params[3]) fail("block_quant.params", "params[2] and params[3] must be 0");
  const std::uint64_t n = out.size();
  const std::uint64_t blocks = n / block + (n % block != 0);
  require_body_size(f, checked_add(checked_mul(blocks, 4, "header.count"), level_bytes(n, bits), "header.count"),
                    "block_quant");
  const std::byte* scales = f.body.data();
  const std::byte* values = scales + blocks * 4;
  const int levels = quant_levels(bits);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const float scale = load<float>(scales + 4 * b);
    if (!(scale >= 0.0f && scale <= FLT_MAX / 2 / static_cast<float>(levels)))
      fail("block_quant.scales[" + std::to_string(b) + "]",
           "must be non-negative and at most FLT_MAX / 2 / levels, as every encoder writes it");
    const std::size_t lo = static_cast<std::size_t>(b * block);
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(block, n - lo));
    int bad = 0;
    for (std::size_t j = 0; j < len; ++j) {
      const int v = load_level(values, lo + j, bits);
      bad |= v < -levels;
      out[lo + j] = static_cast<float>(v) * scale;
    }
    if (bad)
      fail("block_quant.values", "block " + std::to_string(b) + " holds a level outside the symmetric range [-" +
                                     std::to_string(levels) + ", " + std::to_string(levels) + "]");
  }
}
}  // namespace detail

using int8 = quantize<8>;
using int4 = quantize<4>;

namespace detail {
//! block_quant frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder block_quant_frames{"block_quant", &decode_with<&decode_block_quant_body>};
inline const bool block_quant_frames_registered = register_frame_decoder(codec::block_quant, block_quant_frames);
}  // namespace detail

}  // namespace trinity::compress
