// The model-parallel runner on MPI ranks (runners.hpp says why it has a file of its own).
#include <trinity/backends/mpi.hpp>

#include "model_parallel.hpp"

template int trinity::train::run_model_parallel(trinity::mpi::communicator&, const trinity::train::config&,
                                                std::ostream&);
