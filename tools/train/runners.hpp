#pragma once
// trinity-train's two runners, declared here and instantiated for each communicator in a translation unit of
// its own (data_parallel_*.cpp, model_parallel_*.cpp). Each runner compiles all eight ZeRO schemes and every
// codec; the four in one file were the build's longest job (over four minutes on one core), which ran alone.

#include <iosfwd>

#include "train.hpp"

namespace trinity::train {

template <class Comm>
int run_data_parallel(Comm& c, const config& cfg, std::ostream& out);

template <class Comm>
int run_model_parallel(Comm& c, const config& cfg, std::ostream& out);

}  // namespace trinity::train
