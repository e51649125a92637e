#pragma once
//! \file
//! MPI_Init and MPI_Finalize as a scope, for programs that own MPI. A library
//! that is handed a communicator by its host program never needs it.
//!
//! It asks for MPI_THREAD_SERIALIZED: one thread at a time, any thread, which
//! is what comm::progress_engine needs to run collectives beside the caller.

#include <trinity/backends/mpi/detail/c_api.hpp>

namespace trinity::mpi {

class environment {
 public:
  environment(int& argc, char**& argv) {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
      int provided = MPI_THREAD_SINGLE;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
      owns_ = true;
    }
  }
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;
  ~environment() {
    int done = 0;
    MPI_Finalized(&done);
    if (owns_ && !done) MPI_Finalize();
  }

 private:
  bool owns_ = false;
};

}  // namespace trinity::mpi
