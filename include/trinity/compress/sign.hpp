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

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/concepts/opt_in.hpp>

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
    const std::size_t n = in.size();
    const std::size_t blocks = (n + Block - 1) / Block;
    const std::size_t at = detail::begin_frame(out, codec::sign, element::f32, n, {Block, 0, 0, 0});
    const std::size_t scales_at = out.size();
    out.grow(blocks * 4 + (n + 7) / 8);
    std::byte* scales = out.data() + scales_at;
    auto* bits = reinterpret_cast<std::uint8_t*>(scales + blocks * 4);
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t lo = b * Block;
      const std::size_t len = std::min<std::size_t>(Block, n - lo);
      const float* x = in.data() + lo;
      // Eight running sums, one per lane: the vector paths below and the scalar
      // loop add in the same order, so every path gives the same scale.
      float acc[8] = {};
      std::uint32_t top = 0;
      std::size_t j = 0;
#if defined(__AVX2__)
      // The sign bits of eight floats are one movemask: the compiler does not find it.
      {
        const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        const __m256i exp_mask = _mm256_set1_epi32(0x7f800000);
        __m256 vacc = _mm256_setzero_ps();
        __m256i vbad = _mm256_setzero_si256();
        for (; j + 8 <= len; j += 8) {
          const __m256 v = _mm256_loadu_ps(x + j);
          bits[(lo + j) / 8] = static_cast<std::uint8_t>(_mm256_movemask_ps(v));
          vacc = _mm256_add_ps(vacc, _mm256_and_ps(v, abs_mask));
          const __m256i e = _mm256_and_si256(_mm256_castps_si256(v), exp_mask);
          vbad = _mm256_or_si256(vbad, _mm256_cmpeq_epi32(e, exp_mask));
        }
        _mm256_storeu_ps(acc, vacc);
        top |= static_cast<std::uint32_t>(!_mm256_testz_si256(vbad, vbad));
      }
#elif defined(__SSE2__)
      {
        const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
        const __m128i exp_mask = _mm_set1_epi32(0x7f800000);
        __m128 lo_acc = _mm_setzero_ps(), hi_acc = _mm_setzero_ps();
        __m128i vbad = _mm_setzero_si128();
        for (; j + 8 <= len; j += 8) {
          const __m128 first = _mm_loadu_ps(x + j), second = _mm_loadu_ps(x + j + 4);
          bits[(lo + j) / 8] = static_cast<std::uint8_t>(_mm_movemask_ps(first) | (_mm_movemask_ps(second) << 4));
          lo_acc = _mm_add_ps(lo_acc, _mm_and_ps(first, abs_mask));
          hi_acc = _mm_add_ps(hi_acc, _mm_and_ps(second, abs_mask));
          vbad = _mm_or_si128(vbad, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(first), exp_mask), exp_mask));
          vbad = _mm_or_si128(vbad, _mm_cmpeq_epi32(_mm_and_si128(_mm_castps_si128(second), exp_mask), exp_mask));
        }
        _mm_storeu_ps(acc, lo_acc);
        _mm_storeu_ps(acc + 4, hi_acc);
        top |= static_cast<std::uint32_t>(_mm_movemask_epi8(vbad) != 0);
      }
#endif
      for (; j + 8 <= len; j += 8) {
        std::uint8_t byte = 0;
        for (std::size_t l = 0; l < 8; ++l) {
          const std::uint32_t u = std::bit_cast<std::uint32_t>(x[j + l]);
          acc[l] += std::bit_cast<float>(u & 0x7fffffffu);
          top |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
          byte |= static_cast<std::uint8_t>((u >> 31) << l);
        }
        bits[(lo + j) / 8] = byte;
      }
      if (j < len) {  // the tail of the last block
        std::uint8_t byte = 0;
        for (std::size_t l = 0; j + l < len; ++l) {
          const std::uint32_t u = std::bit_cast<std::uint32_t>(x[j + l]);
          acc[l] += std::bit_cast<float>(u & 0x7fffffffu);
          top |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
          byte |= static_cast<std::uint8_t>((u >> 31) << l);
        }
        bits[(lo + j) / 8] = byte;
      }
      const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      // An all-ones exponent anywhere (NaN, infinity) or an overflowing sum.
      if (top) detail::refuse_first_non_finite(traits.name, in);
      if (!(sum <= FLT_MAX)) detail::refuse_overflow(traits.name, "block sum of magnitudes");
      const float scale = sum / static_cast<float>(len);
      detail::store<float>(scales + 4 * b, scale);
      if (!residual.empty())
        for (std::size_t k = 0; k < len; ++k) residual[lo + k] = x[k] - (std::signbit(x[k]) ? -scale : scale);
    }
    detail::finish_frame(out, at);
  }
};

namespace detail {
inline void decode_sign_body(const frame_view& f, std::span<float> out, element want) {
  if (want != element::f32 || f.header.element != element::f32) fail("header.element", "a sign frame decodes to f32");
  const std::uint32_t block = f.header.params[0];
  if (block < 8 || block > (1u << 20) || block % 8)
    fail("sign.block", std::to_string(block) + " is not a multiple of 8 from 8 to 2^20");
  if (f.header.params[1] || f.header.params[2] || f.header.params[3])
    fail("sign.params", "params[1..3] must be 0");
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
      const std::uint32_t neg = (bits[(lo + j) / 8] >> ((lo + j) % 8)) & 1u;
      out[lo + j] = std::bit_cast<float>(pos | (neg << 31));
    }
  }
}
}  // namespace detail

}  // namespace trinity::compress
