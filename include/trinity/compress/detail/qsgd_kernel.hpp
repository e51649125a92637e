#pragma once
//! \file
//! QSGD's loop (compress/qsgd.hpp), portable and on AVX-512 when the CPU has
//! it (detail/isa.hpp): per bucket the L2 norm, summed in double in eight
//! lanes (lane l takes the elements j ≡ l mod 8, in order, then
//! ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))), then each element's level drawn
//! between the two nearest by the hash of (call, index), packed, and the
//! residual. Both paths do the same operations in the same order: the same
//! bytes. (AVX2 machines run the portable loop.)

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/quantize_kernel.hpp>
#include <trinity/detail/isa.hpp>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
TRINITY_SIMD_WARNINGS_OFF
#endif

namespace trinity::compress::detail {

struct qsgd_job {
  const float* x = nullptr;
  std::size_t n = 0;
  std::size_t bucket = 512;
  int levels = 7;
  unsigned bits = 4;
  std::uint32_t call = 0;      //!< this call's draw seed
  float* residual = nullptr;   //!< or null
  std::byte* norms = nullptr;  //!< ceil(n / bucket) floats
  std::byte* values = nullptr;
};

//! The bucket's norm from its eight lane sums, or a stop.
inline bool qsgd_norm(const double acc[8], std::uint32_t top, float& norm, quant_stop::kind& why) {
  if (top) {
    why = quant_stop::non_finite;
    return false;
  }
  const double sq = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  // Above FLT_MAX / 2, level · (norm / s) could round past FLT_MAX to infinity.
  if (!(std::sqrt(sq) <= FLT_MAX / 2)) {
    why = quant_stop::overflow;
    return false;
  }
  norm = static_cast<float>(std::sqrt(sq));
  return true;
}

//! Levels of elements [j, len) of a bucket starting at element lo, drawn against the fp32 norm.
inline void qsgd_levels_scalar(const qsgd_job& job, const float* x, std::size_t lo, std::size_t j, std::size_t len,
                               float norm, std::int8_t* q) {
  const int s = job.levels;
  if (norm >= 1e-30f) {
    const float s_over_norm = static_cast<float>(s) / norm;
    for (; j < len; ++j) {
      const float r = std::min(std::fabs(x[j]) * s_over_norm, static_cast<float>(s));
      const float fl = static_cast<float>(static_cast<int>(r));
      const float u =
          static_cast<float>(mix32(job.call + static_cast<std::uint32_t>(lo + j) * 0x9e3779b9u) >> 8) * 0x1p-24f;
      const int level = static_cast<int>(fl) + (u < r - fl ? 1 : 0);
      q[j] = static_cast<std::int8_t>(x[j] < 0.0f ? -level : level);
    }
  } else {
    // A norm near fp32's bottom would make s / norm overflow: draw in double; a zero norm sends zeros.
    const double s_over_norm = norm > 0.0f ? s / static_cast<double>(norm) : 0.0;
    for (; j < len; ++j) {
      const double r = std::min(std::fabs(static_cast<double>(x[j])) * s_over_norm, static_cast<double>(s));
      const double fl = std::floor(r);
      const double u = (mix32(job.call + static_cast<std::uint32_t>(lo + j) * 0x9e3779b9u) >> 8) * 0x1p-24;
      const int level = static_cast<int>(fl) + (u < r - fl ? 1 : 0);
      q[j] = static_cast<std::int8_t>(x[j] < 0.0f ? -level : level);
    }
  }
}

inline quant_stop qsgd_portable(const qsgd_job& job, std::int8_t* q) {
  const std::size_t buckets = (job.n + job.bucket - 1) / job.bucket;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = b * job.bucket, len = std::min(job.bucket, job.n - lo);
    const float* x = job.x + lo;
    double acc[8] = {};
    std::uint32_t top = 0;
    for (std::size_t j = 0; j < len; ++j) {
      top |= static_cast<std::uint32_t>((std::bit_cast<std::uint32_t>(x[j]) & 0x7f800000u) == 0x7f800000u);
      acc[j % 8] += static_cast<double>(x[j]) * static_cast<double>(x[j]);
    }
    float norm = 0;
    quant_stop::kind why{};
    if (!qsgd_norm(acc, top, norm, why)) return {why, b};
    qsgd_levels_scalar(job, x, lo, 0, len, norm, q);
    store<float>(job.norms + 4 * b, norm);
    pack_levels(job.values, lo, q, len, job.bits);
    if (job.residual) {
      const float step = norm / static_cast<float>(job.levels);
      for (std::size_t j = 0; j < len; ++j) job.residual[lo + j] = x[j] - static_cast<float>(q[j]) * step;
    }
  }
  return {};
}

#if TRINITY_X86
TRINITY_TARGET_AVX512 inline __m512i mix32_x16(__m512i h) {
  h = _mm512_xor_si512(h, _mm512_srli_epi32(h, 16));
  h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(0x85ebca6bu)));
  h = _mm512_xor_si512(h, _mm512_srli_epi32(h, 13));
  h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(0xc2b2ae35u)));
  return _mm512_xor_si512(h, _mm512_srli_epi32(h, 16));
}

