// Expert parallelism's MoE layer under mpirun: the body the threads backend runs in tests/runtime/parallel
// (expert_parallel_check.hpp): each rank's tokens as the one-rank layer gives them, bit for bit, and each rank's
// bytes what expert_dispatch_bytes counts; and the layer deduplicated by node (node_dispatch_check.hpp).
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/expert_parallel_check.hpp"
#include "../runtime/parallel/node_dispatch_check.hpp"

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

TEST_CASE("mpi: the node-deduplicated MoE layer gives the one-rank layer's outputs and gradients and the counted bytes",
          "[mpi]") {
  mpi::communicator c;
  INFO("rank " << c.rank() << " of " << c.size());
  // Nodes of two ranks where the ranks pair up (one node on two ranks, two on four); a rank a node otherwise.
  const std::size_t g = c.size() % 2 == 0 ? 2 : 1;
  CHECK(node_dispatch_check::run(c, g) == std::vector<std::string>{});
}
