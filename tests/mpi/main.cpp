// One Catch2 session per rank, between MPI_Init and MPI_Finalize. Only rank 0
// reports successes; every rank reports its failures, and the exit code is
// the worst over all ranks, so mpirun fails if any rank failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <mpi.h>

#include <trinity/backends/mpi/environment.hpp>

// The session API below (configData, applyCommandLine) is Catch2 v2's, the one Debian ships.
static_assert(CATCH_VERSION_MAJOR == 2, "tests/mpi/main.cpp is written against Catch2 v2");

int main(int argc, char** argv) {
  trinity::mpi::environment env(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (rank != 0) session.configData().showSuccessfulTests = false;
  int failed = session.run();
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
