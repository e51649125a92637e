// Built against an installed trinity::mpi by run.cmake: an all-reduce on a one-rank world.
#include <trinity/backends/mpi.hpp>
#include <trinity/comm.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  trinity::mpi::environment env(argc, argv);
  trinity::mpi::communicator c;
  std::vector<float> x{1.0f, 2.0f, 3.0f};
  trinity::comm::all_reduce(c, std::span<float>(x), trinity::comm::reduce_op::sum);
  const bool ok = c.size() >= 1 && x[2] == 3.0f * static_cast<float>(c.size());
  std::printf("trinity::mpi from an install: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
