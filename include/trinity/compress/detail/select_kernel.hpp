#pragma once
//! \file
//! The sampled top-k's streaming pass, on the best instruction set the CPU has
//! (detail/isa.hpp): the indices and values of every element whose magnitude's
//! bit pattern is at least a threshold, ascending, so the exact trim after it
//! never goes back to the input. One read of the input (and, with error
//! feedback, of the carried error, which becomes the corrected input in place);
//! the compaction is a compress (AVX-512) or a shuffle from a table of the 256
//! masks (AVX2). Every path returns the same indices and values.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include <trinity/detail/isa.hpp>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
TRINITY_SIMD_WARNINGS_OFF
#endif

namespace trinity::compress::detail {

//! The pass over n elements: with `add`, each element is first x[i] + add[i], written back to add[i] (error
//! feedback's corrected input, kept in place). The indices whose value's magnitude bits are at least thr go
//! to `idx`, and their values to `val`; both need room for n + 16.
struct select_job {
  const float* x = nullptr;
  float* add = nullptr;
  std::size_t n = 0;
  std::uint32_t thr = 0;
  std::uint32_t* idx = nullptr;
  float* val = nullptr;
};

//! Elements [i, n): every index and value is written, only passers advance (no branch to mispredict).
inline std::size_t select_tail(const select_job& job, std::size_t i, std::size_t count) {
  for (; i < job.n; ++i) {
    float v = job.x[i];
    if (job.add) job.add[i] = v = v + job.add[i];
    job.idx[count] = static_cast<std::uint32_t>(i);
    job.val[count] = v;
    count += (std::bit_cast<std::uint32_t>(v) & 0x7fffffffu) >= job.thr;
  }
  return count;
}

inline std::size_t select_portable(const select_job& job) { return select_tail(job, 0, 0); }

#if TRINITY_X86
//! For each 8-bit mask, the positions of its set bits, packed to the front (the AVX2 compaction).
inline const std::array<std::array<std::uint32_t, 8>, 256>& compaction_table() {
  static const auto table = [] {
    std::array<std::array<std::uint32_t, 8>, 256> t{};
    for (unsigned m = 0; m < 256; ++m) {
      unsigned k = 0;
      for (unsigned b = 0; b < 8; ++b)
        if (m >> b & 1u) t[m][k++] = b;
    }
    return t;
  }();
  return table;
}

TRINITY_TARGET_AVX2 inline std::size_t select_avx2(const select_job& job) {
  if (job.thr == 0) return select_portable(job);  // everything passes: the signed compare below needs thr > 0
  const auto& table = compaction_table();
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  // Magnitudes have the top bit clear, so unsigned >= thr is signed > thr - 1.
  const __m256i bound = _mm256_set1_epi32(static_cast<int>(job.thr - 1u));
  __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i eight = _mm256_set1_epi32(8);
  std::size_t count = 0, i = 0;
  for (; i + 8 <= job.n; i += 8) {
    __m256 v = _mm256_loadu_ps(job.x + i);
    if (job.add) {
      v = _mm256_add_ps(v, _mm256_loadu_ps(job.add + i));
      _mm256_storeu_ps(job.add + i, v);
    }
    const __m256i m = _mm256_and_si256(_mm256_castps_si256(v), abs_mask);
    const auto mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(m, bound))));
    if (mask) {
      const __m256i perm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table[mask].data()));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(job.idx + count), _mm256_permutevar8x32_epi32(index, perm));
      _mm256_storeu_ps(job.val + count, _mm256_permutevar8x32_ps(v, perm));
      count += static_cast<std::size_t>(std::popcount(mask));
    }
    index = _mm256_add_epi32(index, eight);
  }
  return select_tail(job, i, count);
}

TRINITY_TARGET_AVX512 inline std::size_t select_avx512(const select_job& job) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i bound = _mm512_set1_epi32(static_cast<int>(job.thr));
  __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i sixteen = _mm512_set1_epi32(16);
  std::size_t count = 0, i = 0;
  for (; i + 16 <= job.n; i += 16) {
    __m512 v = _mm512_loadu_ps(job.x + i);
    if (job.add) {
      v = _mm512_add_ps(v, _mm512_loadu_ps(job.add + i));
      _mm512_storeu_ps(job.add + i, v);
    }
    const __mmask16 pass = _mm512_cmpge_epu32_mask(_mm512_and_si512(_mm512_castps_si512(v), abs_mask), bound);
    if (pass) {
      // Compress in a register, then a plain store: a compress-store to memory is slow on some cores.
      _mm512_storeu_si512(job.idx + count, _mm512_maskz_compress_epi32(pass, index));
      _mm512_storeu_ps(job.val + count, _mm512_maskz_compress_ps(pass, v));
      count += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(pass)));
    }
    index = _mm512_add_epi32(index, sixteen);
  }
  return select_tail(job, i, count);
}
#endif

inline std::size_t select_at_least(const select_job& job) {
#if TRINITY_X86
  switch (trinity::detail::best_isa()) {
    case trinity::detail::isa::avx512:
      return select_avx512(job);
    case trinity::detail::isa::avx2:
      return select_avx2(job);
    default:
      break;
  }
#endif
  return select_portable(job);
}

}  // namespace trinity::compress::detail

#if defined(__GNUC__) && !defined(__clang__)
TRINITY_SIMD_WARNINGS_ON
#pragma GCC pop_options
#endif
