#pragma once
//! \file
//! Zipf popularity: item r of n drawn with weight r^-s. What a skewed access stream gives a cache of the k most
//! popular items (an ideal LFU cache, the upper bound an online LFU or LRU approaches), and what a probe
//! stream gives the most popular lists of an index.
//!
//!   model::zipf_head_share(1'000, 1'000'000, 1.05);   // share of lookups the 1,000 hottest rows take

#include <algorithm>
#include <cmath>

#include <trinity/error.hpp>

namespace trinity::model {

//! Σ_{k=a}^{b} k^-s: exact for the first 2,000 terms, Euler–Maclaurin past them (its error is below 1e-9 of the
//! sum: the next term of the expansion, s(s+1)(s+2)/720 · a^-(s+3), at a = 2,000).
inline double zipf_sum(double a, double b, double s) {
  if (b < a) return 0;
  if (s == 0) return b - a + 1;
  double sum = 0;
  const double exact_to = std::min(b, a + 2000);
  for (double k = a; k <= exact_to; ++k) sum += std::pow(k, -s);
  if (b <= exact_to) return sum;
  const double lo = exact_to + 1;
  const double integral = s == 1 ? std::log(b / lo) : (std::pow(b, 1 - s) - std::pow(lo, 1 - s)) / (1 - s);
  return sum + integral + (std::pow(lo, -s) + std::pow(b, -s)) / 2 +
         s / 12 * (std::pow(lo, -s - 1) - std::pow(b, -s - 1));
}

//! The share of draws that land on the `k` most popular of `n` items.
inline double zipf_head_share(double k, double n, double s) {
  trinity::detail::require(n >= 1 && s >= 0, "zipf", "needs at least one item and an exponent of 0 or more");
  k = std::clamp(std::floor(k), 0.0, n);
  return k <= 0 ? 0.0 : zipf_sum(1, k, s) / zipf_sum(1, n, s);
}

}  // namespace trinity::model
