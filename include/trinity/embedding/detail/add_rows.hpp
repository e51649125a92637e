#pragma once
//! \file
//! A bag's rows summed into its output: out[k] = ((0 + r0[k]) + r1[k]) + ... in the indices' order. On the widest
//! instruction set the CPU has (detail/isa.hpp) the sums run across k, a chunk of the output held in registers
//! while every row of the bag is added to it, so each element still adds its rows one after another in the same
//! order and every path writes the portable path's bits.

#include <cstddef>

#include <trinity/detail/isa.hpp>

namespace trinity::embedding::detail {

using trinity::detail::isa;

inline void add_row_portable(float* out, const float* row, std::size_t dim) noexcept {
  for (std::size_t k = 0; k < dim; ++k) out[k] += row[k];
}

inline void sum_rows_portable(const float* const* rows, std::size_t n, std::size_t dim, float* out) noexcept {
  for (std::size_t k = 0; k < dim; ++k) out[k] = 0.0f;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < dim; ++k) out[k] += rows[r][k];
}

#if TRINITY_X86
TRINITY_SIMD_WARNINGS_OFF
TRINITY_TARGET_AVX2 inline void add_row_avx2(float* out, const float* row, std::size_t dim) noexcept {
  std::size_t k = 0;
  for (; k + 8 <= dim; k += 8)
    _mm256_storeu_ps(out + k, _mm256_add_ps(_mm256_loadu_ps(out + k), _mm256_loadu_ps(row + k)));
  for (; k < dim; ++k) out[k] += row[k];
}

TRINITY_TARGET_AVX512 inline void add_row_avx512(float* out, const float* row, std::size_t dim) noexcept {
  for (std::size_t k = 0; k < dim; k += 16) {
    const auto m = static_cast<__mmask16>(dim - k >= 16 ? 0xFFFFu : (1u << (dim - k)) - 1);
    _mm512_mask_storeu_ps(out + k, m,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(m, out + k), _mm512_maskz_loadu_ps(m, row + k)));
  }
}

TRINITY_TARGET_AVX2 inline void sum_rows_avx2(const float* const* rows, std::size_t n, std::size_t dim,
                                              float* out) noexcept {
  std::size_t k = 0;
  for (; k + 32 <= dim; k += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t r = 0; r < n; ++r) {
      const float* x = rows[r] + k;
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + 24));
    }
    _mm256_storeu_ps(out + k, a0);
    _mm256_storeu_ps(out + k + 8, a1);
    _mm256_storeu_ps(out + k + 16, a2);
    _mm256_storeu_ps(out + k + 24, a3);
  }
  for (; k + 8 <= dim; k += 8) {
    __m256 a = _mm256_setzero_ps();
    for (std::size_t r = 0; r < n; ++r) a = _mm256_add_ps(a, _mm256_loadu_ps(rows[r] + k));
    _mm256_storeu_ps(out + k, a);
  }
  for (; k < dim; ++k) {
    float a = 0.0f;
    for (std::size_t r = 0; r < n; ++r) a += rows[r][k];
    out[k] = a;
  }
}

TRINITY_TARGET_AVX512 inline void sum_rows_avx512(const float* const* rows, std::size_t n, std::size_t dim,
                                                  float* out) noexcept {
  std::size_t k = 0;
  for (; k + 64 <= dim; k += 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t r = 0; r < n; ++r) {
      const float* x = rows[r] + k;
      a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x));
      a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + 16));
      a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + 32));
      a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + 48));
    }
    _mm512_storeu_ps(out + k, a0);
    _mm512_storeu_ps(out + k + 16, a1);
    _mm512_storeu_ps(out + k + 32, a2);
    _mm512_storeu_ps(out + k + 48, a3);
  }
  for (; k < dim; k += 16) {
    const auto m = static_cast<__mmask16>(dim - k >= 16 ? 0xFFFFu : (1u << (dim - k)) - 1);
    __m512 a = _mm512_setzero_ps();
    for (std::size_t r = 0; r < n; ++r) a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(m, rows[r] + k));
    _mm512_mask_storeu_ps(out + k, m, a);
  }
}
TRINITY_SIMD_WARNINGS_ON
#endif

//! out[k] += row[k] for k < dim, on `set`: one row into a bag's running sum, for rows that cannot all be held
//! at once (a cached table's row may move when the next is looked up).
inline void add_row(isa set, float* out, const float* row, std::size_t dim) noexcept {
#if TRINITY_X86
  if (set == isa::avx512) return add_row_avx512(out, row, dim);
  if (set == isa::avx2) return add_row_avx2(out, row, dim);
#endif
  (void)set;
  add_row_portable(out, row, dim);
}

//! out = the sum of the n rows (dim floats each), in their order, on `set`.
inline void sum_rows(isa set, const float* const* rows, std::size_t n, std::size_t dim, float* out) noexcept {
#if TRINITY_X86
  if (set == isa::avx512) return sum_rows_avx512(rows, n, dim, out);
  if (set == isa::avx2) return sum_rows_avx2(rows, n, dim, out);
#endif
  (void)set;
  sum_rows_portable(rows, n, dim, out);
}

}  // namespace trinity::embedding::detail
