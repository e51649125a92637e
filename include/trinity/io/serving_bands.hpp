#pragma once
//! \file
//! How far the held-out published serving runs land from their predictions, by what they measured: the bands a
//! serving plan's interval comes from (plan/serving_interval.hpp). Each run is priced as `trinity validate
//! --serving` prices it, its engine family's fitted calibration on its preset; a band holds the central
//! `coverage` of log(measured / predicted) over the held-out runs that measured its figure.

#include <cmath>
#include <string_view>
#include <vector>

#include <trinity/io/serving_runs.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::io {

struct serving_bands {
  plan::residual_band ttft, tpot, throughput;  //!< throughput: per device or per replica, as a run measured it
};

inline serving_bands held_out_serving_bands(const serving_runs& file, double coverage) {
  const auto fits = calibrate_serving(file);
  std::vector<double> ttft, tpot, throughput;
  for (const auto& r : file.runs) {
    if (r.role != "held-out") continue;
    const double ratio = std::log(r.value / predict(r, serving_system(r, fits)));
    (r.metric == "ttft_s" ? ttft : r.metric == "tpot_s" ? tpot : throughput).push_back(ratio);
  }
  return {plan::band_of(std::move(ttft), coverage), plan::band_of(std::move(tpot), coverage),
          plan::band_of(std::move(throughput), coverage)};
}

}  // namespace trinity::io
