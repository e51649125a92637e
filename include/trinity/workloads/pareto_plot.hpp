#pragma once
//! \file
//! A plan's trade drawn: every feasible candidate as (x, y), the Pareto front among them and the choice, as a
//! PNG through gnuplot (Debian: gnuplot-nox). Without gnuplot, or where the PNG cannot be written, it is refused.

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <trinity/reports/gnuplot.hpp>

namespace trinity::workloads {

// Every feasible candidate as (x, y), the Pareto front among them and the choice, drawn with gnuplot.
struct plot_point {
  double x, y;
};
inline void draw_front(const std::string& path, const std::string& title, const std::string& xlabel,
                       const std::string& ylabel, const std::vector<plot_point>& feasible,
                       std::vector<plot_point> front, plot_point chosen, const std::string& what = "plans",
                       const std::string& resources = "time, energy, memory, bytes sent") {
  auto begun = reports::begin_plot(path, "trinity plan");
  if (!begun) return;
  auto& gp = *begun;
  // The front of the two resources drawn, as a staircase: the 4-D front's members need not lie on it.
  std::vector<plot_point> stairs = feasible;
  std::sort(stairs.begin(), stairs.end(), [](auto& a, auto& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  std::vector<plot_point> front2;
  for (const auto& p : stairs)
    if (front2.empty() || p.y < front2.back().y) front2.push_back(p);
  gp << "set logscale xy\nset grid\n"
     << "set key below\nset xlabel " << reports::quoted(xlabel) << "\nset ylabel " << reports::quoted(ylabel)
     << "\nset title " << reports::quoted(title) << "\n"
     << "plot '-' using 1:2 with points pt 7 ps 0.8 lc rgb '#aaaaaa' title " << reports::quoted("feasible " + what)
     << ", "
     << "'-' using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'time-memory front', "
     << "'-' using 1:2 with points pt 6 ps 1.5 lw 2 lc rgb '#2ca02c' title "
     << reports::quoted("Pareto front (" + resources + ")") << ", "
     << "'-' using 1:2 with points pt 3 ps 3 lw 3 lc rgb '#d62728' title 'chosen'\n";
  for (const auto& p : feasible) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n";
  for (const auto& p : front2) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n";
  for (const auto& p : front) gp << p.x << ' ' << p.y << '\n';
  gp << "e\n" << chosen.x << ' ' << chosen.y << "\ne\n";
  reports::finish_plot(path, gp, "trinity plan");
  std::cerr << "trinity plan: wrote " << path << '\n';
}

}  // namespace trinity::workloads
