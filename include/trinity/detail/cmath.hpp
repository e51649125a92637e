#pragma once
//! \file
//! exp, log, pow and expm1/log1p usable in constant evaluation, so the models
//! are constexpr on every compiler (GCC's std::exp is constexpr only as an
//! extension). At run time they forward to <cmath>.

#include <cmath>
#include <limits>
#include <type_traits>

namespace trinity::detail {

namespace ce {
inline constexpr double ln2 = 0.693147180559945309417232121458176568;

constexpr double exp(double x) {
  if (x != x) return x;
  if (x > 709.8) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; Taylor series of e^r to double precision.
  const double kd = x / ln2;
  const long long k = static_cast<long long>(kd < 0 ? kd - 0.5 : kd + 0.5);
  // Cody-Waite: ln2 split in two so k·ln2 is exact in the high part (fdlibm's constants).
  const double r =
      (x - static_cast<double>(k) * 6.93147180369123816490e-01) - static_cast<double>(k) * 1.90821492927058770002e-10;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 30; ++i) {
    term *= r / i;
    sum += term;
  }
  double scale = 1.0;
  if (k >= 0)
    for (long long i = 0; i < k; ++i) scale *= 2.0;
  else
    for (long long i = 0; i < -k; ++i) scale *= 0.5;
  return sum * scale;
}

constexpr double log(double x) {
  if (x != x || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m by the atanh series.
  int e = 0;
  while (x >= 1.4142135623730951) {
    x *= 0.5;
    ++e;
  }
  while (x < 0.7071067811865476) {
    x *= 2.0;
    --e;
  }
  const double t = (x - 1) / (x + 1);
  const double t2 = t * t;
  double term = t, sum = 0.0;
  for (int i = 1; i < 60; i += 2) {
    sum += term / i;
    term *= t2;
  }
  return 2 * sum + e * ln2;
}
}  // namespace ce

constexpr double exp(double x) {
  if (std::is_constant_evaluated()) return ce::exp(x);
  return std::exp(x);
}
constexpr double log(double x) {
  if (std::is_constant_evaluated()) return ce::log(x);
  return std::log(x);
}
constexpr double pow(double base, double exponent) {
  if (std::is_constant_evaluated()) return ce::exp(exponent * ce::log(base));
  return std::pow(base, exponent);
}
constexpr double floor(double x) {
  if (std::is_constant_evaluated()) {
    const auto i = static_cast<long long>(x);
    return static_cast<double>(x < static_cast<double>(i) ? i - 1 : i);
  }
  return std::floor(x);
}

}  // namespace trinity::detail
