#pragma once
//! \file
//! MPI_Init and MPI_Finalize as a scope, for programs that own MPI. A library
//! that is handed a communicator by its host program never needs it.

#include <mpi.h>

namespace trinity::mpi {

class environment {
 public:
  environment(int& argc, char**& argv) {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
      MPI_Init(&argc, &argv);
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
