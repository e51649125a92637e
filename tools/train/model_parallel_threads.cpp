// The model-parallel runner on thread ranks (runners.hpp says why it has a file of its own).
#include <trinity/comm/thread_world.hpp>

#include "model_parallel.hpp"

template int trinity::train::run_model_parallel(trinity::comm::thread_communicator&, const trinity::train::config&,
                                                std::ostream&);
