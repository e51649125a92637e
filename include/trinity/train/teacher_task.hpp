#pragma once
//! \file
//! teacher_task: what the reference trainer learns. Regress the outputs of a fixed random "teacher" network
//! (inputs → 32 tanh → outputs) from Gaussian inputs. Sample k of step t is a pure function of (seed, t, k), so any
//! rank makes any sample and a run's data do not depend on how many ranks share it.
//!
//!   train::teacher_task task(16, 4, seed);
//!   task.sample(step, k, x, y);   // x: 16 inputs, y: their 4 targets

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/train/seeded_draws.hpp>

namespace trinity::train {

class teacher_task {
 public:
  teacher_task(std::size_t inputs, std::size_t outputs, std::uint64_t seed)
      : in_(inputs), out_(outputs), seed_(seed), w1_(hidden * inputs), w2_(outputs * hidden) {
    trinity::detail::require(inputs >= 1 && outputs >= 1, "inputs",
                             "a task maps at least one input to at least one output");
    for (std::size_t i = 0; i < w1_.size(); ++i)
      w1_[i] = detail::normal(detail::key(seed, 1, i, 0)) / std::sqrt(static_cast<float>(inputs));
    for (std::size_t i = 0; i < w2_.size(); ++i)
      w2_[i] = detail::normal(detail::key(seed, 2, i, 0)) / std::sqrt(static_cast<float>(hidden));
  }

  [[nodiscard]] std::size_t inputs() const noexcept { return in_; }
  [[nodiscard]] std::size_t outputs() const noexcept { return out_; }

  //! Writes sample k of step t: x (inputs) and its target y (outputs).
  void sample(std::uint64_t step, std::uint64_t k, std::span<float> x, std::span<float> y) const {
    trinity::detail::require(x.size() >= in_ && y.size() >= out_, "x", [&] {
      return "holds " + std::to_string(x.size()) + " inputs and y " + std::to_string(y.size()) +
             " targets; a sample is " + std::to_string(in_) + " and " + std::to_string(out_);
    });
    for (std::size_t j = 0; j < in_; ++j) x[j] = detail::normal(detail::key(seed_, 3 + step, k, j));
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
