#pragma once
//! \file
//! `trinity model frontier`: the compute -> bandwidth frontier B*(Q0, C) for one quality target (the AI Trinity
//! paper, §3.1.2) evaluated at chosen compute points, and the trade between two of them priced per frame; as JSON
//! and as text.

#include <nlohmann/json.hpp>

#include <cmath>
#include <ostream>
#include <vector>

#include <trinity/model/frontier.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

struct frontier_question {
  model::frontier<flops, bits_per_pixel> frontier;
  std::vector<flops> at;      //!< where to evaluate B* and its elasticity
  flops from{}, to{};         //!< the trade: decoder compute before and after
  double pixels_per_frame{};  //!< what a frame's bytes are counted over
};

namespace detail {
struct frontier_trade {
  priced_trade<resources::compute, resources::bandwidth> trade;
  double compute_ratio, gain, mean_elasticity;
};
inline frontier_trade trade_of(const frontier_question& q) {
  const model::compute_for_bandwidth<> policy{q.frontier, pixels{q.pixels_per_frame}};
  const double ratio = q.to / q.from;
  const double gain = q.frontier.compression_gain(q.from, q.to);
  return {policy.price({q.from, q.to}), ratio, gain, ratio == 1.0 ? 0.0 : -std::log(gain) / std::log(ratio)};
}
}  // namespace detail

[[nodiscard]] inline nlohmann::json to_json(const frontier_question& q) {
  using json = nlohmann::json;
  const auto& f = q.frontier;
  const auto [trade, compute_ratio, gain, mean_elasticity] = detail::trade_of(q);
  json out{{"model", "frontier"}, {"points", json::array()}, {"evaluations", json::array()}};
  for (const auto& p : f.points())
    out["points"].push_back({{"compute_flops", p.compute.value()}, {"bandwidth_bpp", p.bandwidth.value() * 8}});
  for (const auto c : q.at)
    out["evaluations"].push_back({{"compute_flops", c.value()},
                                  {"bandwidth_bpp", f.bandwidth_at(c).value() * 8},
                                  {"elasticity", f.elasticity(c)}});
  out["trade"] = {{"spends", "compute"},
                  {"saves", "bandwidth"},
                  {"from_flops", q.from.value()},
                  {"to_flops", q.to.value()},
                  {"compute_ratio", compute_ratio},
                  {"compression_gain", gain},
                  {"mean_elasticity", mean_elasticity},
                  {"pixels_per_frame", q.pixels_per_frame},
                  {"bytes_per_frame_before", trade.before.bandwidth.value()},
                  {"bytes_per_frame_after", trade.after.bandwidth.value()},
                  {"spent_flops", trade.spent().value()},
                  {"saved_bytes_per_frame", trade.saved().value()}};
  return out;
}

inline void print(std::ostream& os, const frontier_question& q) {
  const auto& f = q.frontier;
  const auto [trade, compute_ratio, gain, mean_elasticity] = detail::trade_of(q);
  os << "Compute -> bandwidth: the frontier B*(Q0, C) for one quality target (paper §3.1.2)\n"
     << "  " << f.points().size() << " measured points, interpolated linearly in log-log, not extrapolated\n\n";
  table t({"decoder compute", "B*(Q0, C)", "elasticity d log B / d log C"});
  for (const auto c : q.at) t.add({to_string(c), to_string(f.bandwidth_at(c)), significant(f.elasticity(c), 3)});
  t.print(os);
  os << "\nTrade: " << significant(compute_ratio, 4) << "x more decoder compute (" << to_string(q.from) << " -> "
     << to_string(q.to) << ") needs " << significant(gain, 4) << "x less bandwidth ("
     << to_string(f.bandwidth_at(q.from)) << " -> " << to_string(f.bandwidth_at(q.to)) << ").\n"
     << "  per frame of " << significant(q.pixels_per_frame, 7) << " px: " << to_string(trade.before.bandwidth)
     << " -> " << to_string(trade.after.bandwidth) << "; spends " << to_string(trade.spent()) << ", saves "
     << to_string(trade.saved()) << " (" << to_string(flops{trade.spent().value() / trade.saved().value()})
     << " per byte saved)\n"
     << "  mean elasticity " << significant(mean_elasticity, 3) << ": each 10x of compute divides bandwidth by "
     << significant(std::pow(10.0, -mean_elasticity), 3) << "\n";
}

}  // namespace trinity::reports
