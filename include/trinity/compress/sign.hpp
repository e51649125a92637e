#pragma once
//! \file
//! sign<Block>: one bit per element plus one scale per block, the 1-bit
//! compressor of signSGD with error feedback (Karimireddy et al., 2019) and
//! DeepSpeed's 1-bit Adam. The scale is the block's mean |x|, which minimizes
//! ||x - scale·sign(x)||_2, and leaves ||x - y||^2 = ||x||^2 - Block·mean^2:
//! never more error than the input itself (a contraction, bound 1), which is
//! what error feedback needs to converge. Use it as
//! `error_feedback<sign<>>`; alone it is biased.
//!
//! Wire body: ceil(n / Block) scales (f32), then ceil(n / 8) bytes of sign
//! bits, element i in bit i % 8 of byte i / 8, set for negative.

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/detail/sign_kernel.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>

namespace trinity::compress {

template <std::uint32_t Block = 256>
struct sign {
  static_assert(Block >= 8 && Block <= (1u << 20) && Block % 8 == 0,
                "trinity: sign<Block> needs a block that is a multiple of 8, from 8 to 2^20");

  using compressor_concept = compressor_tag;
  static constexpr compressor_traits traits{.name = "sign",
                                            .wire_codec = codec::sign,
                                            .role = role::values,
                                            .error = {error_kind::contraction, 1.0},
                                            .expected_ratio = 32.0 / (1.0 + 32.0 / Block)};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    run(in, nullptr, residual.empty() ? nullptr : residual.data(), out);
  }

  //! Error feedback in one pass (what error_feedback<sign> calls): encodes in + error and leaves in `error`
  //! what this call lost. The same bytes and the same error as encode(in + error, out, error).
  void encode_with_feedback(std::span<const float> in, std::span<float> error, frame_buffer& out) {
    detail::require_residual_size(in.size(), error.size());
    run(in, error.data(), error.data(), out);
  }

 private:
  void run(std::span<const float> in, const float* add, float* residual, frame_buffer& out) {
    const std::size_t n = in.size();
    const std::size_t blocks = (n + Block - 1) / Block;
    const std::size_t at = detail::begin_frame(out, codec::sign, element::f32, n, {Block, 0, 0, 0});
    const std::size_t scales_at = out.size();
    out.grow(blocks * 4 + (n + 7) / 8);
    if (scratch_.size() < detail::sign_scratch_floats(n, Block)) scratch_.resize(detail::sign_scratch_floats(n, Block));
    std::byte* scales = out.data() + scales_at;
    const detail::sign_job job{
        in.data(), add, residual, n, Block, scales, reinterpret_cast<std::uint8_t*>(scales + blocks * 4)};
    const auto stop = detail::sign_encode(job, scratch_.data());
    if (stop.what != detail::quant_stop::done) {
      out.shrink_to(at);  // no half-written frame is left behind
      const std::size_t lo = stop.block * Block, len = std::min<std::size_t>(Block, n - lo);
      if (stop.what == detail::quant_stop::non_finite) {
        detail::require_finite(traits.name, in.first(lo + len));
        detail::refuse_overflow(traits.name, "input plus its carried error");
      }
      detail::refuse_overflow(traits.name, "block sum of magnitudes");
    }
    detail::finish_frame(out, at);
  }

  std::vector<float> scratch_;
};

namespace detail {
inline void decode_sign_body(const frame_view& f, std::span<float> out, element want) {
  if (want != element::f32 || f.header.element != element::f32) fail("header.element", "a sign frame decodes to f32");
  const std::uint32_t block = f.header.params[0];
  if (block < 8 || block > (1u << 20) || block % 8)
    fail("sign.block", std::to_string(block) + " is not a multiple of 8 from 8 to 2^20");
  if (f.header.params[1] || f.header.params[2] || f.header.params[3]) fail("sign.params", "params[1..3] must be 0");
  const std::uint64_t n = out.size();
  const std::uint64_t blocks = n / block + (n % block != 0);
  require_body_size(f, checked_add(checked_mul(blocks, 4, "header.count"), n / 8 + (n % 8 != 0), "header.count"),
                    "sign");
  const std::byte* scales = f.body.data();
  const auto* bits = reinterpret_cast<const std::uint8_t*>(scales + blocks * 4);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const float scale = load<float>(scales + 4 * b);
    if (!(scale >= 0.0f && scale <= FLT_MAX))
      fail("sign.scales[" + std::to_string(b) + "]", "must be finite and non-negative");
    const std::size_t lo = static_cast<std::size_t>(b * block);
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(block, n - lo));
    const std::uint32_t pos = std::bit_cast<std::uint32_t>(scale);
    for (std::size_t j = 0; j < len; ++j) {
      const std::uint32_t neg = (static_cast<std::uint32_t>(bits[(lo + j) / 8]) >> ((lo + j) % 8)) & 1u;
      out[lo + j] = std::bit_cast<float>(pos | (neg << 31));
    }
  }
}
}  // namespace detail

namespace detail {
//! sign frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder sign_frames{"sign", &decode_with<&decode_sign_body>};
inline const bool sign_frames_registered = register_frame_decoder(codec::sign, sign_frames);
}  // namespace detail

}  // namespace trinity::compress
