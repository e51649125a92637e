#pragma once
//! \file
//! Between trinity::seconds and std::chrono, for code that measures with a
//! clock and prices with a model:
//!
//!   auto t0 = std::chrono::steady_clock::now();
//!   ...
//!   trinity::seconds measured = trinity::from_chrono(std::chrono::steady_clock::now() - t0);

#include <chrono>

#include <trinity/units/quantity.hpp>

namespace trinity::units {

template <class Rep, class Period>
constexpr seconds from_chrono(std::chrono::duration<Rep, Period> d) noexcept {
  return seconds{std::chrono::duration<double>(d).count()};
}

constexpr std::chrono::duration<double> to_chrono(seconds s) noexcept {
  return std::chrono::duration<double>(s.value());
}

}  // namespace trinity::units

namespace trinity {
using units::from_chrono;
using units::to_chrono;
}  // namespace trinity
