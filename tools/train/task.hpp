#pragma once
// The task trinity-train learns: regress the outputs of a fixed random
// "teacher" network (input -> 32 tanh -> output) from Gaussian inputs. Sample
// k of step t is a pure function of (seed, t, k), so any rank can make any
// sample and a run's data do not depend on how many ranks share it.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <trinity/detail/splitmix.hpp>

namespace trinity::train {

using trinity::detail::splitmix64;

//! A standard normal from a counter (Box-Muller on two hashed uniforms).
inline float normal(std::uint64_t key) noexcept {
  const std::uint64_t a = splitmix64(key), b = splitmix64(key ^ 0xD1B54A32D192ED03ull);
  const double u = (static_cast<double>(a >> 11) + 0.5) * 0x1p-53;
  const double v = static_cast<double>(b >> 11) * 0x1p-53;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v));
}

inline std::uint64_t key(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept {
  return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b) ^ (c * 0x9E3779B97F4A7C15ull);
}

class teacher_task {
 public:
  teacher_task(std::size_t inputs, std::size_t outputs, std::uint64_t seed)
      : in_(inputs), out_(outputs), seed_(seed), w1_(hidden * inputs), w2_(outputs * hidden) {
    for (std::size_t i = 0; i < w1_.size(); ++i)
      w1_[i] = normal(key(seed, 1, i, 0)) / std::sqrt(static_cast<float>(inputs));
    for (std::size_t i = 0; i < w2_.size(); ++i)
      w2_[i] = normal(key(seed, 2, i, 0)) / std::sqrt(static_cast<float>(hidden));
  }

  [[nodiscard]] std::size_t inputs() const noexcept { return in_; }
  [[nodiscard]] std::size_t outputs() const noexcept { return out_; }

  //! Writes sample k of step t: x (inputs) and its target y (outputs).
  void sample(std::uint64_t step, std::uint64_t k, std::span<float> x, std::span<float> y) const {
    for (std::size_t j = 0; j < in_; ++j) x[j] = normal(key(seed_, 3 + step, k, j));
    float h[hidden];
    for (std::size_t i = 0; i < hidden; ++i) {
      float z = 0;
      for (std::size_t j = 0; j < in_; ++j) z += w1_[i * in_ + j] * x[j];
      h[i] = std::tanh(z);
    }
    for (std::size_t o = 0; o < out_; ++o) {
      float z = 0;
      for (std::size_t i = 0; i < hidden; ++i) z += w2_[o * hidden + i] * h[i];
      y[o] = z;
    }
  }

 private:
  static constexpr std::size_t hidden = 32;
  std::size_t in_, out_;
  std::uint64_t seed_;
  std::vector<float> w1_, w2_;
};

}  // namespace trinity::train
