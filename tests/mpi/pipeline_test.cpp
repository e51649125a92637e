// Pipeline parallelism under mpirun, one process per rank: the body the threads backend runs in
// tests/runtime/parallel (pipeline_check.hpp), for every pipeline degree that divides the world and the 8
// layers, both schedules.
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/pipeline_check.hpp"

#include <string>
#include <vector>

using namespace trinity;

TEST_CASE(
    "mpi: pipeline parallelism, 1F1B and interleaved, trains what DDP trains, sends and keeps what the model says",
    "[mpi]") {
  mpi::communicator c;
  const std::size_t world = static_cast<std::size_t>(c.size());
  for (std::size_t p = 1; p <= world; ++p) {
    if (world % p != 0) continue;
    for (const std::size_t v : {std::size_t{1}, std::size_t{2}}) {
      if (pp_check::layers % (p * v) != 0 || (v > 1 && p == 1)) continue;
      for (const std::size_t m : {p, 2 * p}) {
        INFO("p=" << p << ", v=" << v << ", m=" << m << ", rank " << c.rank());
        CHECK(pp_check::run(c, p, m, v) == std::vector<std::string>{});
      }
    }
  }
}
