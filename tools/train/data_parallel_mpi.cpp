// The data-parallel runner on MPI ranks (runners.hpp says why it has a file of its own).
#include <trinity/backends/mpi.hpp>

#include "data_parallel.hpp"

template int trinity::train::run_data_parallel(trinity::mpi::communicator&, const trinity::train::config&,
                                               std::ostream&);
