#pragma once
//! \file
//! Strict JSON reading: every object is read against one table of the keys it
//! may hold, so a misspelt or unknown key is refused with its path and the
//! nearest valid key, never ignored:
//!
//!   tiers[1].capacty: unknown key; did you mean "capacity"?
//!
//! Values are read by path too, as the planner's types: quantities take units
//! ("80GB", "450GB/s") or numbers in base units, counts are whole numbers.
//! Every failure is a trinity::invalid_input whose field is the JSON path, so
//! a program can name the file and the path, and exit 2.
//!
//!   static constexpr io::key keys[] = {{"name", io::required}, {"capacity"}};
//!   const io::object o(j, "tiers[1]", keys, "a tier");
//!   o.get("capacity", t.capacity);   // only when present

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/detail/input_file.hpp>
#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/field_problems.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/parse.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::io {

using json = nlohmann::json;

//! Whether a key must be present.
enum class presence : bool { optional, required };
inline constexpr presence required = presence::required;

//! One key an object may hold.
struct key {
  std::string_view name;
  presence need = presence::optional;
};

//! Two key lists as one, at compile time: a reader's own keys, then a set several readers share.
template <std::size_t N, std::size_t M>
constexpr std::array<key, N + M> concat(const key (&own)[N], const key (&shared)[M]) {
  std::array<key, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = own[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = shared[i];
  return out;
}

//! "tiers[1]" + "capacity" -> "tiers[1].capacity"; at the top level, just the key.
inline std::string join(std::string_view path, std::string_view k) {
  return path.empty() ? std::string(k) : std::string(path) + "." + std::string(k);
}
inline std::string index(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

[[noreturn]] inline void fail(const std::string& path, const std::string& problem) {
  throw invalid_input(path.empty() ? "(top)" : path, problem);
}

//! The JSON type a value has, as a person would say it.
inline std::string kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "the string \"" + j.get<std::string>().substr(0, 40) + "\"";
    case json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case json::value_t::number_float:
      return "the number " + j.dump();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "the number " + j.dump();
    default:
      return "a binary value";
  }
}

//! A string: a name, a unit, a choice. A control character in it (ESC, which would start a terminal escape
//! sequence where the name is printed, BEL, NUL, a line break) is refused by position: no trinity file holds one.
inline std::string text(const json& j, const std::string& path) {
  if (!j.is_string()) fail(path, "expected a string, not " + kind_of(j));
  std::string out = j.get<std::string>();
  for (std::size_t i = 0; i < out.size(); ++i)
    if (const auto c = static_cast<unsigned char>(out[i]); c < 0x20 || c == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      fail(path, std::string("holds a control character (0x") + hex[c >> 4] + hex[c & 15] + ") at " +
                     std::to_string(i) + "; a name or a word is printable text. Fix: remove it");
    }
  return out;
}

inline double number(const json& j, const std::string& path) {
  if (!j.is_number()) fail(path, "expected a number, not " + kind_of(j));
  const double v = j.get<double>();
  if (!std::isfinite(v)) fail(path, "must be finite");
  return v;
}

//! A whole number from `least` to `most`, written as one (128) or as a number equal to one (1.28e2, 128.0); a
//! fraction, a negative number or one out of range is refused with the range. Where `least` is 1, 0 is refused
//! rather than read as "the default": a key left out is how a default is asked for.
inline std::size_t count(const json& j, const std::string& path, std::uint64_t most = std::uint64_t{1} << 53,
                         std::uint64_t least = 0) {
  const auto range = [&] {
    return "a whole number from " + std::to_string(least) + " to " + std::to_string(most) +
           (least > 0 ? " (leave the key out for its default)" : "");
  };
  std::uint64_t v = 0;
  if (j.is_number_unsigned()) {
    v = j.get<std::uint64_t>();
  } else if (j.is_number_float() && std::isfinite(j.get<double>()) && j.get<double>() >= 0 &&
             std::floor(j.get<double>()) == j.get<double>()) {
    const double d = j.get<double>();
    if (d > static_cast<double>(most)) fail(path, j.dump() + " is out of range: expected " + range());
    v = static_cast<std::uint64_t>(d);
  } else {
    fail(path, "expected " + range() + ", not " + kind_of(j));
  }
  if (v > most || v < least) fail(path, std::to_string(v) + " is out of range: expected " + range());
  return static_cast<std::size_t>(v);
}

