#pragma once
// trinity-train's model-parallel runner; model_parallel_*.cpp instantiate it, one communicator each.

#include <ostream>

#include "pipeline_train.hpp"
#include "reductions.hpp"
#include "runners.hpp"

namespace trinity::train {

// Model parallelism (--tp, --sp, --pp, --vpp): the same model and task through parallel::run_pipeline and the
// tensor-parallel passes, ZeRO over each rank's data-parallel group.
template <class Comm>
int run_model_parallel(Comm& c, const config& cfg, std::ostream& out) {
  const auto refuse = [](const char* flag, const char* why) { throw invalid_input(flag, why); };
  // The data-parallel group's gradient reduction, exact or through --compress's codec (as without --tp or --pp).
  auto r = reduction_for<comm::group<Comm>>(cfg.compress);
  const group_reductions<Comm> experts = [&] { return reduction_for<comm::group<Comm>>(cfg.compress); };
  if (cfg.stage >= 3 && cfg.pipeline > 1)
    refuse("--stage", "3 re-gathers every stage's weights for every micro-batch; with --pp use stage 1 or 2");
  // Without a pipeline, stage 3 gathers this rank's tensor shard of each layer once per micro-batch pass.
  return with_scheme(cfg.stage, cfg.offload,
                     [&]<class Scheme>() { return run_pipelined<Scheme>(c, cfg, out, std::move(r), experts); });
}

}  // namespace trinity::train
