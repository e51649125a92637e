#pragma once
//! \file
//! Reading quantities from text ("2GB", "10 GiB", "400Gbps", "64GB/s",
//! "150ns", "2.5PFLOPs", "5pJ/bit"), for command lines and JSON files.
//! A missing or unknown unit is an error that lists the units accepted:
//!
//!   parse<bytes>("2GX", "entry_size")
//!   -> invalid_input "entry_size: unknown unit 'GX' in '2GX'; use one of B, kB, MB, ..."

#include <charconv>
#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::units {

struct unit_name {
  std::string_view suffix;
  double factor;  // base units per one of this unit
};

//! The units each quantity accepts in text. `bare` says whether a number with
//! no unit is meaningful (a FLOP count is; a size or a time is not).
template <class Q>
struct unit_table;

#define TRINITY_DETAIL_UNITS(type, allow_bare, ...)     \
  template <>                                           \
  struct unit_table<type> {                             \
    static constexpr bool bare = allow_bare;            \
    static constexpr unit_name units[] = {__VA_ARGS__}; \
  };

TRINITY_DETAIL_UNITS(bytes, false, {"B", 1}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
                     {"PB", 1e15}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
                     {"PiB", 1125899906842624.0})
TRINITY_DETAIL_UNITS(seconds, false, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}, {"min", 60},
                     {"h", 3600})
TRINITY_DETAIL_UNITS(bytes_per_second, false, {"B/s", 1}, {"Bps", 1}, {"kB/s", 1e3}, {"MB/s", 1e6}, {"MBps", 1e6},
                     {"GB/s", 1e9}, {"GBps", 1e9}, {"TB/s", 1e12}, {"TBps", 1e12}, {"bps", 0.125}, {"kbps", 125},
                     {"Mbps", 1.25e5}, {"Gbps", 1.25e8}, {"Tbps", 1.25e11}, {"GiB/s", 1073741824.0})
TRINITY_DETAIL_UNITS(flops, true, {"FLOP", 1}, {"FLOPs", 1}, {"kFLOP", 1e3}, {"MFLOP", 1e6}, {"GFLOP", 1e9},
                     {"TFLOP", 1e12}, {"PFLOP", 1e15}, {"EFLOP", 1e18})
TRINITY_DETAIL_UNITS(flops_per_second, false, {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"GFLOPs", 1e9}, {"TFLOP/s", 1e12},
                     {"TFLOPs", 1e12}, {"TFLOPS", 1e12}, {"PFLOP/s", 1e15}, {"PFLOPs", 1e15}, {"PFLOPS", 1e15})
TRINITY_DETAIL_UNITS(joules, false, {"J", 1}, {"pJ", 1e-12}, {"nJ", 1e-9}, {"uJ", 1e-6}, {"mJ", 1e-3}, {"kJ", 1e3},
                     {"MJ", 1e6}, {"kWh", 3.6e6})
TRINITY_DETAIL_UNITS(watts, false, {"W", 1}, {"mW", 1e-3}, {"kW", 1e3}, {"MW", 1e6})
TRINITY_DETAIL_UNITS(joules_per_byte, false, {"J/B", 1}, {"pJ/B", 1e-12}, {"pJ/bit", 8e-12}, {"nJ/B", 1e-9},
                     {"uJ/B", 1e-6})
TRINITY_DETAIL_UNITS(bits_per_pixel, true, {"bpp", 0.125})

#undef TRINITY_DETAIL_UNITS

namespace detail {

inline std::string accepted_units(std::span<const unit_name> units) {
  std::string s;
  for (const auto& u : units) {
    if (!s.empty()) s += ", ";
    s += u.suffix;
  }
  return s;
}
}  // namespace detail

//! Parses "<number>[ ]<unit>" into Q; `field` names the input in any error.
template <class Q>
requires requires { unit_table<Q>::units; }
Q parse(std::string_view text, std::string_view field) {
  using table = unit_table<Q>;
  const std::string shown(text);
  std::size_t start = 0;
  while (start < text.size() && text[start] == ' ') ++start;
  text.remove_prefix(start);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc{} || !std::isfinite(number)) {
    throw invalid_input(std::string(field), "'" + shown + "' is not a number with a unit (e.g. " + std::string("10") +
                                                std::string(table::units[0].suffix) + ")");
  }
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  while (!unit.empty() && unit.back() == ' ') unit.remove_suffix(1);
  if (unit.empty()) {
    // A bare number, where the table allows one, is in the table's first unit.
    if (table::bare) {
      const double value = number * table::units[0].factor;
      if (!std::isfinite(value)) throw invalid_input(std::string(field), "'" + shown + "' is too large");
      return Q{value};
    }
    throw invalid_input(std::string(field),
                        "'" + shown + "' has no unit; use one of " + detail::accepted_units(table::units));
  }
  for (const auto& u : table::units) {
    if (u.suffix != unit) continue;
    const double value = number * u.factor;
    // A finite number can still overflow once scaled by its unit (1e300PB).
    if (!std::isfinite(value)) throw invalid_input(std::string(field), "'" + shown + "' is too large");
    return Q{value};
  }
  throw invalid_input(std::string(field), "unknown unit '" + std::string(unit) + "' in '" + shown + "'; use one of " +
                                              detail::accepted_units(table::units));
}

}  // namespace trinity::units

namespace trinity {
using units::parse;
}  // namespace trinity
