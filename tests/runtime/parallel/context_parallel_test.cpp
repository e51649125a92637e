// Context parallelism's ring attention on the threads backend and the simulated fabric against full attention
// (context_parallel_check.hpp); tests/mpi runs the same body under mpirun.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"

#include "context_parallel_check.hpp"

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm/thread_world.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/units/literals.hpp>

#include <string>
#include <vector>

namespace parallel_context_parallel_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;
using namespace trinity::literals;

TEMPLATE_TEST_CASE(
    "context parallelism: ring attention equals full attention, forward and backward, and sends what the "
    "model says",
    "[parallel][context]", threads_backend, sim_backend) {
  for (const std::size_t c : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{6}}) {
    std::vector<std::vector<std::string>> bad(6);
    TestType::run(6, [&](auto& w) { bad[static_cast<std::size_t>(w.rank())] = cp_check::run(w, c); });
    for (int r = 0; r < 6; ++r) {
      INFO("c=" << c << " in a world of 6, rank " << r);
      CHECK(bad[static_cast<std::size_t>(r)] == std::vector<std::string>{});
    }
  }
}

TEST_CASE("context parallelism: the ring's bytes are the step model's cp_bytes", "[parallel][context]") {
  // One layer, one micro-batch of one sequence split c ways, every head its own KV: the model's K-and-V chunk
  // is 2·(s/c)·kv·2 bytes (16-bit); the mechanism's is fp32.
  for (const std::size_t c : {std::size_t{2}, std::size_t{3}, std::size_t{6}}) {
    model::training_job j;
    j.shape = {1, cp_check::heads * cp_check::dim, 8, cp_check::heads, cp_check::heads, 8, false, false};
    j.sequence = c * cp_check::tokens;
    j.global_batch = 1;
    model::training_cluster cl;
    cl.peak = flops_per_second{1e15};
    cl.memory_bandwidth = bytes_per_second{1e12};
    cl.fast = cl.slow = {seconds{1e-6}, bytes_per_second{1e11}};
    model::parallel_layout l;
    l.cp = c;
    const auto r = model::price(j, cl, l);
    const double kv = 2.0 * cp_check::heads * cp_check::tokens * cp_check::dim * 4.0;
    CHECK(r.cp_bytes.value() * 2.0 == Approx((3.0 * (c - 1.0) + 1.0) * kv));
  }
}

TEST_CASE("ring attention refuses tensors of the wrong size, naming them", "[parallel][context]") {
  parallel::ring_attention a({2, 3, 4});
  std::vector<float> ok(24), short_(23);
  comm::thread_world world(1);
  comm::thread_communicator c(world, 0);
  CHECK_THROWS_WITH(a.forward(c, ok, ok, short_, ok), Catch::Contains("q, k, v and o") && Catch::Contains("24"));
  CHECK_THROWS_WITH(a.backward(c, ok, ok, ok, ok), Catch::Contains("forward") && Catch::Contains("before backward"));
}

}  // namespace parallel_context_parallel_test
