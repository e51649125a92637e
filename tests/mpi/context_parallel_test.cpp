// Context parallelism's ring attention under mpirun, one process per rank: the body the threads backend runs
// in tests/runtime/parallel (context_parallel_check.hpp), on every context-parallel degree that divides the
// world.
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/context_parallel_check.hpp"

#include <string>
#include <vector>

using namespace trinity;

TEST_CASE("mpi: ring attention equals full attention, forward and backward, and sends what the model says", "[mpi]") {
  mpi::communicator c;
  const std::size_t world = static_cast<std::size_t>(c.size());
  for (std::size_t cp = 1; cp <= world; ++cp) {
    if (world % cp != 0) continue;
    INFO("c=" << cp << ", rank " << c.rank());
    CHECK(cp_check::run(c, cp) == std::vector<std::string>{});
  }
}