inline bool boolean(const json& j, const std::string& path) {
  if (!j.is_boolean()) fail(path, "expected true or false, not " + kind_of(j));
  return j.get<bool>();
}

//! A quantity with a unit ("80GB") or a number in base units (bytes, seconds, B/s, FLOP/s, W, J/B).
template <class Q>
Q quantity(const json& j, const std::string& path) {
  if (j.is_number()) return Q{number(j, path)};
  if (!j.is_string()) fail(path, "expected a quantity such as \"80GB\" or a number in base units, not " + kind_of(j));
  try {
    return units::parse<Q>(j.get<std::string>(), path);
  } catch (const invalid_input& e) {
    fail(path, e.problem());
  }
}

//! One of a fixed set of words, with the nearest named when it is none of them.
inline std::string choice(const json& j, const std::string& path, std::span<const std::string_view> allowed) {
  const std::string v = text(j, path);
  for (const auto a : allowed)
    if (a == v) return v;
  fail(path, "\"" + v + "\" is not allowed" + trinity::detail::suggestion(v, allowed));
}

//! An array, element by element: f(element, its path).
template <class F>
void for_each(const json& j, const std::string& path, F f, std::size_t most = 1u << 20) {
  if (!j.is_array()) fail(path, "expected an array, not " + kind_of(j));
  if (j.size() > most) fail(path, std::to_string(j.size()) + " elements; at most " + std::to_string(most));
  for (std::size_t i = 0; i < j.size(); ++i) f(j[i], index(path, i));
}

//! A JSON object checked against its key table on construction: not an object, an unknown key or a
//! missing required key is refused there, by path.
class object {
 public:
  object(const json& j, std::string path, std::span<const key> keys, std::string_view what)
      : j_(j), path_(std::move(path)) {
    if (!j.is_object()) fail(path_, "expected " + std::string(what) + " (a JSON object), not " + kind_of(j));
    std::vector<std::string_view> names;
    names.reserve(keys.size());
    for (const auto& k : keys) names.push_back(k.name);
    // Every unknown and missing key at once: a file fixed one error at a time takes as many runs as it has errors.
    std::vector<field_problem> problems;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const auto n : names) known |= n == it.key();
      if (!known)
        problems.push_back({join(path_, it.key()), "unknown key" + trinity::detail::suggestion(it.key(), names)});
    }
    // A missing key an unknown one was suggested for is that key misspelt: one problem, said once.
    const auto suggested = [&](std::string_view name) {
      const std::string quoted = "\"" + std::string(name) + "\"";
      for (const auto& p : problems)
        if (p.problem.find(quoted) != std::string::npos) return true;
      return false;
    };
    for (const auto& k : keys)
      if (k.need == presence::required && !j.contains(k.name) && !suggested(k.name))
        problems.push_back({join(path_, k.name), "missing; " + std::string(what) + " needs it"});
    if (!problems.empty()) fail_together(problems);
  }

  [[nodiscard]] const json& value() const noexcept { return j_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string path(std::string_view k) const { return join(path_, k); }
  [[nodiscard]] bool has(std::string_view k) const { return j_.contains(k); }
  //! The value at a key the table requires, or one `has` found.
  [[nodiscard]] const json& at(std::string_view k) const {
    const auto it = j_.find(k);
    if (it == j_.end()) fail(path(k), "missing");
    return *it;
  }

  [[nodiscard]] std::string text(std::string_view k) const { return io::text(at(k), path(k)); }
  [[nodiscard]] double number(std::string_view k) const { return io::number(at(k), path(k)); }
  [[nodiscard]] std::size_t count(std::string_view k, std::uint64_t most = std::uint64_t{1} << 53,
                                  std::uint64_t least = 0) const {
    return io::count(at(k), path(k), most, least);
  }
  //! A count kept as a double (what it prices may pass 2^53: a corpus of 1e13 vectors): a whole number from
  //! `least` to `most`, written 1000 or 1e3; a fraction such as 1000.5 is refused.
  [[nodiscard]] double whole_number(std::string_view k, double least, double most) const {
    const double v = number(k);
    if (std::floor(v) != v) fail(path(k), "expected a whole number (a count), not " + kind_of(at(k)));
    if (v < least || v > most)
      fail(path(k), kind_of(at(k)) + " is out of range: expected a whole number from " +
                        units::detail::format_number(least) + " to " + units::detail::format_number(most));
    return v;
  }
  //! A share in (0, `most`]: a key whose 0 would mean "the default" is refused at 0 (leave it out instead).
  [[nodiscard]] double positive_number(std::string_view k, double most) const {
    const double v = number(k);
    if (!(v > 0 && v <= most))
      fail(path(k), kind_of(at(k)) + " is out of range: expected a number above 0 and at most " +
                        units::detail::format_number(most) + " (leave the key out for its default)");
    return v;
  }
  [[nodiscard]] bool boolean(std::string_view k) const { return io::boolean(at(k), path(k)); }
  template <class Q>
  [[nodiscard]] Q quantity(std::string_view k) const {
    return io::quantity<Q>(at(k), path(k));
  }

  //! Sets `out` from the key when it is present; leaves it (the default) otherwise.
  void get(std::string_view k, std::string& out) const {
    if (has(k)) out = text(k);
  }
  void get(std::string_view k, double& out) const {
    if (has(k)) out = number(k);
  }
  void get(std::string_view k, std::size_t& out) const {
    if (has(k)) out = count(k);
  }
  void get(std::string_view k, bool& out) const {
    if (has(k)) out = boolean(k);
  }
  template <class Dim>
  void get(std::string_view k, units::quantity<Dim>& out) const {
    if (has(k)) out = this->quantity<units::quantity<Dim>>(k);
  }
  //! As `get`, and when the key is absent records its default in `assumed`, by path: what the plan took
  //! without being told (plan/assumed.hpp).
  template <class T>
  void get(std::string_view k, T& out, plan::assumptions& assumed) const {
    if (has(k))
      get(k, out);
    else
      plan::assume(assumed, path(k), out);
  }

 private:
  const json& j_;
  std::string path_;
};

