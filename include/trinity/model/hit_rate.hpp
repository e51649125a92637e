#pragma once
//! \file
//! The two hit-rate families of the paper (§5.1.2), each with its value, its
//! derivative and its inverse:
//!   exponential saturation  h(M) = 1 - exp(-β·M/s_e)   fast returns, then a plateau
//!   power law               h(M) = 1 - (1 + κ·M)^(-γ)  a long tail of rare hits

#include <concepts>
#include <string_view>

#include <trinity/detail/cmath.hpp>
#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

namespace detail {
constexpr void require_hit_rate(double h, bool allow_one) {
  trinity::detail::require(h >= 0.0 && (allow_one ? h <= 1.0 : h < 1.0), "hit_rate",
                           allow_one ? "must lie in [0, 1]" : "must lie in [0, 1): no finite cache reaches 1");
}
}  // namespace detail

struct exponential_saturation {
  static constexpr std::string_view name = "exponential-saturation";

  double beta;       //!< β: entries' worth of memory per e-fold of miss rate
  bytes entry_size;  //!< s_e

  [[nodiscard]] constexpr double operator()(bytes m) const {
    return 1.0 - trinity::detail::exp(-beta * (m / entry_size));
  }
  //! dh/dM = (β/s_e)·exp(-β·M/s_e).
  [[nodiscard]] constexpr per_byte derivative(bytes m) const {
    return (beta / entry_size) * trinity::detail::exp(-beta * (m / entry_size));
  }
  //! The capacity that reaches hit rate h: M = -ln(1-h)·s_e/β.
  [[nodiscard]] constexpr bytes capacity_for(double h) const {
    detail::require_hit_rate(h, false);
    return -trinity::detail::log(1.0 - h) / beta * entry_size;
  }
  //! The member of the family through one measured point (M, h).
  [[nodiscard]] static constexpr exponential_saturation through(bytes m, double h, bytes entry_size) {
    detail::require_hit_rate(h, false);
    trinity::detail::require(m > bytes{} && trinity::detail::is_finite(m.value()), "capacity",
                             "must be positive and finite");
    trinity::detail::require(entry_size > bytes{} && trinity::detail::is_finite(entry_size.value()), "entry_size",
                             "must be positive and finite");
    return {-trinity::detail::log(1.0 - h) / (m / entry_size), entry_size};
  }
};

struct power_law {
  static constexpr std::string_view name = "power-law";

  per_byte kappa;  //!< κ, per byte of cache
  double gamma;    //!< γ > 0

  [[nodiscard]] constexpr double operator()(bytes m) const {
    return 1.0 - trinity::detail::pow(1.0 + kappa * m, -gamma);
  }
  //! dh/dM = γ·κ·(1 + κ·M)^(-γ-1).
  [[nodiscard]] constexpr per_byte derivative(bytes m) const {
    return gamma * kappa * trinity::detail::pow(1.0 + kappa * m, -gamma - 1.0);
  }
  //! M = ((1-h)^(-1/γ) - 1)/κ.
  [[nodiscard]] constexpr bytes capacity_for(double h) const {
    detail::require_hit_rate(h, false);
    return (trinity::detail::pow(1.0 - h, -1.0 / gamma) - 1.0) / kappa;
  }
};

//! A hit-rate curve h(M) with derivative and inverse.
template <class H>
concept HitRateModel = requires(const H& h, bytes m, double rate) {
  { h(m) } -> std::convertible_to<double>;
  { h.derivative(m) } -> std::same_as<per_byte>;
  { h.capacity_for(rate) } -> std::same_as<bytes>;
  { H::name } -> std::convertible_to<std::string_view>;
};

}  // namespace trinity::model
