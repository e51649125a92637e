#pragma once
//! \file
//! What a plan assumed: the input fields it took a default for because the
//! input did not say. A default silently changes a prediction (a gated MLP has
//! three matrices where GPT's has two, and a step 23% slower), so every plan
//! prints the list beside its choice, in the text and under "assumed" in the
//! JSON, and a reader of the plan can see what to state if the default is
//! wrong for them.
//!
//!   plan::assumptions a;
//!   plan::assume(a, "gated_mlp", true);        // field, the value taken
//!   plan::describe(a);                          // "gated_mlp true"

#include <cstddef>
#include <initializer_list>
#include <iomanip>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <trinity/units/quantity.hpp>

namespace trinity::plan {

//! One defaulted field: its name as the input spells it, and the value taken, as JSON text.
struct assumption {
  std::string field;
  std::string value;

  friend bool operator==(const assumption&, const assumption&) = default;
};

using assumptions = std::vector<assumption>;

namespace detail {
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}
inline std::string json_number(double v) {
  std::ostringstream o;
  o << std::setprecision(15) << v;
  return o.str();
}
}  // namespace detail

//! The value as JSON text: a number, true/false or a string; a quantity as its number in base units.
template <class T>
std::string json_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_arithmetic_v<T>)
    return detail::json_number(static_cast<double>(v));
  else if constexpr (std::is_convertible_v<const T&, std::string_view>)
    return detail::json_string(v);
  else
    return detail::json_number(v.value());  // a units::quantity
}

//! Records that `field` took `value` by default. A field is listed once: the first record stands.
template <class T>
void assume(assumptions& a, std::string field, const T& value) {
  for (const auto& x : a)
    if (x.field == field) return;
  a.push_back({std::move(field), json_text(value)});
}

//! "gated_mlp true, flash_attention true": the plan's one line of assumptions; "none" when it made none.
inline std::string describe(const assumptions& a) {
  if (a.empty()) return "none";
  std::string out;
  for (const auto& x : a) out += (out.empty() ? "" : ", ") + x.field + " " + x.value;
  return out;
}

//! Those of `a` a path read: the fields `used` names (a plan lists only what it took, not every default the
//! reader filled in for a path it did not take).
inline assumptions only(const assumptions& a, std::initializer_list<std::string_view> used) {
  assumptions out;
  for (const auto& x : a)
    for (const auto f : used)
      if (x.field == f) out.push_back(x);
  return out;
}

//! Those of `a` but the fields `unused` names.
inline assumptions without(const assumptions& a, std::initializer_list<std::string_view> unused) {
  assumptions out;
  for (const auto& x : a) {
    bool drop = false;
    for (const auto f : unused) drop |= x.field == f;
    if (!drop) out.push_back(x);
  }
  return out;
}

//! Whether `field` was defaulted.
inline bool assumed(const assumptions& a, std::string_view field) {
  for (const auto& x : a)
    if (x.field == field) return true;
  return false;
}

}  // namespace trinity::plan
