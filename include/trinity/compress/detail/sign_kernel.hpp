#pragma once
//! \file
//! The 1-bit sign codec's loop, on the best instruction set the CPU has
//! (detail/isa.hpp): per block, the sign bits (set for negative), the scale
//! mean|x| summed in eight lanes (lane l takes the elements j ≡ l mod 8, in
//! order, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))), and the residual
//! x − ±scale. With error feedback the carried error is added on the way in
//! and the residual written back over it, in one pass. Every path does the
//! same float operations in the same order: the same bytes, the same residual.

#include <algorithm>
#include <bit>
#include <cfloat>
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

struct sign_job {
  const float* x = nullptr;
  const float* add = nullptr;  //!< the carried error to add first, or null
  float* residual = nullptr;   //!< may be `add`
  std::size_t n = 0;
  std::size_t block = 256;
  std::byte* scales = nullptr;   //!< ceil(n / block) floats
  std::uint8_t* bits = nullptr;  //!< ceil(n / 8) bytes
};

//! The block's scale from its eight lane sums, or a stop (reusing the quantizer's kinds).
inline bool sign_scale(const float acc[8], std::uint32_t top, std::size_t len, float& scale, quant_stop::kind& why) {
  const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  if (top) {  // an all-ones exponent: NaN or infinity
    why = quant_stop::non_finite;
    return false;
  }
  if (!(sum <= FLT_MAX)) {
    why = quant_stop::overflow;
    return false;
  }
  scale = sum / static_cast<float>(len);
  return true;
}

//! Elements [j, len) of a block, one at a time: the vector paths' tail and the portable path's all.
inline void sign_scalar_part(const float* c, std::size_t j, std::size_t len, std::size_t lo, float acc[8],
                             std::uint32_t& top, std::uint8_t* bits) {
  for (; j < len; j += 8) {
    std::uint8_t byte = 0;
    for (std::size_t l = 0; l < 8 && j + l < len; ++l) {
      const std::uint32_t u = std::bit_cast<std::uint32_t>(c[j + l]);
      acc[l] += std::bit_cast<float>(u & 0x7fffffffu);
      top |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
      byte |= static_cast<std::uint8_t>((u >> 31) << l);
    }
    bits[(lo + j) / 8] = byte;
  }
}

inline void sign_residual_scalar(const float* c, std::size_t j, std::size_t len, float scale, float* res) {
  for (; j < len; ++j) res[j] = c[j] - (std::signbit(c[j]) ? -scale : scale);
}

inline quant_stop sign_portable(const sign_job& job, float* scratch) {
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
    const float* c = job.x + lo;
    if (job.add) {
      for (std::size_t j = 0; j < len; ++j) scratch[j] = job.x[lo + j] + job.add[lo + j];
      c = scratch;
    }
    float acc[8] = {};
    std::uint32_t top = 0;
    sign_scalar_part(c, 0, len, lo, acc, top, job.bits);
    float scale = 0;
    quant_stop::kind why{};
    if (!sign_scale(acc, top, len, scale, why)) return {why, b};
    store<float>(job.scales + 4 * b, scale);
    if (job.residual) sign_residual_scalar(c, 0, len, scale, job.residual + lo);
  }
  return {};
}

#if TRINITY_X86
TRINITY_TARGET_AVX2 inline quant_stop sign_avx2(const sign_job& job, float* scratch) {
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256i exp_mask = _mm256_set1_epi32(0x7f800000);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
    const float* c = job.add ? scratch : job.x + lo;
    __m256 vacc = _mm256_setzero_ps();
    __m256i vbad = _mm256_setzero_si256();
    std::size_t j = 0;
    for (; j + 8 <= len; j += 8) {
      __m256 v = _mm256_loadu_ps(job.x + lo + j);
      if (job.add) {
        v = _mm256_add_ps(v, _mm256_loadu_ps(job.add + lo + j));
        _mm256_storeu_ps(scratch + j, v);
      }
      job.bits[(lo + j) / 8] = static_cast<std::uint8_t>(_mm256_movemask_ps(v));
      vacc = _mm256_add_ps(vacc, _mm256_and_ps(v, abs_mask));
      vbad = _mm256_or_si256(vbad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), exp_mask), exp_mask));
    }
    if (job.add)
      for (std::size_t t = j; t < len; ++t) scratch[t] = job.x[lo + t] + job.add[lo + t];
    alignas(32) float acc[8];
    _mm256_store_ps(acc, vacc);
    std::uint32_t top = static_cast<std::uint32_t>(!_mm256_testz_si256(vbad, vbad));
    sign_scalar_part(c, j, len, lo, acc, top, job.bits);
    float scale = 0;
    quant_stop::kind why{};
    if (!sign_scale(acc, top, len, scale, why)) return {why, b};
    store<float>(job.scales + 4 * b, scale);
    if (job.residual) {
      float* res = job.residual + lo;
      const __m256 vs = _mm256_set1_ps(scale);
      std::size_t k = 0;
      for (; k + 8 <= len; k += 8) {
        const __m256 v = _mm256_loadu_ps(c + k);
        _mm256_storeu_ps(res + k, _mm256_sub_ps(v, _mm256_or_ps(vs, _mm256_and_ps(v, sign_mask))));
      }
      sign_residual_scalar(c, k, len, scale, res);
    }
  }
  return {};
}

