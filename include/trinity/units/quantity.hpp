#pragma once
//! \file
//! quantity<Dim>: a double that carries its dimension in its type, so the
//! compiler rejects sums of bytes and seconds and derives bytes / (bytes/s) = s.
//! The value is always held in the base unit (byte, second, FLOP, joule,
//! pixel); prefixes live only in literals, parsing and printing.
//!
//!   using namespace trinity::literals;
//!   trinity::seconds t = 100_GB / 400_Gbps;   // 2 s
//!
//! Example: examples/units_tour.cpp

#include <compare>
#include <concepts>
#include <type_traits>

#include <trinity/detail/always_false.hpp>
#include <trinity/units/dimension.hpp>

namespace trinity::units {

template <Dimension Dim>
class quantity {
 public:
  using dimension = Dim;
  using rep = double;

  constexpr quantity() noexcept = default;
  //! Explicit: a bare number has no unit; say which with a literal or a named type.
  constexpr explicit quantity(double value_in_base_unit) noexcept : value_(value_in_base_unit) {}

  //! The value in the base unit: bytes, seconds, FLOPs, joules.
  [[nodiscard]] constexpr double value() const noexcept { return value_; }

  constexpr quantity& operator+=(quantity other) noexcept {
    value_ += other.value_;
    return *this;
  }
  constexpr quantity& operator-=(quantity other) noexcept {
    value_ -= other.value_;
    return *this;
  }
  constexpr quantity& operator*=(double factor) noexcept {
    value_ *= factor;
    return *this;
  }
  constexpr quantity& operator/=(double divisor) noexcept {
    value_ /= divisor;
    return *this;
  }

  friend constexpr quantity operator+(quantity a, quantity b) noexcept { return quantity{a.value_ + b.value_}; }
  friend constexpr quantity operator-(quantity a, quantity b) noexcept { return quantity{a.value_ - b.value_}; }
  friend constexpr quantity operator-(quantity a) noexcept { return quantity{-a.value_}; }
  friend constexpr quantity operator*(quantity a, double f) noexcept { return quantity{a.value_ * f}; }
  friend constexpr quantity operator*(double f, quantity a) noexcept { return quantity{f * a.value_}; }
  friend constexpr quantity operator/(quantity a, double d) noexcept { return quantity{a.value_ / d}; }

  friend constexpr bool operator==(quantity, quantity) noexcept = default;
  friend constexpr auto operator<=>(quantity, quantity) noexcept = default;

 private:
  double value_ = 0.0;
};

namespace detail {
template <class T>
inline constexpr bool is_quantity = false;
template <class D>
inline constexpr bool is_quantity<quantity<D>> = true;

// A dimensionless result (bytes / bytes) is a plain ratio, not a wrapped one.
template <Dimension D>
constexpr auto make(double v) noexcept {
  if constexpr (std::is_same_v<D, dimensionless>) {
    return v;
  } else {
    return quantity<D>{v};
  }
}
}  // namespace detail

//! Any trinity quantity type.
template <class T>
concept Quantity = detail::is_quantity<std::remove_cvref_t<T>>;

//! Two quantity types that can be added, subtracted and compared.
template <class A, class B>
concept same_dimension = Quantity<A> && Quantity<B> && std::same_as < typename std::remove_cvref_t<A>::dimension,
typename std::remove_cvref_t<B>::dimension > ;

template <Dimension A, Dimension B>
constexpr auto operator*(quantity<A> a, quantity<B> b) noexcept {
  return detail::make<dimension_product<A, B>>(a.value() * b.value());
}

template <Dimension A, Dimension B>
constexpr auto operator/(quantity<A> a, quantity<B> b) noexcept {
  return detail::make<dimension_quotient<A, B>>(a.value() / b.value());
}

//! A number divided by a quantity gives the inverse dimension (1 / seconds = per second).
template <Dimension A>
constexpr auto operator/(double a, quantity<A> b) noexcept {
  return detail::make<dimension_quotient<dimensionless, A>>(a / b.value());
}

// The overloads below exist only to replace "no match for operator+" with a
// message that says what to do instead.
template <Dimension A, Dimension B>
requires(!std::same_as<A, B>) constexpr void operator+(quantity<A>, quantity<B>) {
  static_assert(trinity::detail::always_false<A, B>,
                "trinity::units: cannot add quantities of different dimensions (for example bytes + seconds). "
                "Fix: convert one side first; bytes / bytes_per_second gives seconds, "
                "seconds * bytes_per_second gives bytes.");
}

template <Dimension A, Dimension B>
requires(!std::same_as<A, B>) constexpr void operator-(quantity<A>, quantity<B>) {
  static_assert(trinity::detail::always_false<A, B>,
                "trinity::units: cannot subtract quantities of different dimensions (for example bytes - seconds). "
                "Fix: convert one side first; bytes / bytes_per_second gives seconds, "
                "seconds * bytes_per_second gives bytes.");
}

template <Dimension A>
constexpr void operator+(quantity<A>, double) {
  static_assert(trinity::detail::always_false<A>,
                "trinity::units: cannot add a bare number to a quantity: the number has no unit. "
                "Fix: give it one, e.g. 1_GB or trinity::bytes{1e9}.");
}

template <Dimension A>
constexpr void operator+(double, quantity<A>) {
  static_assert(trinity::detail::always_false<A>,
                "trinity::units: cannot add a bare number to a quantity: the number has no unit. "
                "Fix: give it one, e.g. 1_GB or trinity::bytes{1e9}.");
}

//! The larger and smaller of two quantities of one dimension (std::max needs one type).
template <Dimension D>
constexpr quantity<D> max(quantity<D> a, quantity<D> b) noexcept {
  return a < b ? b : a;
}
template <Dimension D>
constexpr quantity<D> min(quantity<D> a, quantity<D> b) noexcept {
  return b < a ? b : a;
}

}  // namespace trinity::units

namespace trinity {

// The named quantities every part of trinity speaks in.
using bytes = units::quantity<units::dimension<1, 0, 0, 0>>;
using seconds = units::quantity<units::dimension<0, 1, 0, 0>>;
using flops = units::quantity<units::dimension<0, 0, 1, 0>>;
using joules = units::quantity<units::dimension<0, 0, 0, 1>>;
using pixels = units::quantity<units::dimension<0, 0, 0, 0, 1>>;

using bytes_per_second = units::quantity<units::dimension<1, -1, 0, 0>>;
using flops_per_second = units::quantity<units::dimension<0, -1, 1, 0>>;
using watts = units::quantity<units::dimension<0, -1, 0, 1>>;
using joules_per_byte = units::quantity<units::dimension<-1, 0, 0, 1>>;
using joules_per_flop = units::quantity<units::dimension<0, 0, -1, 1>>;
using flops_per_byte = units::quantity<units::dimension<-1, 0, 1, 0>>;
using per_byte = units::quantity<units::dimension<-1, 0, 0, 0>>;
//! The paper's video bandwidth unit (§3.1.2); held as bytes per pixel, printed as bits.
using bits_per_pixel = units::quantity<units::dimension<1, 0, 0, 0, -1>>;

using units::Quantity;
using units::same_dimension;

}  // namespace trinity
