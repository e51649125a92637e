#pragma once
//! \file
//! What `trinity cache replay --format csv` measured: a request trace replayed through the approximate cache at
//! each capacity, one curve per latent size, both hit-rate families fitted to each; as JSON, as text, and drawn.
//! Semantics: cache/replay.hpp and docs/cache.md.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <trinity/cache/replay.hpp>
#include <trinity/reports/gnuplot.hpp>
#include <trinity/reports/hit_rate_fits.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

//! One latent size's replays, capacity by capacity, and the families fitted to them.
struct replay_curve {
  bytes latent_size{};
  std::vector<cache::replay_result> points;
  hit_rate_fits fits;
};

struct cache_replay_report {
  std::string trace, embeddings, index, eviction, plot;  //!< what was replayed, how, and the picture's path
  std::size_t requests = 0, dimension = 0;
  double warmup = 0;
  int steps = 0;
  double step_flops = 0;
  std::vector<replay_curve> curves;
};

[[nodiscard]] inline nlohmann::json to_json(const cache_replay_report& r) {
  using json = nlohmann::json;
  const auto depths = cache::runtime_reuse{}.depths();
  json out{{"trace", r.trace},         {"embeddings", r.embeddings}, {"requests", r.requests},
           {"dimension", r.dimension}, {"warmup", r.warmup},         {"index", r.index},
           {"eviction", r.eviction},   {"steps", r.steps},           {"step_flops", r.step_flops},
           {"curves", json::array()}};
  for (const auto& c : r.curves) {
    json jc{{"latent_size_bytes", c.latent_size.value()},
            {"entry_size_bytes", c.points.front().entry_size.value()},
            {"points", json::array()}};
    for (const auto& p : c.points) {
      json per_depth = json::object();
      for (const int d : depths)
        per_depth[std::to_string(d)] = p.hits_per_depth.contains(d) ? p.hits_per_depth.at(d) : 0;
      jc["points"].push_back({{"capacity_bytes", p.capacity.value()},
                              {"requests", p.requests},
                              {"hits", p.hits},
                              {"hit_rate", p.hit_rate},
                              {"hits_per_depth", per_depth},
                              {"saved_flops", p.saved.value()},
                              {"saved_share", p.saved_share},
                              {"insertions", p.insertions},
                              {"evictions", p.evictions},
                              {"entries_at_end", p.entries_at_end}});
    }
    c.fits.add_to(jc);
    out["curves"].push_back(jc);
  }
  if (!r.plot.empty()) out["plot"] = r.plot;
  return out;
}

namespace detail {
inline void print_fits(std::ostream& os, const hit_rate_fits& fits) {
  if (!fits.exponential && !fits.power) return;
  table f({"fit", "parameters", "rmse", "max |error|"});
  if (fits.exponential)
    f.add({"exponential saturation", "beta = " + fixed(fits.exponential->model.beta, 4),
           fixed(fits.exponential->rmse, 4), fixed(fits.exponential->max_abs_error, 4)});
  if (fits.power)
    f.add({"power law", fits.power_law_parameters(), fixed(fits.power->rmse, 4), fixed(fits.power->max_abs_error, 4)});
  os << '\n';
  f.print(os);
  if (fits.exponential && fits.power)
    os << "better fit: " << (fits.power->rmse < fits.exponential->rmse ? "power law" : "exponential saturation")
       << '\n';
}
}  // namespace detail

inline void print(std::ostream& os, const cache_replay_report& r) {
  const auto depths = cache::runtime_reuse{}.depths();
  os << "Replayed " << r.requests << " requests (" << r.dimension << "-d embeddings) through the " << r.index
     << " index with " << r.eviction << " eviction; Table 1 reuse; counted after the first " << fixed(r.warmup * 100, 0)
     << "%.\nA full request runs " << r.steps << " steps of " << to_string(flops{r.step_flops})
     << "; an entry stores latents at steps";
  for (const int d : depths) os << ' ' << d;
  os << ".\n";
  for (const auto& c : r.curves) {
    os << "\nLatent " << to_string(c.latent_size) << " (entry " << to_string(c.points.front().entry_size) << "):\n";
    std::vector<std::string> header{"capacity", "entries", "hit rate"};
    for (const int d : depths) header.push_back("@" + std::to_string(d));
    header.insert(header.end(), {"saved compute", "saved share"});
    table t(header);
    for (const auto& p : c.points) {
      std::vector<std::string> row{to_string(p.capacity), std::to_string(p.entries_at_end), fixed(p.hit_rate)};
      for (const int d : depths)
        row.push_back(std::to_string(p.hits_per_depth.contains(d) ? p.hits_per_depth.at(d) : 0));
      row.push_back(to_string(p.saved));
      row.push_back(fixed(p.saved_share * 100, 1) + "%");
      t.add(row);
    }
    t.print(os);
    std::uint64_t hits = 0;
    double depth_sum = 0;
    for (const auto& p : c.points)
      for (const auto& [d, n] : p.hits_per_depth)
        hits += n, depth_sum += static_cast<double>(d) * static_cast<double>(n);
    if (hits) os << "mean reuse depth of a hit: " << fixed(depth_sum / static_cast<double>(hits), 1) << " steps\n";
    detail::print_fits(os, c.fits);
  }
  if (!r.plot.empty() && std::filesystem::exists(r.plot)) os << "\nwrote " << r.plot << '\n';
}

//! The curves and their power-law fits as a PNG at r.plot (cf. the paper's Figure 9).
inline void draw(const cache_replay_report& r) {
  const std::string who = "trinity cache replay";
  auto plot =
      begin_hit_rate_plot(r.plot, "cache capacity (GB)", "hit rate (after warm-up)",
                          "Approximate cache: hit rate against capacity per latent size (cf. paper Figure 9)", who);
  if (!plot) return;
  auto& gp = *plot;
  for (std::size_t i = 0; i < r.curves.size(); ++i)
    gp << (i ? ", " : "") << "'-' using 1:2 with linespoints lw 2 lc " << i + 1 << " title "
       << quoted("latent " + to_string(r.curves[i].latent_size) + " (measured)")
       << r.curves[i].fits.power_law_plot(i + 1, "power-law fit");
  gp << '\n';
  for (const auto& c : r.curves) {
    for (const auto& p : c.points) gp << p.capacity.value() / 1e9 << ' ' << p.hit_rate << '\n';
    gp << "e\n";
  }
  finish_plot(r.plot, gp, who);
}

}  // namespace trinity::reports
