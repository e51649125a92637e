// A pipeline composed with each ZeRO stage over the data-parallel group, under mpirun: the body the threads
// backend runs in tests/runtime/parallel (scheme_check.hpp), for every pipeline degree that divides the world
// and the 8 layers.
#include <catch2/catch.hpp>

#include <trinity/backends/mpi.hpp>

#include "../runtime/parallel/scheme_check.hpp"

#include <string>
#include <vector>

using namespace trinity;

TEMPLATE_TEST_CASE("mpi: a pipeline composed with a ZeRO stage over the data-parallel group trains what DDP trains",
                   "[mpi]", shard::replicate, shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  mpi::communicator c;
  const std::size_t world = static_cast<std::size_t>(c.size());
  for (std::size_t p = 1; p <= world; ++p) {
    if (world % p != 0 || pp_check::layers % p != 0) continue;
    if (TestType::shards.parameters && p > 1) continue;  // refused at compile time for a parallel::scheme
    for (const std::size_t v : {std::size_t{1}, std::size_t{2}}) {
      if (v > 1 && (p == 1 || pp_check::layers % (p * v) != 0)) continue;
      const std::size_t m = 2 * p;
      INFO(TestType::name << ", p=" << p << ", v=" << v << ", rank " << c.rank());
      CHECK(scheme_check::train<TestType>(c, p, v, m, scheme_check::ddp_reference(world / p, m)) ==
            std::vector<std::string>{});
    }
  }
}

TEMPLATE_TEST_CASE(
    "mpi: context parallelism composed with a ZeRO stage over the data and context ranks trains what DDP trains",
    "[mpi]", shard::replicate, shard::zero<1>, shard::zero<2>, shard::zero<3>) {
  mpi::communicator c;
  const std::size_t world = static_cast<std::size_t>(c.size());
  for (std::size_t cp = 2; cp <= world; ++cp) {
    if (world % cp != 0 || scheme_check::context::tokens % cp != 0) continue;
    INFO(TestType::name << ", cp=" << cp << ", rank " << c.rank());
    CHECK(scheme_check::context::train<TestType>(c, cp, scheme_check::context::reference(world / cp)) ==
          std::vector<std::string>{});
  }
}
