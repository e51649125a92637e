// trinity: the command-line face of the library. Subcommands register
// themselves; this file turns every failure into a message and an exit code:
// 0 done, 2 bad input (the flag, its value and what would be valid), 1 a bug.

#include "cli.hpp"
#include "../cli_values.hpp"

#include <trinity/detail/printable.hpp>
#include <trinity/version.hpp>

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
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
    std::cerr << "trinity: " << trinity::detail::printable(e.what())
              << "\n(run with --help for the flags and their ranges)\n";
    return 2;
  } catch (const trinity::cli::usage_error& e) {
    std::cerr << "trinity: " << trinity::detail::printable(e.what()) << '\n';
    return 2;
  } catch (const trinity::invalid_input& e) {
    std::cerr << "trinity: " << trinity::detail::printable(e.what()) << '\n';
    return 2;
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
