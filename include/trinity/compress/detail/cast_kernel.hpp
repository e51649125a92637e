#pragma once
//! \file
//! The bf16 and fp16 casts' loops, on the best instruction set the CPU has
//! (detail/isa.hpp), writing exactly what element.hpp's scalar to_bf16,
//! to_f16, from_bf16 and from_f16 write for every one of the 2^32 floats and
//! 2^16 halves: bf16 in integer arithmetic (round to nearest even, a NaN kept
//! quiet), fp16 through F16C's round-to-nearest-even conversion (which rounds
//! subnormals and quiets NaNs the same way), halves widened by integer
//! arithmetic (a signalling NaN stays signalling, as the scalar code keeps it).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <trinity/compress/element.hpp>
#include <trinity/detail/isa.hpp>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
TRINITY_SIMD_WARNINGS_OFF
#endif

namespace trinity::compress::detail {

//! Narrows n floats to 16 bits (bf16 or fp16) at `out` (little-endian), and, with a residual, x − widened.
//! fp16: returns the index of the first finite value that rounds to infinity (beyond 65504), or n.
inline std::size_t narrow_portable(bool bf16, const float* x, std::size_t n, std::byte* out, float* residual) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t h = bf16 ? to_bf16(x[i]) : to_f16(x[i]);
    if (!bf16 && (h & 0x7fffu) == 0x7c00u && (std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu) != 0x7f800000u)
      return i;
    std::memcpy(out + 2 * i, &h, 2);
    if (residual) residual[i] = x[i] - (bf16 ? from_bf16(h) : from_f16(h));
  }
  return n;
}

inline void widen_portable(bool bf16, const std::byte* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    out[i] = bf16 ? from_bf16(h) : from_f16(h);
  }
}

#if TRINITY_X86
// The scalar rules, sixteen lanes at a time.
TRINITY_TARGET_AVX512 inline __m512i bf16_of(__m512i x) {
  const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  return _mm512_mask_blend_epi32(nan, rounded, quiet);
}

TRINITY_TARGET_AVX512 inline __m512i f32_of_f16(__m512i h) {
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(0x8000)), 16);
  const __m512i e = _mm512_and_si512(_mm512_srli_epi32(h, 10), _mm512_set1_epi32(0x1f));
  const __m512i m = _mm512_and_si512(h, _mm512_set1_epi32(0x3ff));
  const __m512i normal =
      _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, _mm512_set1_epi32(112)), 23), _mm512_slli_epi32(m, 13));
  const __m512i special = _mm512_or_si512(_mm512_set1_epi32(0x7f800000), _mm512_slli_epi32(m, 13));
  // A subnormal (or zero) half is m · 2^-24, exact in binary32.
  const __m512i small = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0x1p-24f)));
  __m512i v = _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(0x1f)), normal, special);
  v = _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), v, small);
  return _mm512_or_si512(v, sign);
}

TRINITY_TARGET_AVX512 inline std::size_t narrow_avx512(bool bf16, const float* x, std::size_t n, std::byte* out,
                                                       float* residual) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512i bits = _mm512_castps_si512(v);
    __m256i h;
    if (bf16) {
      h = _mm512_cvtepi32_epi16(bf16_of(bits));
    } else {
      // All lanes through the zero-masking form: GCC's unmasked macro passes -1 as the mask, which
      // -Wsign-conversion reports in the user's build.
      h = _mm512_maskz_cvtps_ph(static_cast<__mmask16>(0xffff), v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      // A finite value beyond fp16's range became infinity: the scalar path finds it and refuses.
      const __m512i wide = _mm512_cvtepu16_epi32(h);
      const __mmask16 inf =
          _mm512_cmpeq_epi32_mask(_mm512_and_si512(wide, _mm512_set1_epi32(0x7fff)), _mm512_set1_epi32(0x7c00));
      const __mmask16 was_inf =
          _mm512_cmpeq_epi32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
      if (inf & ~was_inf) return i + narrow_portable(false, x + i, 16, out + 2 * i, nullptr);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), h);
    if (residual) {
      const __m512i wide = _mm512_cvtepu16_epi32(h);
      const __m512 back =
          bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16)) : _mm512_castsi512_ps(f32_of_f16(wide));
      _mm512_storeu_ps(residual + i, _mm512_sub_ps(v, back));
    }
  }
  const std::size_t rest = narrow_portable(bf16, x + i, n - i, out + 2 * i, residual ? residual + i : nullptr);
  return i + rest;
}

