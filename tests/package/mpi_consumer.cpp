// Built against an installed trinity::mpi by run.cmake: an all-reduce on a one-rank world.
#include <trinity/backends/mpi.hpp>
#include <trinity/comm.hpp>

#include <cstdio>
#include <vector>

#include "expect.hpp"

int main(int argc, char** argv) {
  trinity::mpi::environment env(argc, argv);
  trinity::mpi::communicator c;
  std::vector<float> x{1.0f, 2.0f, 3.0f};
  trinity::comm::all_reduce(c, std::span<float>(x), trinity::comm::reduce_op::sum);
  std::printf("trinity::mpi from an install:\n");
  EXPECT(c.size() >= 1 && x[2] == 3.0f * static_cast<float>(c.size()), "an all-reduce sums over every rank");
  return consumer::verdict();
}
