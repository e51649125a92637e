#pragma once
// trinity-train's data-parallel runner; data_parallel_*.cpp instantiate it, one communicator each.

#include <ostream>
#include <utility>

#include "reductions.hpp"
#include "runners.hpp"
#include "train.hpp"

namespace trinity::train {

// Data parallelism alone: ZeRO's stage and offload over every rank, the gradient reduction exact or through
// --compress's codec.
template <class Comm>
int run_data_parallel(Comm& c, const config& cfg, std::ostream& out) {
  auto r = reduction_for<Comm>(cfg.compress);
  const group_reductions<Comm> experts = [&] { return reduction_for<comm::group<Comm>>(cfg.compress); };
  return with_scheme(cfg.stage, cfg.offload,
                     [&]<class Scheme>() { return run<Scheme>(c, cfg, out, std::move(r), experts); });
}

}  // namespace trinity::train