//! Parses JSON text. A syntax error is refused with its position, and a key given twice in one object
//! by its path: one of the two values would otherwise be dropped without a word.
inline json parse(std::string_view text, const std::string& what) {
  // A NUL byte ends the text for some readers and not for others: whatever follows it would be read by one and
  // dropped by another, so it is refused where it stands.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw invalid_input(what, "holds a NUL byte at offset " + std::to_string(nul) +
                                  "; JSON is text. Fix: remove it (is this the right file?)");
  constexpr std::size_t max_depth = 64;
  // The keys seen in each open object (an open array gets an entry too, holding no keys), innermost last,
  // with the path.
  struct open {
    bool is_object;
    std::string path;
    std::set<std::string, std::less<>> keys;
    std::size_t elements = 0;
  };
  std::vector<open> stack;
  std::string pending;  // the key whose value comes next
  const auto child_path = [&]() -> std::string {
    if (stack.empty()) return {};
    auto& top = stack.back();
    return top.is_object ? join(top.path, pending) : index(top.path, top.elements);
  };
  const auto value_done = [&] {
    if (!stack.empty() && !stack.back().is_object) ++stack.back().elements;
  };
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        // No trinity file nests this deep; a hostile one would otherwise cost its depth squared in paths.
        if (stack.size() >= max_depth) throw invalid_input(child_path(), "nested more than 64 levels deep");
        stack.push_back({event == json::parse_event_t::object_start, child_path(), {}, 0});
        break;
      case json::parse_event_t::key: {
        pending = parsed.get<std::string>();
        if (!stack.back().keys.insert(pending).second)
          throw invalid_input(join(stack.back().path, pending), "given twice in one object; keep one");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack.pop_back();
        value_done();
        break;
      case json::parse_event_t::value:
        value_done();
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::exception& e) {
    // A syntax error, or a number no double holds (out_of_range 406): the text is not JSON trinity can read.
    throw invalid_input(what, std::string("is not JSON: ") + e.what());
  }
}

//! A JSON file, parsed; an unreadable file is refused by name.
inline json load(const std::string& file) {
  return parse(trinity::detail::read_input_file(file, trinity::detail::max_json_bytes), file);
}

}  // namespace trinity::io
