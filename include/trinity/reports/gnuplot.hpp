#pragma once
//! \file
//! Pictures through gnuplot (Debian: gnuplot-nox), with no shell and no user text read as a command: the script
//! goes to gnuplot's standard input, gnuplot writes the PNG to its standard output, and the PNG is written to the
//! path whole or not at all (detail/output_file.hpp). Every piece of text in a script (a title naming a system,
//! a label naming a tier) goes in as a single-quoted gnuplot string through `quoted`, in which gnuplot performs no
//! substitution. A path that cannot be written, or gnuplot missing, is refused before the work; gnuplot failing,
//! or writing something that is not a PNG, is refused with what it said.

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <trinity/detail/output_file.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/error.hpp>

namespace trinity::reports {

//! Text as a gnuplot single-quoted string: ' doubled (gnuplot's escape there), control bytes as spaces (a newline
//! would end the command). Inside single quotes gnuplot expands no backquote, macro or escape.
inline std::string quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'')
      out += "''";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += ' ';
    else
      out += c;
  }
  return out + "'";
}

//! The script of a PNG for `path`, begun with its terminal and its output (gnuplot's standard output). Refused
//! (invalid_input naming `field`) when `path` cannot be written or gnuplot is not installed. `who` is unused and
//! kept for the callers written against it.
inline std::optional<std::ostringstream> begin_plot(const std::string& path, const std::string& who,
                                                    std::string_view field = "--plot") {
  (void)who;
  trinity::detail::require_output_file(field, path);
  if (!trinity::detail::program_on_path("gnuplot"))
    throw invalid_input(std::string(field), "gnuplot is not installed, so " + path +
                                                " cannot be drawn. Fix: install it (Debian: gnuplot-nox) or leave "
                                                "out " +
                                                std::string(field));
  std::optional<std::ostringstream> gp(std::in_place);
  *gp << "set terminal pngcairo size 1000,650 noenhanced\nset output\n";
  return gp;
}

//! begin_plot, then a log x axis and y in [0, 1]: every hit-rate plot's axes.
inline std::optional<std::ostringstream> begin_hit_rate_plot(const std::string& path, const std::string& xlabel,
                                                             const std::string& ylabel, const std::string& title,
                                                             const std::string& who) {
  auto gp = begin_plot(path, who);
  *gp << "set logscale x\nset key bottom right\nset grid\nset yrange [0:1]\n"
      << "set xlabel " << quoted(xlabel) << "\nset ylabel " << quoted(ylabel) << "\nset title " << quoted(title)
      << "\nplot ";
  return gp;
}

//! Runs gnuplot on the script begun by begin_plot and writes its PNG to `path`. Returns true; throws
//! invalid_input(field, why) when gnuplot fails or the file cannot be written, so no caller reports a picture
//! that is not there.
inline bool finish_plot(const std::string& path, const std::ostringstream& gp, const std::string& who,
                        std::string_view field = "--plot") {
  (void)who;
  const std::string script = gp.str() + "\nunset output\n";
  trinity::detail::program_run run;
  try {
    run = trinity::detail::run_program({"gnuplot"}, script);
  } catch (const std::exception& e) {
    throw invalid_input(std::string(field), std::string("gnuplot could not be run: ") + e.what());
  }
  constexpr std::string_view png_signature = "\x89PNG\r\n\x1a\n";
  if (!run.end.succeeded() || !run.out.starts_with(png_signature))
    throw invalid_input(std::string(field),
                        "gnuplot failed to draw " + path + " (" + run.end.describe() + "): " + run.err.substr(0, 400));
  trinity::detail::write_output_file(field, path, run.out);
  return true;
}

}  // namespace trinity::reports
