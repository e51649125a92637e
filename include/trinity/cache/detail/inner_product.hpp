#pragma once
//! \file
//! Inner products for the flat index, picked once per process by what the CPU
//! has (AVX-512, AVX2+FMA, else portable code), so a build for a generic x86-64
//! still runs at the machine's width. A tile computes R rows × Q queries at a
//! time: each row loaded from memory feeds Q products, which is what makes a
//! batch of queries compute-bound instead of bandwidth-bound.

#include <cstddef>

#include <trinity/detail/isa.hpp>

#define TRINITY_CACHE_X86 TRINITY_X86

namespace trinity::cache::detail {

using trinity::detail::best_isa;
using trinity::detail::isa;

//! out[r * out_stride + q] = <rows[r], queries[q]> for r < R, q < Q; rows and queries are d floats apart.
template <std::size_t R, std::size_t Q>
void tile_portable(const float* rows, const float* queries, std::size_t d, float* out, std::size_t out_stride) {
  // Eight independent partial sums per product: the compiler vectorises them without reassociating.
  constexpr std::size_t w = 8;
  float acc[R][Q][w] = {};
  std::size_t i = 0;
  for (; i + w <= d; i += w)
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t q = 0; q < Q; ++q)
        for (std::size_t l = 0; l < w; ++l) acc[r][q][l] += rows[r * d + i + l] * queries[q * d + i + l];
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t q = 0; q < Q; ++q) {
      float s = 0;
      for (std::size_t l = 0; l < w; ++l) s += acc[r][q][l];
      for (std::size_t t = i; t < d; ++t) s += rows[r * d + t] * queries[q * d + t];
      out[r * out_stride + q] = s;
    }
}

#if TRINITY_CACHE_X86
template <std::size_t R, std::size_t Q>
[[gnu::target("avx2,fma")]] void tile_avx2(const float* rows, const float* queries, std::size_t d, float* out,
                                           std::size_t out_stride) {
  __m256 acc[R][Q];
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t q = 0; q < Q; ++q) acc[r][q] = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    __m256 qv[Q];
    for (std::size_t q = 0; q < Q; ++q) qv[q] = _mm256_loadu_ps(queries + q * d + i);
    for (std::size_t r = 0; r < R; ++r) {
      const __m256 rv = _mm256_loadu_ps(rows + r * d + i);
      for (std::size_t q = 0; q < Q; ++q) acc[r][q] = _mm256_fmadd_ps(rv, qv[q], acc[r][q]);
    }
  }
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t q = 0; q < Q; ++q) {
      const __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc[r][q]), _mm256_extractf128_ps(acc[r][q], 1));
      const __m128 p = _mm_add_ps(h, _mm_movehl_ps(h, h));
      float s = _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)));
      for (std::size_t t = i; t < d; ++t) s += rows[r * d + t] * queries[q * d + t];
      out[r * out_stride + q] = s;
    }
}

template <std::size_t R, std::size_t Q>
[[gnu::target("avx512f")]] void tile_avx512(const float* rows, const float* queries, std::size_t d, float* out,
                                            std::size_t out_stride) {
  __m512 acc[R][Q];
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t q = 0; q < Q; ++q) acc[r][q] = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    __m512 qv[Q];
    for (std::size_t q = 0; q < Q; ++q) qv[q] = _mm512_loadu_ps(queries + q * d + i);
    for (std::size_t r = 0; r < R; ++r) {
      const __m512 rv = _mm512_loadu_ps(rows + r * d + i);
      for (std::size_t q = 0; q < Q; ++q) acc[r][q] = _mm512_fmadd_ps(rv, qv[q], acc[r][q]);
    }
  }
  if (i < d) {  // the last d mod 16 lanes through a mask, so no row is read past its end
    const __mmask16 m = static_cast<__mmask16>((1u << (d - i)) - 1u);
    __m512 qv[Q];
    for (std::size_t q = 0; q < Q; ++q) qv[q] = _mm512_maskz_loadu_ps(m, queries + q * d + i);
    for (std::size_t r = 0; r < R; ++r) {
      const __m512 rv = _mm512_maskz_loadu_ps(m, rows + r * d + i);
      for (std::size_t q = 0; q < Q; ++q) acc[r][q] = _mm512_fmadd_ps(rv, qv[q], acc[r][q]);
    }
  }
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized on its own undefined vector.
  alignas(64) float lanes[16];
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t q = 0; q < Q; ++q) {
      _mm512_store_ps(lanes, acc[r][q]);
      float s = 0;
      for (float x : lanes) s += x;
      out[r * out_stride + q] = s;
    }
}
#endif

//! The R × Q tile on the best instruction set this CPU has.
template <std::size_t R, std::size_t Q>
void tile(isa set, const float* rows, const float* queries, std::size_t d, float* out, std::size_t out_stride) {
#if TRINITY_CACHE_X86
  if (set == isa::avx512) return tile_avx512<R, Q>(rows, queries, d, out, out_stride);
  if (set == isa::avx2) return tile_avx2<R, Q>(rows, queries, d, out, out_stride);
#endif
  (void)set;
  tile_portable<R, Q>(rows, queries, d, out, out_stride);
}

//! <a, b> over d floats.
inline float dot(isa set, const float* a, const float* b, std::size_t d) {
  float out = 0;
  tile<1, 1>(set, a, b, d, &out, 1);
  return out;
}

}  // namespace trinity::cache::detail
