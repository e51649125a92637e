#pragma once
//! \file
//! Pictures through gnuplot (Debian: gnuplot-nox): a script begun for a PNG (and, for hit-rate plots, the axes
//! they share), then run. Without gnuplot nothing is drawn and stderr says so; what is printed is unchanged.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

namespace trinity::reports {

//! The script for the PNG `path` (written beside it as path.gp), begun with its terminal and output; nullopt when
//! gnuplot is not installed. `who` names the program in what stderr is told.
inline std::optional<std::ofstream> begin_plot(const std::string& path, const std::string& who) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cerr << who << ": gnuplot is not installed (Debian: gnuplot-nox); no picture drawn\n";
    return std::nullopt;
  }
  std::optional<std::ofstream> gp(std::in_place, path + ".gp");
  *gp << "set terminal pngcairo size 1000,650 noenhanced\nset output '" << path << "'\n";
  return gp;
}

//! begin_plot, then a log x axis and y in [0, 1]: every hit-rate plot's axes.
inline std::optional<std::ofstream> begin_hit_rate_plot(const std::string& path, const std::string& xlabel,
                                                        const std::string& ylabel, const std::string& title,
                                                        const std::string& who) {
  auto gp = begin_plot(path, who);
  if (gp)
    *gp << "set logscale x\nset key bottom right\nset grid\nset yrange [0:1]\n"
        << "set xlabel '" << xlabel << "'\nset ylabel '" << ylabel << "'\nset title '" << title << "'\nplot ";
  return gp;
}

//! Runs the script begun by begin_plot; keeps it when gnuplot fails, to be looked at. Returns whether it drew.
inline bool finish_plot(const std::string& path, std::ofstream& gp, const std::string& who) {
  gp.close();
  const std::string script = path + ".gp";
  if (std::system(("gnuplot '" + script + "' 2>/dev/null").c_str()) != 0) {
    std::cerr << who << ": gnuplot failed; its script is " << script << '\n';
    return false;
  }
  std::filesystem::remove(script);
  return true;
}

}  // namespace trinity::reports
