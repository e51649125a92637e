// Tensor parallelism's linear pair on the threads backend and on the simulated fabric, against the unsharded
// pair (tensor_parallel_check.hpp); tests/mpi runs the same body under mpirun.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"

#include "tensor_parallel_check.hpp"

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm/thread_world.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/units/literals.hpp>

#include <string>
#include <tuple>
#include <vector>

namespace parallel_tensor_parallel_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;
using namespace trinity::literals;

TEMPLATE_TEST_CASE(
    "tensor parallelism: the column/row pair on t-way groups trains what DDP trains, and sends what the "
    "model says",
    "[parallel][tensor]", threads_backend, sim_backend) {
  for (const int t : {1, 2, 4})
    for (const auto held : {parallel::tokens::all, parallel::tokens::sequence_parallel}) {
      std::vector<std::vector<std::string>> bad(4);
      TestType::run(4, [&](auto& c) { bad[static_cast<std::size_t>(c.rank())] = tp_check::run(c, t, held); });
      for (int r = 0; r < 4; ++r) {
        INFO("t=" << t << (held == parallel::tokens::all ? "" : " with sequence parallelism") << ", rank " << r);
        CHECK(bad[static_cast<std::size_t>(r)] == std::vector<std::string>{});
      }
    }
}

TEST_CASE("tensor parallelism: the bytes the pair sends are the step model's all-reduce bytes", "[parallel][tensor]") {
  // model::layer() counts one all-reduce of a 16-bit activation of T tokens and width h as 2·(t − 1)/t·T·h·2
  // bytes; the mechanism's fp32 activation is twice as wide a word, and the pair runs two (y, dx) of width
  // out = in = h.
  model::training_job j;
  j.shape = {1, tp_check::in, tp_check::hidden, 4, 4, 32, false, false};
  j.sequence = tp_check::rows;
  j.global_batch = 1;
  model::training_cluster c;
  c.peak = flops_per_second{1e15};
  c.memory_bandwidth = bytes_per_second{1e12};
  c.fast = c.slow = {seconds{1e-6}, bytes_per_second{1e11}};
  for (const int t : {2, 4}) {
    model::parallel_layout l;
    l.tp = static_cast<std::size_t>(t);
    const auto x = model::layer(j, c, l);
    std::vector<std::vector<std::string>> bad(4);
    threads_backend::run(
        4, [&](auto& w) { bad[static_cast<std::size_t>(w.rank())] = tp_check::run(w, t, parallel::tokens::all); });
    CHECK(bad[0].empty());
    // The check asserted 2·(t−1)/t·(rows·out + rows·in)·4 bytes; the model's two all-reduces at 4-byte words:
    CHECK(2.0 * x.all_reduce_bytes.value() * 2.0 ==
          Approx(2.0 * (t - 1.0) / t * (tp_check::rows * (tp_check::out + tp_check::in)) * 4.0));
  }
}

TEST_CASE("a group of ranks is a Communicator over its members, counting only what it sent", "[comm][parallel]") {
  std::vector<std::string> bad(6);
  threads_backend::run(6, [&](comm::thread_communicator& w) {
    const int r = w.rank();
    // Two groups of three, numbered backwards: group rank 0 is world rank 2 (or 5).
    std::vector<int> members = r < 3 ? std::vector<int>{2, 1, 0} : std::vector<int>{5, 4, 3};
    comm::group g(w, members);
    std::vector<int> v(9, r);
    comm::all_reduce(g, std::span<int>(v), comm::reduce_op::sum, comm::algorithm::ring);
    const int want = r < 3 ? 0 + 1 + 2 : 3 + 4 + 5;
    auto& b = bad[static_cast<std::size_t>(r)];
    for (const int x : v)
      if (x != want) b = "sum " + std::to_string(x);
    if (g.rank() != (r < 3 ? 2 - r : 5 - r)) b += " rank";
    if (g.world_rank(0) != (r < 3 ? 2 : 5)) b += " world_rank";
    if (g.bytes_sent() != 2 * 2 * 3 * sizeof(int)) b += " bytes " + std::to_string(g.bytes_sent());
  });
  CHECK(bad == std::vector<std::string>(6));
  threads_backend::run(2, [&](comm::thread_communicator& w) {
    if (w.rank() != 0) return;
    CHECK_THROWS_WITH(comm::group(w, {1}), Catch::Contains("members") && Catch::Contains("rank 0 is not a member"));
    CHECK_THROWS_WITH(comm::group(w, {0, 0}), Catch::Contains("listed twice"));
    CHECK_THROWS_WITH(comm::group(w, {0, 2}), Catch::Contains("0 to 1"));
  });
}

TEST_CASE("tensor parallelism refuses a degree that does not divide the layer, naming it", "[parallel][tensor]") {
  CHECK_THROWS_WITH(parallel::column_parallel_linear(12, 10, 4, 0),
                    Catch::Contains("out") && Catch::Contains("10 does not split into 4"));
  CHECK_THROWS_WITH(parallel::row_parallel_linear(10, 12, 4, 0), Catch::Contains("in") && Catch::Contains("Fix"));
  parallel::column_parallel_linear up(4, 8, 2, 1);
  CHECK_THROWS_WITH(up.load(std::vector<float>(31), std::vector<float>(8)),
                    Catch::Contains("w") && Catch::Contains("needs 32"));
}

}  // namespace parallel_tensor_parallel_test
