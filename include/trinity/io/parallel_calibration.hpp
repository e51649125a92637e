#pragma once
//! \file
//! The parallel step model's three calibrated figures, from the two measurement files and nothing else:
//!  - the H100's GEMM curve, fitted to the probe's cuBLAS sweep;
//!  - κ, fitted to the probe's layer stacks without recomputation (on the H100, with that curve);
//!  - the A100's GEMM curve, fitted to the published runs marked "fit" (no A100 was lent to sweep).
//! trinity validate reports them; trinity-docgen writes them into plan/detail/measured_gemm.hpp, which the
//! device presets read, and fails its check when the files and the header disagree. With them, every published
//! run priced as trinity validate judges it (price_runs), which the docs' prose figures quote too.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <trinity/io/published_runs.hpp>
#include <trinity/io/transformer_probe.hpp>
#include <trinity/model/parallel_fit.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/training_stack.hpp>

namespace trinity::io {

struct parallel_calibration {
  model::gemm_fit h100;
  double elementwise_traffic = 0;
  std::size_t stacks_fitted = 0;
  model::gemm_efficiency a100;
  std::size_t runs_fitted = 0;

  //! The cluster a published run ran on, as calibrated, with the attention kernel it ran.
  [[nodiscard]] model::training_cluster cluster(const published_run& r) const {
    const std::string_view precision = r.job.fp8 ? "fp8" : "bf16";
    const bool a100_run = r.system == "dgx-a100";
    if (!a100_run && r.system != "dgx-h100")
      throw invalid_input("runs[" + r.name + "].system", "\"" + r.system + "\": the runs know dgx-a100 and dgx-h100");
    const auto s = *plan::presets::find(r.system);
    auto c = plan::cluster_of(s, a100_run ? a100 : h100.model, elementwise_traffic, precision);
    c.attention = plan::attention_kernel_curve(s, r.attention_kernel, "runs[" + r.name + "].attention_kernel");
    return c;
  }
};

inline parallel_calibration calibrate(const transformer_probe& probe, const published_runs& runs) {
  parallel_calibration c;
  const auto h100 = *plan::presets::find("dgx-h100");
  c.h100 = model::fit_gemm(probe.gemms, h100.device.compute.value());
  const auto none = probe.without_recomputation();
  c.stacks_fitted = none.size();
  c.elementwise_traffic = model::fit_elementwise_traffic(none, plan::cluster_of(h100, c.h100.model, 0));
  std::vector<model::measured_step> fit;
  for (const auto& r : runs.runs) {
    if (r.role != "fit") continue;
    if (r.system != "dgx-a100")
      throw invalid_input("runs[" + r.name + "].role", "only A100 runs fit; the H100's curve is the probe's");
    fit.push_back({r.job, r.layout, c.cluster(r), seconds{r.iteration_s}});
  }
  c.runs_fitted = fit.size();
  c.a100 = fit.empty() ? c.h100.model : model::fit_gemm_to_steps(fit);
  return c;
}

//! A published run priced on its system's calibrated cluster.
struct priced_run {
  const published_run* run;  //!< into the runs file, which must outlive it
  model::parallel_step_cost cost;
  double error;  //!< the predicted step over the published one, less one
  bytes memory;  //!< the device's memory: a run that ran fitted in it, so `fits()` false is the model's overcount
  //! Within the device's memory.
  [[nodiscard]] bool fits() const noexcept { return cost.device_bytes <= memory; }
};

//! Every run of `runs`, in the file's order.
inline std::vector<priced_run> price_runs(const published_runs& runs, const parallel_calibration& cal) {
  std::vector<priced_run> out;
  out.reserve(runs.runs.size());
  for (const auto& r : runs.runs) {
    const auto c = cal.cluster(r);
    const auto cost = model::price(r.job, c, r.layout);
    out.push_back({&r, cost, cost.step.value() / r.iteration_s - 1.0, c.memory});
  }
  return out;
}

//! The band of log(measured / predicted) that holds the central `coverage` of the held-out runs of `rows`
//! (quantiles by linear interpolation), leaving out the run at `leave_out` (none by default): with it left out, a
//! run judges a band it did not shape, which is how `trinity validate` counts the intervals' coverage honestly.
inline plan::residual_band held_out_band(const std::vector<priced_run>& rows, double coverage,
                                         std::size_t leave_out = static_cast<std::size_t>(-1)) {
  std::vector<double> r;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (i != leave_out && rows[i].run->role == "held-out") r.push_back(-std::log1p(rows[i].error));
  return plan::band_of(std::move(r), coverage);
}

//! How many held-out runs of `rows` fall inside their interval at `coverage`, each judged by the band of the others
//! (leave one out): what the intervals every plan prints are worth on runs that did not shape them.
struct interval_check {
  std::size_t inside = 0, runs = 0;
};
inline interval_check check_intervals(const std::vector<priced_run>& rows, double coverage) {
  interval_check c;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].run->role != "held-out") continue;
    const auto band = held_out_band(rows, coverage, i);
    const double measured = rows[i].run->iteration_s, predicted = rows[i].cost.step.value();
    ++c.runs;
    c.inside += measured >= predicted * std::exp(band.low) && measured <= predicted * std::exp(band.high);
  }
  return c;
}

}  // namespace trinity::io
