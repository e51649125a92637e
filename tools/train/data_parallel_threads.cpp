// The data-parallel runner on thread ranks (runners.hpp says why it has a file of its own).
#include <trinity/comm/thread_world.hpp>

#include "data_parallel.hpp"

template int trinity::train::run_data_parallel(trinity::comm::thread_communicator&, const trinity::train::config&,
                                               std::ostream&);
