// Tensor parallelism's linear pair under mpirun, one process per rank: the body the threads backend runs in
// tests/runtime/parallel (tensor_parallel_check.hpp), on every tensor-parallel degree that divides the world.
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/tensor_parallel_check.hpp"

#include <string>
#include <vector>

using namespace trinity;

TEST_CASE(
    "mpi: the column/row pair on every tensor-parallel degree trains what DDP trains, and sends what the model "
    "says",
    "[mpi]") {
  mpi::communicator c;
  for (int t = 1; t <= c.size(); ++t) {
    if (c.size() % t != 0) continue;
    for (const auto held : {parallel::tokens::all, parallel::tokens::sequence_parallel}) {
      if (held == parallel::tokens::sequence_parallel && tp_check::rows % static_cast<std::size_t>(t) != 0) continue;
      if (tp_check::hidden % static_cast<std::size_t>(t) != 0) continue;
      INFO("t=" << t << (held == parallel::tokens::all ? "" : " with sequence parallelism") << ", rank " << c.rank());
      CHECK(tp_check::run(c, t, held) == std::vector<std::string>{});
    }
  }
}
