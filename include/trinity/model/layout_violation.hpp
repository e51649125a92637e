#pragma once
//! \file
//! layout_violation: the rule a parallel layout breaks for a job, typed: the field that breaks it, the value given
//! there, what is wrong and what to give instead. The layout checks (model/training/layout_checks.hpp) return one;
//! the step model throws it as invalid_input on its field, the planners skip the layout, and the programs print its
//! message, so no caller reads a field back out of the text.

#include <optional>
#include <string>

#include <trinity/error.hpp>

namespace trinity::model {

struct layout_violation {
  std::string field;  //!< as the layout or the job spells it: "tp", "global_batch", "recompute_modules"
  std::string value;  //!< the value given there, as the layout writes it ("3", "deepep"); empty where none is
  std::string what;   //!< what is wrong, as a sentence
  std::string fix;    //!< what to give instead; empty where the sentence says it

  //! "what; fix": what invalid_input says after the field.
  [[nodiscard]] std::string problem() const { return fix.empty() ? what : what + "; " + fix; }
  //! "field: what; fix", as the planners and `trinity verify` print it.
  [[nodiscard]] std::string message() const { return field + ": " + problem(); }
  //! The refusal a caller throws: invalid_input on the field.
  [[nodiscard]] invalid_input error() const { return invalid_input(field, problem()); }
  friend bool operator==(const layout_violation&, const layout_violation&) = default;
};

//! The first rule broken, or none.
using layout_verdict = std::optional<layout_violation>;

//! The message of a verdict, or empty where the layout breaks no rule.
[[nodiscard]] inline std::string message_of(const layout_verdict& v) { return v ? v->message() : std::string(); }

}  // namespace trinity::model
