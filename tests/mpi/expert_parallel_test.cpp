// Expert parallelism's MoE layer under mpirun: the body the threads backend runs in tests/runtime/parallel
// (expert_parallel_check.hpp): each rank's tokens as the one-rank layer gives them, bit for bit, and each rank's
// bytes what expert_dispatch_bytes counts.
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/expert_parallel_check.hpp"

#include <string>
#include <vector>

using namespace trinity;

TEST_CASE("mpi: the expert-parallel layer gives each token the one-rank layer's output and sends the counted bytes",
          "[mpi]") {
  mpi::communicator c;
  INFO("rank " << c.rank() << " of " << c.size());
  CHECK(moe_check::run(c) == std::vector<std::string>{});
}

TEST_CASE("mpi: the expert-parallel layer's backward gives the one-rank layer's gradients", "[mpi]") {
  mpi::communicator c;
  INFO("rank " << c.rank() << " of " << c.size());
  CHECK(moe_check::run_backward(c) == std::vector<std::string>{});
}

TEST_CASE("mpi: expert tensor parallelism gives the one-rank layer's outputs and gradients and the counted bytes",
          "[mpi]") {
  mpi::communicator c;
  INFO("rank " << c.rank() << " of " << c.size());
  // Two members a tensor group where the ranks pair up; the whole width over 5 ranks otherwise.
  const std::size_t members = c.size() % 2 == 0 ? 2 : (c.size() == 5 ? 5 : 1);
  CHECK(moe_check::tensor::run(c, members) == std::vector<std::string>{});
}