TRINITY_TARGET_AVX512 inline void widen_avx512(bool bf16, const std::byte* in, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i)));
    _mm512_storeu_si512(out + i, bf16 ? _mm512_slli_epi32(wide, 16) : f32_of_f16(wide));
  }
  widen_portable(bf16, in + 2 * i, n - i, out + i);
}

TRINITY_TARGET_AVX2 inline __m256i bf16_of(__m256i x) {
  const __m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
  // a > 0x7f800000 as signed (a has its top bit clear).
  const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

TRINITY_TARGET_AVX2 inline __m256i f32_of_f16(__m256i h) {
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x8000)), 16);
  const __m256i e = _mm256_and_si256(_mm256_srli_epi32(h, 10), _mm256_set1_epi32(0x1f));
  const __m256i m = _mm256_and_si256(h, _mm256_set1_epi32(0x3ff));
  const __m256i normal =
      _mm256_or_si256(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(112)), 23), _mm256_slli_epi32(m, 13));
  const __m256i special = _mm256_or_si256(_mm256_set1_epi32(0x7f800000), _mm256_slli_epi32(m, 13));
  const __m256i small = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(m), _mm256_set1_ps(0x1p-24f)));
  __m256i v = _mm256_blendv_epi8(normal, special, _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0x1f)));
  v = _mm256_blendv_epi8(v, small, _mm256_cmpeq_epi32(e, _mm256_setzero_si256()));
  return _mm256_or_si256(v, sign);
}

//! Eight 32-bit lanes' low halves, in order.
TRINITY_TARGET_AVX2 inline __m128i low_words(__m256i v) {
  const __m256i packed = _mm256_packus_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0xffff)), _mm256_setzero_si256());
  return _mm_unpacklo_epi64(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
}

TRINITY_TARGET_AVX2 inline std::size_t narrow_avx2(bool bf16, const float* x, std::size_t n, std::byte* out,
                                                   float* residual) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i bits = _mm256_castps_si256(v);
    __m128i h;
    if (bf16) {
      h = low_words(bf16_of(bits));
    } else {
      h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256i wide = _mm256_cvtepu16_epi32(h);
      const __m256i inf =
          _mm256_cmpeq_epi32(_mm256_and_si256(wide, _mm256_set1_epi32(0x7fff)), _mm256_set1_epi32(0x7c00));
      const __m256i was_inf =
          _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
      if (!_mm256_testc_si256(was_inf, inf)) return i + narrow_portable(false, x + i, 8, out + 2 * i, nullptr);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
    if (residual) {
      const __m256i wide = _mm256_cvtepu16_epi32(h);
      const __m256 back =
          bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)) : _mm256_castsi256_ps(f32_of_f16(wide));
      _mm256_storeu_ps(residual + i, _mm256_sub_ps(v, back));
    }
  }
  return i + narrow_portable(bf16, x + i, n - i, out + 2 * i, residual ? residual + i : nullptr);
}

TRINITY_TARGET_AVX2 inline void widen_avx2(bool bf16, const std::byte* in, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), bf16 ? _mm256_slli_epi32(wide, 16) : f32_of_f16(wide));
  }
  widen_portable(bf16, in + 2 * i, n - i, out + i);
}
#endif

inline std::size_t narrow(bool bf16, const float* x, std::size_t n, std::byte* out, float* residual) {
#if TRINITY_X86
  switch (trinity::detail::best_isa()) {
    case trinity::detail::isa::avx512:
      return narrow_avx512(bf16, x, n, out, residual);
    case trinity::detail::isa::avx2:
      return narrow_avx2(bf16, x, n, out, residual);
    default:
      break;
  }
#endif
  return narrow_portable(bf16, x, n, out, residual);
}

inline void widen(bool bf16, const std::byte* in, std::size_t n, float* out) {
#if TRINITY_X86
  switch (trinity::detail::best_isa()) {
    case trinity::detail::isa::avx512:
      return widen_avx512(bf16, in, n, out);
    case trinity::detail::isa::avx2:
      return widen_avx2(bf16, in, n, out);
    default:
      break;
  }
#endif
  widen_portable(bf16, in, n, out);
}

}  // namespace trinity::compress::detail

#if defined(__GNUC__) && !defined(__clang__)
TRINITY_SIMD_WARNINGS_ON
#pragma GCC pop_options
#endif
