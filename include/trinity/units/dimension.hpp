#pragma once
//! \file
//! The dimension of a quantity as integer exponents of five base units:
//! byte, second, FLOP, joule and pixel. Everything trinity prices is a
//! product of these (bandwidth is byte·s⁻¹, power is J·s⁻¹, the paper's
//! bits per pixel is byte·pixel⁻¹).

#include <concepts>

namespace trinity::units {

template <int Bytes, int Seconds, int Flops, int Joules, int Pixels = 0>
struct dimension {
  static constexpr int bytes = Bytes;
  static constexpr int seconds = Seconds;
  static constexpr int flops = Flops;
  static constexpr int joules = Joules;
  static constexpr int pixels = Pixels;
};

namespace detail {
template <class T>
inline constexpr bool is_dimension = false;
template <int B, int S, int F, int J, int P>
inline constexpr bool is_dimension<dimension<B, S, F, J, P>> = true;
}  // namespace detail

//! A type is a Dimension when it is an instantiation of units::dimension.
template <class T>
concept Dimension = detail::is_dimension<T>;

template <Dimension A, Dimension B>
using dimension_product = dimension<A::bytes + B::bytes, A::seconds + B::seconds, A::flops + B::flops,
                                    A::joules + B::joules, A::pixels + B::pixels>;

template <Dimension A, Dimension B>
using dimension_quotient = dimension<A::bytes - B::bytes, A::seconds - B::seconds, A::flops - B::flops,
                                     A::joules - B::joules, A::pixels - B::pixels>;

using dimensionless = dimension<0, 0, 0, 0, 0>;

}  // namespace trinity::units
