#pragma once
//! \file
//! Every wrong value of a file in one message. A reader reads its independent fields through a
//! `field_problems`, which records a field's refusal and goes on to the next; `raise()` refuses them together,
//! the first leading, as io::object refuses every unknown and missing key at once. A file fixed one error at a
//! time takes as many runs as it has errors.
//!
//!   trinity::field_problems each;
//!   each([&] { w.prompt_tokens = o.number("prompt_tokens"); });
//!   each([&] { o.get("error_budget", w.error_budget, w.assumed); });
//!   each.raise();  // before a check that reads two fields together: it would judge a field's default
//!
//! A field whose read was refused keeps its default until `raise()`, which is why nothing may use the
//! fields before it: a `field_problems` left with problems raises them when it goes out of scope.

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>

namespace trinity {

struct field_problem {
  std::string field, problem;
};

//! Several fields refused at once: what() reads "first: problem (and field: problem; ...)", and the list
//! stays whole for a caller that renames the fields or gathers them with others.
class invalid_fields : public invalid_input {
 public:
  explicit invalid_fields(std::vector<field_problem> problems)
      : invalid_input(problems.at(0).field, problems.at(0).problem + also(problems)), problems_(std::move(problems)) {}
  [[nodiscard]] const std::vector<field_problem>& problems() const noexcept { return problems_; }

 private:
  static std::string also(const std::vector<field_problem>& problems) {
    std::string out;
    for (std::size_t i = 1; i < problems.size(); ++i)
      out += (i == 1 ? " (and " : "; ") + problems[i].field + ": " + problems[i].problem;
    return out.empty() ? out : out + ")";
  }
  std::vector<field_problem> problems_;
};

//! Refuses every problem in one trinity::invalid_fields, the first leading.
[[noreturn]] inline void fail_together(std::vector<field_problem> problems) {
  throw invalid_fields(std::move(problems));
}

//! The fields a refusal names: each of an invalid_fields, else its one.
inline std::vector<field_problem> problems_of(const invalid_input& e) {
  if (const auto* several = dynamic_cast<const invalid_fields*>(&e)) return several->problems();
  return {{e.field(), e.problem()}};
}

class field_problems {
 public:
  field_problems() = default;
  field_problems(const field_problems&) = delete;
  field_problems& operator=(const field_problems&) = delete;
  // Problems never raised would leave defaults where the file said otherwise: raise them here, unless another
  // exception is already on its way out (it says what went wrong first).
  ~field_problems() noexcept(false) {
    if (!problems_.empty() && std::uncaught_exceptions() == unwinding_) raise();
  }

  //! Runs one field's read; a refusal is recorded and the reading goes on.
  template <class Read>
  void operator()(Read&& read) {
    try {
      std::forward<Read>(read)();
    } catch (const invalid_input& e) {
      for (auto& p : problems_of(e)) problems_.push_back(std::move(p));
    }
  }

  [[nodiscard]] bool empty() const noexcept { return problems_.empty(); }

  //! Refuses every recorded problem at once; returns when there is none.
  void raise() {
    if (problems_.empty()) return;
    fail_together(std::exchange(problems_, {}));
  }

 private:
  std::vector<field_problem> problems_;
  int unwinding_ = std::uncaught_exceptions();
};

}  // namespace trinity
