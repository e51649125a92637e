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

TEST_CASE("tensor parallelism: a pair without biases computes what one with zero biases does, to the bit",
          "[parallel][tensor]") {
  // A part with no b (a mixture's shared experts, Megatron-Core's --disable-bias-linear) takes its output count
  // from W; its forward adds nothing, its backward touches no db. The same arithmetic as zero biases, so equal to
  // the bit, on sequence-parallel tokens as on all of them.
  using tp_check::hidden, tp_check::in, tp_check::out, tp_check::rows;
  for (const auto held : {parallel::tokens::all, parallel::tokens::sequence_parallel})
    threads_backend::run(2, [&](auto& w) {
      const int t = 2, tr = w.rank();
      const std::size_t mine = held == parallel::tokens::all ? rows : rows / 2, h = hidden / 2;
      const auto w1 = tp_check::values(1, hidden * in), w2 = tp_check::values(3, out * hidden);
      const auto x = tp_check::values(5 + static_cast<std::uint64_t>(tr), mine * in);
      const auto dy = tp_check::values(7 + static_cast<std::uint64_t>(tr), mine * out);
      const std::vector<float> w1_mine(
          w1.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(tr) * h * in),
          w1.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(tr) + 1) * h * in));
      std::vector<float> w2_mine;
      for (std::size_t o = 0; o < out; ++o)
        for (std::size_t j = 0; j < h; ++j) w2_mine.push_back(w2[o * hidden + static_cast<std::size_t>(tr) * h + j]);
      const std::vector<float> b1(h, 0.0f), b2(out, 0.0f);
      // Both pairs' outputs, dx and weight gradients: with zero biases, then with none.
      std::vector<std::vector<float>> got[2];
      for (const bool biased : {true, false}) {
        const parallel::linear_part up{w1_mine, biased ? std::span<const float>(b1) : std::span<const float>()};
        const parallel::linear_part down{w2_mine, biased ? std::span<const float>(b2) : std::span<const float>()};
        std::vector<float> whole, z(rows * h), y(mine * out), dz(rows * h), dx(mine * in), dw1(h * in), dw2(out * h),
            db1(biased ? h : 0), db2(biased ? out : 0);
        comm::group tp(w, {0, 1});
        parallel::column_forward(tp, up, x, whole, z, rows, in, held);
        parallel::row_forward(tp, down, z, y, rows, h, held);
        parallel::row_backward(tp, down, z, dy, {dw2, db2}, dz, rows, h, held);
        parallel::column_backward(tp, up, whole, dz, {dw1, db1}, dx, rows, in, held);
        got[biased ? 0 : 1] = {y, dx, dw1, dw2};
        CHECK(tp.bytes_sent() == 2 * (t - 1) * (rows * out + rows * in) * 4 / t);
      }
      CHECK(got[0] == got[1]);
    });
}

TEST_CASE("tensor parallelism refuses a degree that does not divide the layer, naming it", "[parallel][tensor]") {
  CHECK_THROWS_WITH(parallel::column_parallel_linear(12, 10, 4, 0),
                    Catch::Contains("out") && Catch::Contains("10 does not split into 4"));
  CHECK_THROWS_WITH(parallel::row_parallel_linear(10, 12, 4, 0), Catch::Contains("in") && Catch::Contains("Fix"));
  parallel::column_parallel_linear up(4, 8, 2, 1);
  CHECK_THROWS_WITH(up.load(std::vector<float>(31), std::vector<float>(8)),
                    Catch::Contains("w") && Catch::Contains("needs 32"));
  // Without b, W's values are whole rows of the inputs.
  std::vector<float> whole, y(8);
  comm::thread_world one(1);
  comm::run_ranks(one, [&](auto& c) {
    CHECK_THROWS_WITH(parallel::column_forward(c, parallel::linear_part{std::vector<float>(10), {}},
                                               std::vector<float>(4), whole, y, 1, 4),
                      Catch::Contains("w") && Catch::Contains("a whole number of rows"));
  });
}

}  // namespace parallel_tensor_parallel_test
