#pragma once
//! \file
//! invalid_input: the one exception trinity throws for input that cannot work.
//! It names the field, so a command-line program can name the flag and a JSON
//! reader the path: "entry_size: -2 GB must be positive".

#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace trinity {

class invalid_input : public std::invalid_argument {
 public:
  invalid_input(std::string field, std::string problem)
      : std::invalid_argument(shown(field) + ": " + shown(problem)),
        field_(shown(std::move(field))),
        problem_(shown(std::move(problem))) {}

  //! The name of the offending field, as the API spells it (reuse_depth).
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  //! What is wrong and what would be right, without the field name.
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  // A NUL byte from the input (a trace cell echoed back) would end what() there, cutting the message short of
  // what is wrong and the fix: it is written as \x00, as detail::printable writes the other control bytes.
  static std::string shown(std::string text) {
    for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 4))
      text.replace(at, 1, "\\x00");
    return text;
  }

  std::string field_;
  std::string problem_;
};

namespace detail {
//! Throws invalid_input(field, problem) unless ok. constexpr so that checks run
//! in constant evaluation too, where a throw becomes a compile error.
constexpr void require(bool ok, std::string_view field, std::string_view problem) {
  if (!ok) throw invalid_input(std::string(field), std::string(problem));
}
//! The same with the problem built only when the check fails: for checks inside loops, where building a message
//! (std::to_string and concatenation) on every pass would cost more than the work checked.
template <class Problem>
requires std::is_invocable_r_v<std::string, Problem>
constexpr void require(bool ok, std::string_view field, Problem&& problem) {
  if (!ok) throw invalid_input(std::string(field), std::forward<Problem>(problem)());
}

//! std::isfinite, usable in constant evaluation (it is constexpr only from C++23).
constexpr bool is_finite(double v) noexcept {
  return v == v && v < std::numeric_limits<double>::infinity() && v > -std::numeric_limits<double>::infinity();
}
}  // namespace detail

}  // namespace trinity
