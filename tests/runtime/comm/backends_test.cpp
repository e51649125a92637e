// One body for every communicator backend in this binary: the in-process one
// and the simulated fabric (MPI runs the same checks under mpirun in tests/mpi).
#include <catch2/catch.hpp>

#include "test_backends.hpp"

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm.hpp>
#include <trinity/units/literals.hpp>

#include <cstdint>
#include <tuple>
#include <vector>

namespace comm_backends_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;
using namespace trinity::literals;

namespace {

std::int32_t value(int rank, std::size_t i) {
  return static_cast<std::int32_t>((i * 2654435761u) ^ (static_cast<std::uint32_t>(rank) * 40503u));
}

}  // namespace

using enabled_backends = std::tuple<threads_backend, sim_backend>;

TEMPLATE_LIST_TEST_CASE("every collective agrees with a serial reference on every backend", "[comm]",
                        enabled_backends) {
  for (int ranks = 1; ranks <= 6; ++ranks)
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{1000}}) {
      std::vector<std::int32_t> sum(count, 0);
      for (int r = 0; r < ranks; ++r)
        for (std::size_t i = 0; i < count; ++i)
          sum[i] =
              static_cast<std::int32_t>(static_cast<std::uint32_t>(sum[i]) + static_cast<std::uint32_t>(value(r, i)));
      std::vector<int> wrong(static_cast<std::size_t>(ranks), 0);
      TestType::run(ranks, [&](auto& c) {
        static_assert(Communicator<std::remove_cvref_t<decltype(c)>>);  // Catch2 assertions are not thread-safe
        const int r = c.rank();
        int& bad = wrong[static_cast<std::size_t>(r)];
        std::vector<std::int32_t> mine(count);
        for (std::size_t i = 0; i < count; ++i) mine[i] = value(r, i);
        for (const auto how : {comm::algorithm::ring, comm::algorithm::halving_doubling}) {
          auto x = mine;
          comm::all_reduce(c, std::span<std::int32_t>(x), comm::reduce_op::sum, how);
          bad += x != sum;
        }
        const comm::partition part(count, ranks);
        std::vector<std::int32_t> shard(part.size(r)), all(count);
        comm::reduce_scatter(c, std::span<const std::int32_t>(mine), std::span<std::int32_t>(shard),
                             comm::reduce_op::sum);
        bad += !std::equal(shard.begin(), shard.end(), sum.begin() + static_cast<std::ptrdiff_t>(part.begin(r)));
        comm::all_gather(c, std::span<const std::int32_t>(shard), std::span<std::int32_t>(all));
        bad += all != sum;
        auto b = r == ranks - 1 ? sum : std::vector<std::int32_t>(count, 0);
        comm::broadcast(c, std::span<std::int32_t>(b), ranks - 1);
        bad += b != sum;
        comm::barrier(c);
      });
      INFO(ranks << " ranks, " << count << " elements");
      REQUIRE(std::count(wrong.begin(), wrong.end(), 0) == ranks);
    }
}

}  // namespace comm_backends_test
