#pragma once
// What every trinity program asks of the values on its command line, beside each flag's own check: a value given
// empty (`--plot ""`, `--save-checkpoint ""`) is refused, where it would read as the flag left out and be ignored.

#include <CLI/CLI.hpp>

#include <string>

namespace trinity::cli {

//! Refuses an empty value for every option of `app` and its subcommands that takes one.
inline void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_items_expected_max() > 0)
      option->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("an empty value; give one, or leave the flag out") : "";
          },
          "", "non-empty"));
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*sub);
}

}  // namespace trinity::cli
