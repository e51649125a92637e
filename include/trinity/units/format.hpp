#pragma once
//! \file
//! Printing quantities with the prefix that keeps the number readable:
//! to_string(2e11_B) == "200 GB", to_string(1.5e-7_s) == "150 ns".
//! Sizes print in SI prefixes; to_string_iec prints KiB/MiB/GiB.
//! Numbers carry four significant digits.

#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>

#include <trinity/units/quantity.hpp>

namespace trinity::units {

namespace detail {

inline std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

struct prefix {
  double factor;
  std::string_view name;
};

// SI prefixes from pico to exa; the unit decides how far down it may go.
inline constexpr std::array<prefix, 13> si_prefixes{{{1e-12, "p"},
                                                     {1e-9, "n"},
                                                     {1e-6, "u"},
                                                     {1e-3, "m"},
                                                     {1.0, ""},
                                                     {1e3, "k"},
                                                     {1e6, "M"},
                                                     {1e9, "G"},
                                                     {1e12, "T"},
                                                     {1e15, "P"},
                                                     {1e18, "E"},
                                                     {1e21, "Z"},
                                                     {1e24, "Y"}}};

// Picks the largest prefix not above |v|, but never below `smallest` (bytes
// have no millibytes): 1.5e-7 s -> "150 ns", 2e11 B -> "200 GB".
inline std::string with_si_prefix(double v, std::string_view unit, double smallest = 1e-12) {
  if (v == 0.0 || !std::isfinite(v)) return format_number(v) + " " + std::string(unit);
  const double mag = std::fabs(v);
  const prefix* chosen = nullptr;
  // A value that four significant digits would round up to the next prefix
  // takes that prefix: 999.99995 GB prints as "1 TB", not "1e+03 GB".
  for (const auto& p : si_prefixes) {
    if (p.factor < smallest) continue;
    if (chosen == nullptr || mag >= p.factor * 0.99995) chosen = &p;
  }
  return format_number(v / chosen->factor) + " " + std::string(chosen->name) + std::string(unit);
}

inline std::string dimension_suffix(int exp, std::string_view unit) {
  if (exp == 0) return {};
  std::string s(unit);
  if (exp != 1) s += "^" + std::to_string(exp);
  return s;
}

}  // namespace detail

//! Readable text with a unit and an SI prefix.
template <Dimension D>
std::string to_string(quantity<D> q) {
  using namespace std::string_view_literals;
  const double v = q.value();
  if constexpr (std::is_same_v<D, dimension<1, 0, 0, 0>>)
    return detail::with_si_prefix(v, "B", 1.0);
  else if constexpr (std::is_same_v<D, dimension<0, 1, 0, 0>>)
    return detail::with_si_prefix(v, "s");
  else if constexpr (std::is_same_v<D, dimension<0, 0, 1, 0>>)
    return detail::with_si_prefix(v, "FLOP", 1.0);
  else if constexpr (std::is_same_v<D, dimension<0, 0, 0, 1>>)
    return detail::with_si_prefix(v, "J");
  else if constexpr (std::is_same_v<D, dimension<1, -1, 0, 0>>)
    return detail::with_si_prefix(v, "B/s", 1.0);
  else if constexpr (std::is_same_v<D, dimension<0, -1, 1, 0>>)
    return detail::with_si_prefix(v, "FLOP/s", 1.0);
  else if constexpr (std::is_same_v<D, dimension<0, -1, 0, 1>>)
    return detail::with_si_prefix(v, "W");
  else if constexpr (std::is_same_v<D, dimension<-1, 0, 0, 1>>)
    return detail::with_si_prefix(v, "J/B");
  else if constexpr (std::is_same_v<D, dimension<-1, 0, 1, 0>>)
    return detail::with_si_prefix(v, "FLOP/B", 1.0);
  else if constexpr (std::is_same_v<D, dimension<1, 0, 0, 0, -1>>)
    return detail::format_number(v * 8) + " bpp";
  else if constexpr (std::is_same_v<D, dimension<0, 0, 0, 0, 1>>)
    return detail::format_number(v) + " px";
  else {
    // Anything else prints in base units with its exponents: "3 B s^-2".
    std::string unit;
    for (const auto& part : {detail::dimension_suffix(D::bytes, "B"), detail::dimension_suffix(D::seconds, "s"),
                             detail::dimension_suffix(D::flops, "FLOP"), detail::dimension_suffix(D::joules, "J"),
                             detail::dimension_suffix(D::pixels, "px")}) {
      if (part.empty()) continue;
      if (!unit.empty()) unit += " ";
      unit += part;
    }
    return detail::format_number(v) + " " + unit;
  }
}

//! Sizes with IEC binary prefixes: to_string_iec(1_GiB) == "1 GiB".
inline std::string to_string_iec(quantity<dimension<1, 0, 0, 0>> q) {
  constexpr std::array<std::string_view, 7> names{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = q.value();
  std::size_t i = 0;
  while (std::fabs(v) >= 1024.0 && i + 1 < names.size()) {
    v /= 1024.0;
    ++i;
  }
  return detail::format_number(v) + " " + std::string(names[i]);
}

template <Dimension D>
std::ostream& operator<<(std::ostream& os, quantity<D> q) {
  return os << to_string(q);
}

}  // namespace trinity::units

namespace trinity {
using units::to_string;
using units::to_string_iec;
}  // namespace trinity
