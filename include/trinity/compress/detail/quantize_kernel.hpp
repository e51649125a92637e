#pragma once
//! \file
//! The absmax block quantizer's loop (int8 and int4), on the best instruction
//! set the CPU has (detail/isa.hpp). Per block: the largest magnitude, the
//! scale amax / L, each element rounded half away from zero to a level in
//! [-L, L], the levels packed (int4: two per byte, low nibble first), and the
//! residual x - level·scale. With error feedback the carried error is added on
//! the way in and the residual written back over it, in one pass (the fused
//! path error_feedback takes). Every path performs the same float operations in
//! the same order, so every path writes the same bytes and the same residual.

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/detail/isa.hpp>

// A multiply and an add stay two roundings, in every path and whatever -ffp-contract says: the bytes on
// the wire do not depend on how the user compiled.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
TRINITY_SIMD_WARNINGS_OFF
#endif

namespace trinity::compress::detail {

//! What a block quantization needs to know.
struct quant_job {
  const float* x = nullptr;    //!< the input
  const float* add = nullptr;  //!< the carried error to add first (error feedback), or null
  float* residual = nullptr;   //!< x (+ add) − decoded, or null; may be `add`
  std::size_t n = 0;
  std::size_t block = 128;
  unsigned bits = 8;            //!< 8 or 4
  std::byte* scales = nullptr;  //!< ceil(n / block) little-endian floats
  std::byte* values = nullptr;  //!< the packed levels
};

//! Where a job stopped: every block done, or the first block whose input is not finite or whose scale
//! would overflow. Blocks before it are written (and their residual), later ones are not.
struct quant_stop {
  enum kind { done, non_finite, overflow } what = done;
  std::size_t block = 0;
};

//! Floats of scratch a job needs: one chunk of blocks (the kernels work in chunks of about 16 KB).
inline std::size_t quant_scratch_floats(std::size_t n, std::size_t block) {
  return std::min(n, std::max<std::size_t>(block, 4096));
}

//! levels/amax overflows float below 1e-30: such a block rounds in double (rare, so scalar everywhere).
inline void quantize_tiny_block(const float* c, std::size_t len, int levels, float amax, float scale, std::int8_t* q,
                                float* residual) {
  const double inv = static_cast<double>(levels) / static_cast<double>(amax);
  for (std::size_t j = 0; j < len; ++j)
    q[j] = static_cast<std::int8_t>(std::clamp(static_cast<int>(std::lround(c[j] * inv)), -levels, levels));
  if (residual)
    for (std::size_t j = 0; j < len; ++j) residual[j] = c[j] - static_cast<float>(q[j]) * scale;
}

//! The block's scale from its largest magnitude's bits, or a stop.
inline bool block_scale(std::uint32_t amax_bits, int levels, float& amax, float& scale, quant_stop::kind& why) {
  if (amax_bits >= 0x7f800000u) {
    why = quant_stop::non_finite;
    return false;
  }
  amax = std::bit_cast<float>(amax_bits);
  if (amax > FLT_MAX / 2) {  // level · scale could round past FLT_MAX to infinity
    why = quant_stop::overflow;
    return false;
  }
  scale = amax / static_cast<float>(levels);
  return true;
}

//! Packs len levels (len even, or the block is the last) at element `lo` of the values.
inline void pack_levels(std::byte* values, std::size_t lo, const std::int8_t* q, std::size_t len, unsigned bits) {
  if (bits == 8) {
    std::memcpy(values + lo, q, len);
    return;
  }
  std::byte* v = values + lo / 2;
  for (std::size_t j = 0; j + 1 < len; j += 2)
    v[j / 2] = static_cast<std::byte>((q[j] & 0x0f) | ((q[j + 1] & 0x0f) << 4));
  if (len % 2) v[len / 2] = static_cast<std::byte>(q[len - 1] & 0x0f);
}

inline quant_stop quantize_portable(const quant_job& job, float* scratch, std::int8_t* q) {
  const int levels = job.bits == 8 ? 127 : 7;
  const float fl = static_cast<float>(levels);
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
    const float* c = job.x + lo;
    if (job.add) {
      for (std::size_t j = 0; j < len; ++j) scratch[j] = job.x[lo + j] + job.add[lo + j];
      c = scratch;
    }
    // Integer max over |x|'s bit pattern: for non-NaN floats it orders exactly like the values, and a NaN
    // or infinity shows up as a pattern >= 0x7f800000.
    std::uint32_t amax_bits = 0;
    for (std::size_t j = 0; j < len; ++j)
      amax_bits = std::max(amax_bits, std::bit_cast<std::uint32_t>(c[j]) & 0x7fffffffu);
    float amax = 0, scale = 0;
    quant_stop::kind why{};
    if (!block_scale(amax_bits, levels, amax, scale, why)) return {why, b};
    float* res = job.residual ? job.residual + lo : nullptr;
    if (amax == 0.0f) {
      std::fill(q, q + len, std::int8_t{0});
      if (res) std::copy(c, c + len, res);
    } else if (amax >= 1e-30f) {
      const float inv = fl / amax;
      for (std::size_t j = 0; j < len; ++j) {
        const float r = c[j] * inv;
        const int v = static_cast<int>(r + (r >= 0.0f ? 0.5f : -0.5f));
        q[j] = static_cast<std::int8_t>(std::clamp(v, -levels, levels));
      }
      if (res)
        for (std::size_t j = 0; j < len; ++j) res[j] = c[j] - static_cast<float>(q[j]) * scale;
    } else {
      quantize_tiny_block(c, len, levels, amax, scale, q, res);
    }
    store<float>(job.scales + 4 * b, scale);
    pack_levels(job.values, lo, q, len, job.bits);
  }
  return {};
}

