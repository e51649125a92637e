#pragma once
//! \file
//! One part of a product quantizer's distance table: out[c] = Σ_k (q[k] − centroid_c[k])² over the part's values
//! k in order, for its 256 centroids, from codebooks laid out by value then centroid. On the widest instruction
//! set the CPU has (detail/isa.hpp) a chunk of the 256 sums is held in registers while every value is added to
//! it: each sum still adds its terms one after another in the same order, a subtraction, a multiplication and an
//! addition (never fused), so every path writes the portable path's bits.

#include <cstddef>

#include <trinity/detail/isa.hpp>

// A multiply and an add stay two roundings in every path, whatever -ffp-contract says (GCC fuses intrinsics too).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace trinity::retrieval::detail {

using trinity::detail::isa;
inline constexpr std::size_t pq_centroids = 256;

inline void part_table_portable(const float* q, const float* by_value, std::size_t values, float* out) noexcept {
  for (std::size_t c = 0; c < pq_centroids; ++c) out[c] = 0.0f;
  for (std::size_t k = 0; k < values; ++k)
    for (std::size_t c = 0; c < pq_centroids; ++c) {
      const float x = q[k] - by_value[k * pq_centroids + c];
      out[c] += x * x;
    }
}

#if TRINITY_X86
TRINITY_SIMD_WARNINGS_OFF
TRINITY_TARGET_AVX2 inline void part_table_avx2(const float* q, const float* by_value, std::size_t values,
                                                float* out) noexcept {
  for (std::size_t c = 0; c < pq_centroids; c += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t k = 0; k < values; ++k) {
      const __m256 v = _mm256_set1_ps(q[k]);
      const float* col = by_value + k * pq_centroids + c;
      const __m256 x0 = _mm256_sub_ps(v, _mm256_loadu_ps(col)), x1 = _mm256_sub_ps(v, _mm256_loadu_ps(col + 8)),
                   x2 = _mm256_sub_ps(v, _mm256_loadu_ps(col + 16)), x3 = _mm256_sub_ps(v, _mm256_loadu_ps(col + 24));
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(x0, x0));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(x1, x1));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(x2, x2));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(x3, x3));
    }
    _mm256_storeu_ps(out + c, a0);
    _mm256_storeu_ps(out + c + 8, a1);
    _mm256_storeu_ps(out + c + 16, a2);
    _mm256_storeu_ps(out + c + 24, a3);
  }
}

TRINITY_TARGET_AVX512 inline void part_table_avx512(const float* q, const float* by_value, std::size_t values,
                                                    float* out) noexcept {
  for (std::size_t c = 0; c < pq_centroids; c += 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t k = 0; k < values; ++k) {
      const __m512 v = _mm512_set1_ps(q[k]);
      const float* col = by_value + k * pq_centroids + c;
      const __m512 x0 = _mm512_sub_ps(v, _mm512_loadu_ps(col)), x1 = _mm512_sub_ps(v, _mm512_loadu_ps(col + 16)),
                   x2 = _mm512_sub_ps(v, _mm512_loadu_ps(col + 32)), x3 = _mm512_sub_ps(v, _mm512_loadu_ps(col + 48));
      a0 = _mm512_add_ps(a0, _mm512_mul_ps(x0, x0));
      a1 = _mm512_add_ps(a1, _mm512_mul_ps(x1, x1));
      a2 = _mm512_add_ps(a2, _mm512_mul_ps(x2, x2));
      a3 = _mm512_add_ps(a3, _mm512_mul_ps(x3, x3));
    }
    _mm512_storeu_ps(out + c, a0);
    _mm512_storeu_ps(out + c + 16, a1);
    _mm512_storeu_ps(out + c + 32, a2);
    _mm512_storeu_ps(out + c + 48, a3);
  }
}
TRINITY_SIMD_WARNINGS_ON
#endif

//! One part's 256 squared distances, on `set`.
inline void part_table(isa set, const float* q, const float* by_value, std::size_t values, float* out) noexcept {
#if TRINITY_X86
  if (set == isa::avx512) return part_table_avx512(q, by_value, values, out);
  if (set == isa::avx2) return part_table_avx2(q, by_value, values, out);
#endif
  (void)set;
  part_table_portable(q, by_value, values, out);
}

}  // namespace trinity::retrieval::detail

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
