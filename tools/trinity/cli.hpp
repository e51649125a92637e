#pragma once
// Shared pieces of the trinity program: the usage error every bad flag
// becomes (exit code 2), flag parsing that names the flag, and plain tables.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/error.hpp>
#include <trinity/io/profile.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/units/parse.hpp>

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

//! A flag whose value cannot work: "--reuse-depth 60: must not exceed --steps (50)".
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline usage_error bad_flag(std::string_view flag, std::string_view value, std::string_view rule) {
  return usage_error(std::string(flag) + " " + (value.empty() ? std::string("\"\"") : std::string(value)) + ": " +
                     std::string(rule));
}

//! A quantity with a unit, e.g. --entry-size 2GB.
template <class Q>
Q quantity_flag(const std::string& text, std::string_view flag) {
  try {
    return units::parse<Q>(text, flag);
  } catch (const invalid_input& e) {
    throw bad_flag(flag, text, e.problem());
  }
}

//! A plain number in [lo, hi].
inline double number_flag(const std::string& text, std::string_view flag, double lo, double hi,
                          std::string_view range_text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    throw bad_flag(flag, text, "not a number; expected " + std::string(range_text));
  if (v < lo || v > hi) throw bad_flag(flag, text, "out of range; expected " + std::string(range_text));
  return v;
}

//! A whole number in [lo, hi].
inline std::size_t count_flag(const std::string& text, std::string_view flag, std::size_t lo, std::size_t hi) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (ec != std::errc{} || end != text.data() + text.size()) throw bad_flag(flag, text, "not " + range);
  if (v < lo || v > hi) throw bad_flag(flag, text, "out of range; expected " + range);
  return v;
}

//! Left-aligned columns for terminal output.
class table {
 public:
  explicit table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os) const {
    std::vector<std::size_t> width;
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const auto& r = rows_[k];
      for (std::size_t i = 0; i < r.size(); ++i) {
        os << r[i];
        if (i + 1 < r.size()) os << std::string(width[i] - r[i].size() + 2, ' ');
      }
      os << '\n';
      if (k == 0) {
        std::size_t total = 0;
        for (std::size_t i = 0; i < width.size(); ++i) total += width[i] + (i + 1 < width.size() ? 2 : 0);
        os << std::string(total, '-') << '\n';
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

//! Refuses a flag given an empty value ('--parallelism ""'), which would otherwise read as the flag left out.
inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator([what](std::string& v) { return v.empty() ? "an empty value; give " + what : std::string(); },
                        "", "non-empty");
}

//! A JSON file read by one of the library's strict readers (`read` takes the parsed JSON); a failure names the
//! file and the JSON path. `presets` are the names the flag also takes, suggested when the file is missing.
template <class Read>
auto from_file(const std::string& path, std::string_view flag, std::span<const std::string_view> presets, Read read) {
  if (const auto problem = trinity::detail::input_file_problem(path)) {
    const bool missing = problem->starts_with("cannot be read");
    throw bad_flag(flag, path, presets.empty() || !missing ? *problem
                                                           : "is neither a preset nor a readable file" +
                                                                 trinity::detail::suggestion(path, presets));
  }
  try {
    return read(io::load(path));
  } catch (const invalid_input& e) {
    // io::load names the file as the field of a syntax error; the readers name the JSON path.
    if (e.field() == path) throw usage_error(path + ": " + e.problem());
    throw usage_error(path + ": " + e.what());
  }
}

//! A profile written by `trinity calibrate --out` (io/profile.hpp); errors name the file and the JSON path.
io::profile read_profile_file(const std::string& path);
//! Its codecs.
inline std::vector<model::compressor_cost> read_profile(const std::string& path) {
  return read_profile_file(path).compressors;
}

//! A trace replayed through the exact cache (flat index, LRU, Table 1 reuse), as verify and a traced diffusion
//! workload replay it (cache_command.cpp, which compiles the cache once for all three).
cache::replay_result replay_exact(const cache::embedding_matrix& e, const std::vector<cache::request>& trace,
                                  const cache::replay_options& o);

//! A system or workload given as a preset name or a JSON file (plan_command.cpp); errors name the path.
plan::system system_from(const std::string& arg);
using io::any_workload;
any_workload workload_from(const std::string& arg, const plan::system& s);

//! The flags plan, simulate and verify share, and what they mean (plan_command.cpp).
struct planning_flags {
  std::string objective = "time", profile, error_budget, link_budget;
};
void add_planning_flags(CLI::App& cmd, planning_flags& f);
//! The objective flag, checked.
plan::objective objective_of(const planning_flags& f);
//! The objective and the link budget, checked: the planner's options.
plan::planner_options options_of(const planning_flags& f);
//! The gradient codecs for these flags (the profile's, else the system's devices'), the error budget applied to w.
std::vector<model::compressor_cost> gradient_codecs(const plan::system& s, plan::training_workload& w, const planning_flags& f);
//! The training plan for these flags: the error budget applied to w, codecs from the profile or the defaults.
plan::plan_result plan_training_with(const plan::system& s, plan::training_workload& w, const planning_flags& f);
//! Why --gpus is refused where no layout is laid out.
inline constexpr const char* gpus_go_with =
    "goes with a training workload's layouts (--parallelism LAYOUT or search); the data-parallel planner (and "
    "any other workload) takes its ranks from the workload";
//! What --parallelism means for a training workload: as given; unset, the layout search (`search`) where the
//! workload has a transformer shape to lay out, else the data-parallel planner (`data`).
inline std::string training_parallelism(const std::string& given, const plan::training_workload& w) {
  if (!given.empty()) return given;
  return w.shape ? "search" : "data";
}
//! --parallelism LAYOUT|search and --gpus N, for a command that lays out or runs a layout (`what` it does).
void add_layout_flags(CLI::App& cmd, std::string& parallelism, std::size_t& gpus, const std::string& what);
//! The layout --parallelism names, checked against --gpus (0: any) and the system's reach.
model::parallel_layout named_layout(const plan::system& s, const std::string& parallelism, std::size_t gpus);
//! Every layout of `gpus` GPUs (0: the workload's ranks) searched for these flags' objective and link budget.
plan::parallel_plan_result search_layouts(const plan::system& s, const plan::training_workload& w, std::size_t gpus,
                                          double memory_headroom, const planning_flags& f);
//! The serving plan for these flags: the error budget applied to w; the gradient-only flags refused.
plan::serving_plan_result plan_serving_with(const plan::system& s, plan::serving_workload& w, const planning_flags& f);

void register_presets(CLI::App& app);
void register_model(CLI::App& app);
void register_compress(CLI::App& app);
void register_fabric(CLI::App& app);
void register_cache(CLI::App& app);
void register_plan(CLI::App& app);
void register_verify(CLI::App& app);
void register_validate(CLI::App& app);

}  // namespace trinity::cli
