// trinity: the command-line face of the library. Subcommands register
// themselves; this file turns every failure into a message and an exit code:
// 0 done, 2 bad input (the flag, its value and what would be valid), 1 a bug.

#include "cli.hpp"
#include "../cli_values.hpp"

#include <trinity/detail/printable.hpp>
#include <trinity/version.hpp>

#include <exception>
#include <string>
#include <string_view>
#include <iostream>

namespace {

// Under --json a refusal is JSON too, on standard output, so a program reading it gets an answer it can parse:
// {"error": {"field", "value", "message", "fix"}}; the field is the flag or the input's path, the fix the
// message's "Fix: ..." where it gives one. The line on stderr stays, for a person.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--json") return true;
  return false;
}

nlohmann::json text_or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }
nlohmann::json fix_of(const std::string& problem) {
  const auto at = problem.find("Fix: ");
  return at == std::string::npos ? nlohmann::json(nullptr) : nlohmann::json(problem.substr(at + 5));
}

// A file's refusal names the file and each field refused in it, the first as the error's own field.
int refuse(bool json, const std::string& message, const std::string& field, const std::string& value,
           const std::string& problem, const trinity::workloads::usage_error* from_file = nullptr) {
  std::cerr << "trinity: " << trinity::detail::printable(message) << '\n';
  if (!json) return 2;
  nlohmann::json error{
      {"field", text_or_null(field)}, {"value", text_or_null(value)}, {"message", problem}, {"fix", fix_of(problem)}};
  if (from_file && !from_file->file().empty()) {
    error["file"] = from_file->file();
    const auto& all = from_file->problems();
    if (!all.empty()) {
      error["field"] = all.front().field;
      error["message"] = all.front().problem;
      error["fix"] = fix_of(all.front().problem);
      for (const auto& p : all) error["problems"].push_back({{"field", p.field}, {"message", p.problem}});
    }
  }
  std::cout << nlohmann::json{{"error", error}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n'
            << std::flush;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = wants_json(argc, argv);
  CLI::App app{"trinity: price and trade compute, bandwidth and memory for AI systems", "trinity"};
  app.set_version_flag("--version", std::string("trinity ") + trinity::version_string);
  app.require_subcommand(1);
  if (argc > 0) trinity::cli::invoked_as() = argv[0];
  trinity::cli::register_presets(app);
  trinity::cli::register_model(app);
  trinity::cli::register_compress(app);
  trinity::cli::register_fabric(app);
  trinity::cli::register_cache(app);
  trinity::cli::register_plan(app);
  trinity::cli::register_verify(app);
  trinity::cli::register_validate(app);
  trinity::cli::register_fit(app);
  trinity::cli::refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return refuse(json, std::string(e.what()) + "\n(run with --help for the flags and their ranges)", "", "", e.what());
  } catch (const trinity::cli::usage_error& e) {
    return refuse(json, e.what(), e.flag(), e.value(), e.flag().empty() ? std::string(e.what()) : e.rule(), &e);
  } catch (const trinity::invalid_input& e) {
    return refuse(json, e.what(), e.field(), "", e.problem());
  } catch (const std::exception& e) {
    std::cerr << "trinity: internal error: " << trinity::detail::printable(e.what()) << '\n';
    return 1;
  }
  // What was printed reached its destination: `trinity plan --json > /dev/full` is a failed write, not a plan.
  if (!(std::cout << std::flush)) {
    std::cerr << "trinity: the output could not be written (standard output is full or closed)\n";
    return 2;
  }
  return 0;
}