TRINITY_TARGET_AVX512 inline quant_stop sign_avx512(const sign_job& job, float* scratch) {
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m512i sign_mask = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i exp_mask = _mm512_set1_epi32(0x7f800000);
  // Fetching about 16 KB ahead, so the loads of the next blocks overlap this one's residual (as the quantizer).
  const std::size_t chunk = std::max<std::size_t>(1, 4096 / job.block);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
    float* cs = scratch;
    const float* c = job.add ? cs : job.x + lo;
    const std::size_t next = lo + chunk * job.block;
    const bool fetch = next + len <= job.n;
    __m256 vacc = _mm256_setzero_ps();
    __mmask16 bad = 0;
    std::size_t j = 0;
    for (; j + 16 <= len; j += 16) {
      if (fetch) {
        _mm_prefetch(reinterpret_cast<const char*>(job.x + next + j), _MM_HINT_T0);
        if (job.add) _mm_prefetch(reinterpret_cast<const char*>(job.add + next + j), _MM_HINT_T0);
      }
      __m512 v = _mm512_loadu_ps(job.x + lo + j);
      if (job.add) {
        v = _mm512_add_ps(v, _mm512_loadu_ps(job.add + lo + j));
        _mm512_storeu_ps(cs + j, v);
      }
      const auto negative = static_cast<std::uint16_t>(_mm512_movepi32_mask(_mm512_castps_si512(v)));
      std::memcpy(job.bits + (lo + j) / 8, &negative, 2);
      // Eight lanes, the first eight elements then the next eight: the portable order.
      vacc = _mm256_add_ps(vacc, _mm256_and_ps(_mm512_castps512_ps256(v), abs_mask));
      vacc = _mm256_add_ps(vacc,
                           _mm256_and_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)), abs_mask));
      bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(v), exp_mask), exp_mask);
    }
    if (j + 8 <= len) {  // one more group of eight
      __m256 v = _mm256_loadu_ps(job.x + lo + j);
      if (job.add) {
        v = _mm256_add_ps(v, _mm256_loadu_ps(job.add + lo + j));
        _mm256_storeu_ps(cs + j, v);
      }
      job.bits[(lo + j) / 8] = static_cast<std::uint8_t>(_mm256_movemask_ps(v));
      vacc = _mm256_add_ps(vacc, _mm256_and_ps(v, abs_mask));
      bad |= static_cast<__mmask16>(_mm256_cmpeq_epi32_mask(
          _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7f800000)), _mm256_set1_epi32(0x7f800000)));
      j += 8;
    }
    if (job.add)
      for (std::size_t t = j; t < len; ++t) cs[t] = job.x[lo + t] + job.add[lo + t];
    alignas(32) float acc[8];
    _mm256_store_ps(acc, vacc);
    std::uint32_t top = bad != 0;
    sign_scalar_part(c, j, len, lo, acc, top, job.bits);
    float scale = 0;
    quant_stop::kind why{};
    if (!sign_scale(acc, top, len, scale, why)) return {why, b};
    store<float>(job.scales + 4 * b, scale);
    if (job.residual) {
      float* res = job.residual + lo;
      const __m512i vs = _mm512_castps_si512(_mm512_set1_ps(scale));
      std::size_t k = 0;
      for (; k + 16 <= len; k += 16) {
        const __m512 v = _mm512_loadu_ps(c + k);
        const __m512 s = _mm512_castsi512_ps(_mm512_or_si512(vs, _mm512_and_si512(_mm512_castps_si512(v), sign_mask)));
        _mm512_storeu_ps(res + k, _mm512_sub_ps(v, s));
      }
      sign_residual_scalar(c, k, len, scale, res);
    }
  }
  return {};
}
#endif

//! Floats of scratch a sign job needs.
inline std::size_t sign_scratch_floats(std::size_t n, std::size_t block) { return std::min(n, block); }

inline quant_stop sign_encode(const sign_job& job, float* scratch) {
#if TRINITY_X86
  switch (trinity::detail::best_isa()) {
    case trinity::detail::isa::avx512:
      return sign_avx512(job, scratch);
    case trinity::detail::isa::avx2:
      return sign_avx2(job, scratch);
    default:
      break;
  }
#endif
  return sign_portable(job, scratch);
}

}  // namespace trinity::compress::detail

#if defined(__GNUC__) && !defined(__clang__)
TRINITY_SIMD_WARNINGS_ON
#pragma GCC pop_options
#endif
