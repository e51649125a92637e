#pragma once
// Shared pieces of the trinity program: the usage error every bad flag becomes (exit code 2), flag parsing
// that names the flag, plain tables, reading a file a flag names.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/detail/output_file.hpp>
#include <trinity/error.hpp>
#include <trinity/io/profile.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/parse.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace trinity::cli {

//! argv[0], as the user typed it: sibling programs (trinity-train) are named from it, so a printed command
//! reads as the reader would type it even when the build tree is reached through a symbolic link.
inline std::string& invoked_as() {
  static std::string path;
  return path;
}

// The flag checks, the refusal every bad flag becomes (exit 2) and the tables, shared with the workloads'
// hooks (workloads/request.hpp, workloads/report.hpp).
using workloads::bad_flag;
using workloads::count_flag;
using workloads::number_flag;
using workloads::quantity_flag;
using workloads::table;
using workloads::usage_error;

//! Refuses a flag given an empty value ('--parallelism ""'), which would otherwise read as the flag left out.
inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator([what](std::string& v) { return v.empty() ? "an empty value; give " + what : std::string(); },
                        "", "non-empty");
}

//! A number from `lo` to `hi`: CLI::Range alone lets NaN through, which compares false both ways.
inline CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& v) {
        double x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        return ec == std::errc{} && end == v.data() + v.size() && x >= lo && x <= hi
                   ? std::string()
                   : "expected a number from " + units::detail::format_number(lo) + " to " +
                         units::detail::format_number(hi);
      },
      "", "finite");
}

//! A JSON file read by one of the library's strict readers (`read` takes the parsed JSON); a failure names the
//! file and the JSON path. `presets` are the names the flag also takes, suggested when the file is missing.
template <class Read>
auto from_file(const std::string& path, std::string_view flag, std::span<const std::string_view> presets, Read read) {
  if (const auto problem = trinity::detail::input_file_problem(path)) {
    const bool missing = problem->starts_with("cannot be read");
    throw bad_flag(flag, path,
                   presets.empty() || !missing
                       ? *problem
                       : "is neither a preset nor a readable file" + trinity::detail::suggestion(path, presets));
  }
  try {
    return read(io::load(path));
  } catch (const invalid_input& e) {
    // io::load names the file as the field of a syntax error; the readers name the JSON path.
    throw usage_error(path, e);
  }
}

//! A profile written by `trinity calibrate --out` (io/profile.hpp); errors name the file and the JSON path.
io::profile read_profile_file(const std::string& path);
//! Its codecs.
inline std::vector<model::compressor_cost> read_profile(const std::string& path) {
  return read_profile_file(path).compressors;
}

//! A system given as a preset name or a JSON file (plan_command.cpp); errors name the path. A workload's
//! counterpart, workload_from, is in workload_from.hpp with the registry it reads through.
//! A system preset or file; a file's figures far from every preset of their kind (plan/plausibility.hpp) are
//! warned of on stderr, or refused where `strict`.
plan::system system_from(const std::string& arg, bool strict = false);

// What plan, simulate and verify share (workloads/request.hpp).
using workloads::gpus_go_with;
using workloads::gradient_codecs;
using workloads::named_layout;
using workloads::objective_of;
using workloads::options_of;
using workloads::plan_serving_with;
using workloads::plan_training_with;
using workloads::planning_flags;
using workloads::search_layouts;
using workloads::training_parallelism;
void add_planning_flags(CLI::App& cmd, planning_flags& f);
//! --parallelism LAYOUT|search and --gpus N, for a command that lays out or runs a layout (`what` it does).
void add_layout_flags(CLI::App& cmd, std::string& parallelism, std::size_t& gpus, const std::string& what);

void register_presets(CLI::App& app);
void register_model(CLI::App& app);
void register_compress(CLI::App& app);
void register_fabric(CLI::App& app);
void register_cache(CLI::App& app);
void register_plan(CLI::App& app);
void register_verify(CLI::App& app);
void register_validate(CLI::App& app);
void register_fit(CLI::App& app);

}  // namespace trinity::cli