#if TRINITY_X86
TRINITY_TARGET_AVX2 inline quant_stop quantize_avx2(const quant_job& job, float* scratch, std::int8_t* q) {
  const int levels = job.bits == 8 ? 127 : 7;
  const float fl = static_cast<float>(levels);
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256i hi = _mm256_set1_epi32(levels), lo_level = _mm256_set1_epi32(-levels);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
    const float* c = job.x + lo;
    std::size_t j = 0;
    __m256i vmax = _mm256_setzero_si256();
    std::uint32_t amax_bits = 0;
    if (job.add) {
      for (; j + 8 <= len; j += 8) {
        const __m256 v = _mm256_add_ps(_mm256_loadu_ps(job.x + lo + j), _mm256_loadu_ps(job.add + lo + j));
        _mm256_storeu_ps(scratch + j, v);
        vmax = _mm256_max_epu32(vmax, _mm256_and_si256(_mm256_castps_si256(v), abs_mask));
      }
      for (; j < len; ++j) scratch[j] = job.x[lo + j] + job.add[lo + j];
      c = scratch;
    } else {
      for (; j + 8 <= len; j += 8)
        vmax = _mm256_max_epu32(
            vmax, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + j)), abs_mask));
    }
    alignas(32) std::uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), vmax);
    for (const auto l : lanes) amax_bits = std::max(amax_bits, l);
    for (std::size_t t = len - len % 8; t < len; ++t)
      amax_bits = std::max(amax_bits, std::bit_cast<std::uint32_t>(c[t]) & 0x7fffffffu);
    float amax = 0, scale = 0;
    quant_stop::kind why{};
    if (!block_scale(amax_bits, levels, amax, scale, why)) return {why, b};
    float* res = job.residual ? job.residual + lo : nullptr;
    if (amax == 0.0f) {
      std::fill(q, q + len, std::int8_t{0});
      if (res) std::copy(c, c + len, res);
    } else if (amax >= 1e-30f) {
      const __m256 inv = _mm256_set1_ps(fl / amax), vs = _mm256_set1_ps(scale);
      j = 0;
      for (; j + 8 <= len; j += 8) {
        const __m256 v = _mm256_loadu_ps(c + j);
        const __m256 r = _mm256_mul_ps(v, inv);
        const __m256 t = _mm256_add_ps(r, _mm256_or_ps(half, _mm256_and_ps(r, sign_mask)));
        const __m256i l = _mm256_max_epi32(_mm256_min_epi32(_mm256_cvttps_epi32(t), hi), lo_level);
        // 8 levels to 8 bytes: saturating packs (values are within int8), then the two lanes' low words.
        const __m256i w = _mm256_packs_epi32(l, l);
        const __m256i by = _mm256_packs_epi16(w, w);
        const std::uint32_t a = static_cast<std::uint32_t>(_mm256_cvtsi256_si32(by));
        const std::uint32_t d = static_cast<std::uint32_t>(_mm256_extract_epi32(by, 4));
        std::memcpy(q + j, &a, 4);
        std::memcpy(q + j + 4, &d, 4);
        if (res) _mm256_storeu_ps(res + j, _mm256_sub_ps(v, _mm256_mul_ps(_mm256_cvtepi32_ps(l), vs)));
      }
      for (; j < len; ++j) {
        const float r = c[j] * (fl / amax);
        const int v = static_cast<int>(r + (r >= 0.0f ? 0.5f : -0.5f));
        q[j] = static_cast<std::int8_t>(std::clamp(v, -levels, levels));
        if (res) res[j] = c[j] - static_cast<float>(q[j]) * scale;
      }
    } else {
      quantize_tiny_block(c, len, levels, amax, scale, q, res);
    }
    store<float>(job.scales + 4 * b, scale);
    pack_levels(job.values, lo, q, len, job.bits);
  }
  return {};
}

