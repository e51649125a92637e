#pragma once
//! \file
//! The instruction set a hot loop runs on, chosen once per process from what
//! the CPU has. A header-only library is compiled with its user's flags, which
//! are usually a generic x86-64's: the kernels are compiled for AVX2 and
//! AVX-512 inside the same header (function target attributes) and picked at
//! run time, so a default build still runs at the machine's width. Every path
//! writes the same bytes as the portable one (tests check it on each set this
//! CPU has, forcing each with `scoped_isa`).

#include <atomic>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TRINITY_X86 1
#include <immintrin.h>
// The attributes a kernel compiled for one set carries. AVX-512BW/VL for byte and word lanes; no FMA, so a
// multiply and an add stay two roundings, as in the portable code.
#define TRINITY_TARGET_AVX2 [[gnu::target("avx2,bmi,bmi2,popcnt,f16c")]]
#define TRINITY_TARGET_AVX512 [[gnu::target("avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi,bmi2,popcnt,f16c")]]
#else
#define TRINITY_X86 0
#endif

// GCC 12's AVX-512 intrinsics pass an undefined vector to their masked builtins, which its flow analysis
// then reports as maybe uninitialized wherever they inline: a known false positive, silenced around kernels.
#if defined(__GNUC__) && !defined(__clang__)
#define TRINITY_SIMD_WARNINGS_OFF                                                            \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define TRINITY_SIMD_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define TRINITY_SIMD_WARNINGS_OFF
#define TRINITY_SIMD_WARNINGS_ON
#endif

namespace trinity::detail {

enum class isa { portable = 0, avx2 = 1, avx512 = 2 };

inline const char* to_string(isa s) noexcept {
  return s == isa::avx512 ? "avx512" : s == isa::avx2 ? "avx2" : "portable";
}

//! What this CPU runs best, cached; "avx2" needs AVX2, BMI2 and FMA (and so F16C), "avx512" AVX-512 F, BW, VL, DQ.
inline isa detected_isa() noexcept {
#if TRINITY_X86
  static const isa found = [] {
    __builtin_cpu_init();
    // F16C is not asked for: every CPU with AVX2 and FMA has it, and clang's builtin does not know the name.
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    return avx512 ? isa::avx512 : avx2 ? isa::avx2 : isa::portable;
  }();
  return found;
#else
  return isa::portable;
#endif
}

inline std::atomic<int>& isa_ceiling() noexcept {
  static std::atomic<int> ceiling{static_cast<int>(isa::avx512)};
  return ceiling;
}

//! The set the kernels use now: the best the CPU has, at most the ceiling a scoped_isa set.
inline isa best_isa() noexcept {
  const int found = static_cast<int>(detected_isa());
  const int ceiling = isa_ceiling().load(std::memory_order_relaxed);
  return static_cast<isa>(found < ceiling ? found : ceiling);
}

//! Caps the kernels at `s` while it lives (tests, and benchmarks that compare the paths). Not for
//! concurrent use with kernels running on other threads.
class scoped_isa {
 public:
  explicit scoped_isa(isa s) noexcept : saved_(isa_ceiling().exchange(static_cast<int>(s))) {}
  ~scoped_isa() { isa_ceiling().store(saved_); }
  scoped_isa(const scoped_isa&) = delete;
  scoped_isa& operator=(const scoped_isa&) = delete;

 private:
  int saved_;
};

}  // namespace trinity::detail
