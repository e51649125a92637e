// all_to_all and all_to_allv on the threads backend and the simulated fabric, 1 to 6 ranks, uneven blocks and
// empty ones (all_to_all_check.hpp); tests/mpi runs the same check under mpirun and against MPI_Alltoallv.
#include <catch2/catch.hpp>

#include "all_to_all_check.hpp"
#include "test_backends.hpp"

#include <trinity/comm/all_to_all.hpp>
#include <trinity/comm/thread_world.hpp>

#include <string>
#include <vector>

namespace comm_all_to_all_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;

TEMPLATE_TEST_CASE("all_to_allv delivers every block whole, in place, from the right rank, and counts its bytes",
                   "[comm][all_to_all]", threads_backend, sim_backend) {
  test_backends::check_every_rank<TestType>({1, 2, 3, 5, 6}, [](auto& c) { return a2a_check::run(c); });
}

TEST_CASE("all_to_all and all_to_allv refuse blocks that do not fit, naming the argument", "[comm][all_to_all]") {
  comm::thread_world world(2, std::chrono::seconds(5));
  std::vector<std::string> errors(2);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    const auto ur = static_cast<std::size_t>(c.rank());
    std::vector<int> in(4), out(4);
    const std::vector<std::size_t> two{2, 2}, offsets{0, 2}, three{1, 1, 1}, past{0, 3};
    const auto attempt = [&](auto&& f) -> std::string {
      try {
        f();
      } catch (const invalid_input& e) {
        return e.what();
      }
      return "";
    };
    using sizes = std::span<const std::size_t>;
    std::string all;
    all += attempt([&] {
      comm::all_to_allv(c, std::span<const int>(in), sizes(three), sizes(offsets), std::span<int>(out), sizes(two),
                        sizes(offsets));
    });
    all += "|" + attempt([&] {
             comm::all_to_allv(c, std::span<const int>(in), sizes(two), sizes(past), std::span<int>(out), sizes(two),
                               sizes(offsets));
           });
    all += "|" + attempt([&] { comm::all_to_all(c, std::span<const int>(in.data(), 3), std::span<int>(out)); });
    errors[ur] = all;
  });
  for (const auto& e : errors) {
    CHECK_THAT(e, Catch::Contains("send_counts: has 3 entries; give one per rank (2)"));
    CHECK_THAT(e, Catch::Contains("send_counts: block 1 (2 elements at 3) runs past the span's 4 elements"));
    CHECK_THAT(e, Catch::Contains("in: has 3 elements, not a multiple of the 2 ranks"));
  }
}

}  // namespace comm_all_to_all_test