TRINITY_TARGET_AVX512 inline quant_stop quantize_avx512(const quant_job& job, float* scratch, std::int8_t* q) {
  const int levels = job.bits == 8 ? 127 : 7;
  const float fl = static_cast<float>(levels);
  const std::size_t blocks = (job.n + job.block - 1) / job.block;
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i sign_mask = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i half = _mm512_castps_si512(_mm512_set1_ps(0.5f));
  const __m512i hi = _mm512_set1_epi32(levels), lo_level = _mm512_set1_epi32(-levels);
  // Blocks go in chunks of about 16 KB: first every block's largest magnitude (a plain stream of loads the
  // prefetchers keep up with), then the scales, then the levels from the chunk while it is still in L1.
  // Block by block, each block's scale would wait on its own loads before the next block's could start.
  const std::size_t chunk = std::max<std::size_t>(1, 4096 / job.block);
  std::uint32_t amax_bits[4096];
  for (std::size_t b0 = 0; b0 < blocks; b0 += chunk) {
    const std::size_t b1 = std::min(blocks, b0 + chunk);
    const std::size_t chunk_lo = b0 * job.block;
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
      __m512i vmax = _mm512_setzero_si512();
      std::size_t j = 0;
      if (job.add) {
        float* c = scratch + (lo - chunk_lo);
        for (; j + 16 <= len; j += 16) {
          const __m512 v = _mm512_add_ps(_mm512_loadu_ps(job.x + lo + j), _mm512_loadu_ps(job.add + lo + j));
          _mm512_storeu_ps(c + j, v);
          vmax = _mm512_max_epu32(vmax, _mm512_and_si512(_mm512_castps_si512(v), abs_mask));
        }
        if (j < len) {
          const auto m = static_cast<__mmask16>((1u << (len - j)) - 1u);
          const __m512 v =
              _mm512_add_ps(_mm512_maskz_loadu_ps(m, job.x + lo + j), _mm512_maskz_loadu_ps(m, job.add + lo + j));
          _mm512_mask_storeu_ps(c + j, m, v);
          vmax = _mm512_max_epu32(vmax, _mm512_and_si512(_mm512_castps_si512(v), abs_mask));
        }
      } else {
        for (; j + 16 <= len; j += 16)
          vmax = _mm512_max_epu32(vmax, _mm512_and_si512(_mm512_loadu_si512(job.x + lo + j), abs_mask));
        if (j < len) {
          const auto m = static_cast<__mmask16>((1u << (len - j)) - 1u);
          vmax = _mm512_max_epu32(vmax, _mm512_and_si512(_mm512_maskz_loadu_epi32(m, job.x + lo + j), abs_mask));
        }
      }
      amax_bits[b - b0] = static_cast<std::uint32_t>(_mm512_reduce_max_epu32(vmax));
    }
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t lo = b * job.block, len = std::min(job.block, job.n - lo);
      const float* c = job.add ? scratch + (lo - chunk_lo) : job.x + lo;
      float amax = 0, scale = 0;
      quant_stop::kind why{};
      if (!block_scale(amax_bits[b - b0], levels, amax, scale, why)) return {why, b};
      float* res = job.residual ? job.residual + lo : nullptr;
      std::byte* out = job.values + (job.bits == 8 ? lo : lo / 2);
      if (amax == 0.0f) {
        std::memset(out, 0, job.bits == 8 ? len : (len + 1) / 2);
        if (res) std::memmove(res, c, len * sizeof(float));
      } else if (amax >= 1e-30f) {
        const __m512 inv = _mm512_set1_ps(fl / amax), vs = _mm512_set1_ps(scale);
        // Round half away from zero (r + copysign(0.5, r), truncated), clamp, pack, residual.
        // The next chunk is fetched while this one computes: the loads of pass 1 then find it in cache.
        const float* ahead = job.x + lo + chunk * job.block;
        const float* ahead_add = job.add ? job.add + lo + chunk * job.block : nullptr;
        const bool fetch = lo + chunk * job.block + len <= job.n;
        for (std::size_t j = 0; j < len; j += 16) {
          if (fetch) {
            _mm_prefetch(reinterpret_cast<const char*>(ahead + j), _MM_HINT_T0);
            if (ahead_add) _mm_prefetch(reinterpret_cast<const char*>(ahead_add + j), _MM_HINT_T0);
          }
          const std::size_t k = std::min<std::size_t>(16, len - j);
          const auto m = static_cast<__mmask16>(k == 16 ? 0xffffu : (1u << k) - 1u);
          const __m512 v = _mm512_maskz_loadu_ps(m, c + j);
          const __m512 r = _mm512_mul_ps(v, inv);
          const __m512 h =
              _mm512_castsi512_ps(_mm512_or_si512(half, _mm512_and_si512(_mm512_castps_si512(r), sign_mask)));
          const __m512i l = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvttps_epi32(_mm512_add_ps(r, h)), hi), lo_level);
          if (job.bits == 8) {
            _mm_mask_storeu_epi8(out + j, m, _mm512_cvtepi32_epi8(l));
          } else {
            // Each 64-bit lane holds an even level in its low word and an odd one in its high word: fold the
            // odd one's nibble down beside the even one's, then keep one byte per pair.
            const __m512i nib = _mm512_and_si512(l, _mm512_set1_epi32(0x0f));
            const __m512i pair = _mm512_or_si512(nib, _mm512_srli_epi64(nib, 28));
            const auto bytes = static_cast<__mmask16>((1u << ((k + 1) / 2)) - 1u);
            _mm_mask_storeu_epi8(out + j / 2, bytes, _mm512_cvtepi64_epi8(pair));
          }
          if (res) _mm512_mask_storeu_ps(res + j, m, _mm512_sub_ps(v, _mm512_mul_ps(_mm512_cvtepi32_ps(l), vs)));
        }
      } else {
        quantize_tiny_block(c, len, levels, amax, scale, q, res);
        pack_levels(job.values, lo, q, len, job.bits);
      }
      store<float>(job.scales + 4 * b, scale);
    }
  }
  return {};
}
#endif

//! Quantizes the job on the best instruction set; `scratch` holds quant_scratch_floats and `q` a block of levels.
inline quant_stop quantize(const quant_job& job, float* scratch, std::int8_t* q) {
#if TRINITY_X86
  switch (trinity::detail::best_isa()) {
    case trinity::detail::isa::avx512:
      return quantize_avx512(job, scratch, q);
    case trinity::detail::isa::avx2:
      return quantize_avx2(job, scratch, q);
    default:
      break;
  }
#endif
  return quantize_portable(job, scratch, q);
}

}  // namespace trinity::compress::detail

#if defined(__GNUC__) && !defined(__clang__)
TRINITY_SIMD_WARNINGS_ON
#pragma GCC pop_options
#endif