TRINITY_TARGET_AVX512 inline quant_stop qsgd_avx512(const qsgd_job& job, std::int8_t* q) {
  const std::size_t buckets = (job.n + job.bucket - 1) / job.bucket;
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), exp_mask = _mm512_set1_epi32(0x7f800000);
  const __m512 top_level = _mm512_set1_ps(static_cast<float>(job.levels));
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i golden = _mm512_set1_epi32(static_cast<int>(0x9e3779b9u));
  const std::size_t ahead = std::max<std::size_t>(job.bucket, 4096);  // fetch about 16 KB ahead
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = b * job.bucket, len = std::min(job.bucket, job.n - lo);
    const float* x = job.x + lo;
    const bool fetch = lo + ahead + len <= job.n;
    __m512d acc = _mm512_setzero_pd();
    __mmask16 bad = 0;
    std::size_t j = 0;
    for (; j + 16 <= len; j += 16) {
      if (fetch) _mm_prefetch(reinterpret_cast<const char*>(x + ahead + j), _MM_HINT_T0);
      const __m512 v = _mm512_loadu_ps(x + j);
      bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(v), exp_mask), exp_mask);
      // Eight double lanes: the first eight elements, then the next eight, the portable order.
      const __m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
      const __m512d d1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
      acc = _mm512_add_pd(acc, _mm512_mul_pd(d0, d0));
      acc = _mm512_add_pd(acc, _mm512_mul_pd(d1, d1));
    }
    alignas(64) double lane_sums[8];
    _mm512_store_pd(lane_sums, acc);
    std::uint32_t top = bad != 0;
    for (; j < len; ++j) {
      top |= static_cast<std::uint32_t>((std::bit_cast<std::uint32_t>(x[j]) & 0x7f800000u) == 0x7f800000u);
      lane_sums[j % 8] += static_cast<double>(x[j]) * static_cast<double>(x[j]);
    }
    float norm = 0;
    quant_stop::kind why{};
    if (!qsgd_norm(lane_sums, top, norm, why)) return {why, b};
    store<float>(job.norms + 4 * b, norm);
    if (!(norm >= 1e-30f)) {
      qsgd_levels_scalar(job, x, lo, 0, len, norm, q);
      pack_levels(job.values, lo, q, len, job.bits);
      if (job.residual) {
        const float step = norm / static_cast<float>(job.levels);
        for (std::size_t k = 0; k < len; ++k) job.residual[lo + k] = x[k] - static_cast<float>(q[k]) * step;
      }
      continue;
    }
    const __m512 s_over_norm = _mm512_set1_ps(static_cast<float>(job.levels) / norm);
    const __m512 step = _mm512_set1_ps(norm / static_cast<float>(job.levels));
    const __m512i call = _mm512_set1_epi32(static_cast<int>(job.call));
    std::byte* out = job.values + (job.bits == 8 ? lo : lo / 2);
    for (std::size_t k = 0; k < len; k += 16) {
      const std::size_t w = std::min<std::size_t>(16, len - k);
      const auto m = static_cast<__mmask16>(w == 16 ? 0xffffu : (1u << w) - 1u);
      const __m512 v = _mm512_maskz_loadu_ps(m, x + k);
      const __m512 r = _mm512_min_ps(
          _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), abs_mask)), s_over_norm),
          top_level);
      const __m512i whole = _mm512_cvttps_epi32(r);
      const __m512 fl = _mm512_cvtepi32_ps(whole);
      const __m512i index =
          _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(lo + k))), lanes);
      const __m512i h = mix32_x16(_mm512_add_epi32(call, _mm512_mullo_epi32(index, golden)));
      const __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(h, 8)), _mm512_set1_ps(0x1p-24f));
      const __mmask16 up = _mm512_cmplt_ps_mask(u, _mm512_sub_ps(r, fl));
      const __m512i level = _mm512_mask_add_epi32(whole, up, whole, _mm512_set1_epi32(1));
      const __mmask16 negative = _mm512_cmplt_ps_mask(v, _mm512_setzero_ps());
      const __m512i l = _mm512_mask_sub_epi32(level, negative, _mm512_setzero_si512(), level);
      if (job.bits == 8) {
        _mm_mask_storeu_epi8(out + k, m, _mm512_cvtepi32_epi8(l));
      } else {
        const __m512i nib = _mm512_and_si512(l, _mm512_set1_epi32(0x0f));
        const __m512i pair = _mm512_or_si512(nib, _mm512_srli_epi64(nib, 28));
        const auto bytes = static_cast<__mmask16>((1u << ((w + 1) / 2)) - 1u);
        _mm_mask_storeu_epi8(out + k / 2, bytes, _mm512_cvtepi64_epi8(pair));
      }
      if (job.residual)
        _mm512_mask_storeu_ps(job.residual + lo + k, m, _mm512_sub_ps(v, _mm512_mul_ps(_mm512_cvtepi32_ps(l), step)));
    }
  }
  return {};
}
#endif

//! `q` holds a bucket of levels.
inline quant_stop qsgd_encode(const qsgd_job& job, std::int8_t* q) {
#if TRINITY_X86
  if (trinity::detail::best_isa() == trinity::detail::isa::avx512) return qsgd_avx512(job, q);
#endif
  return qsgd_portable(job, q);
}

}  // namespace trinity::compress::detail

#if defined(__GNUC__) && !defined(__clang__)
TRINITY_SIMD_WARNINGS_ON
#pragma GCC pop_options
#endif
