// Pipeline parallelism: the schedules as data, then the executor on the threads backend and the simulated
// fabric against the whole MLP (pipeline_check.hpp); tests/mpi runs the same body under mpirun.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"

#include "pipeline_check.hpp"

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm/thread_world.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/parallel/pipeline_schedule.hpp>
#include <trinity/units/literals.hpp>

#include <string>
#include <vector>

namespace parallel_pipeline_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;
using namespace trinity::literals;
using parallel::pipeline_pass;

TEST_CASE("pipeline schedules: 1F1B and the interleaved order, written out", "[parallel][pipeline]") {
  // p = 2, m = 3: rank 0 warms up with one forward, rank 1 with none.
  CHECK(parallel::one_f_one_b(2, 0, 3) ==
        std::vector<pipeline_pass>{
            {true, 0, 0}, {true, 0, 1}, {false, 0, 0}, {true, 0, 2}, {false, 0, 1}, {false, 0, 2}});
  CHECK(parallel::one_f_one_b(2, 1, 3) ==
        std::vector<pipeline_pass>{
            {true, 0, 0}, {false, 0, 0}, {true, 0, 1}, {false, 0, 1}, {true, 0, 2}, {false, 0, 2}});
  // p = 2, v = 2, m = 4 on rank 1: warm-up (v − 1)·p = 2 forwards (micro-batches 0, 1 of chunk 0), then in turn;
  // backwards start at the last chunk.
  CHECK(parallel::interleaved(2, 1, 4, 2) == std::vector<pipeline_pass>{{true, 0, 0},
                                                                        {true, 0, 1},
                                                                        {true, 1, 0},
                                                                        {false, 1, 0},
                                                                        {true, 1, 1},
                                                                        {false, 1, 1},
                                                                        {true, 0, 2},
                                                                        {false, 0, 0},
                                                                        {true, 0, 3},
                                                                        {false, 0, 1},
                                                                        {true, 1, 2},
                                                                        {false, 1, 2},
                                                                        {true, 1, 3},
                                                                        {false, 1, 3},
                                                                        {false, 0, 2},
                                                                        {false, 0, 3}});
  CHECK_THROWS_WITH(parallel::interleaved(4, 0, 6, 2),
                    Catch::Contains("micro_batches") && Catch::Contains("multiple of the 4"));
}

TEST_CASE("pipeline schedules: every rank's passes run, in its own order, for every shape", "[parallel][pipeline]") {
  for (std::size_t p = 1; p <= 6; ++p)
    for (std::size_t v = 1; v <= 3; ++v)
      for (std::size_t m = p; m <= 3 * p; m += (v == 1 ? 1 : p)) {
        const auto order = parallel::global_order(p, m, v);
        REQUIRE(order.size() == 2 * p * v * m);
        for (std::size_t r = 0; r < p; ++r) {
          std::vector<pipeline_pass> mine;
          for (const auto& x : order)
            if (x.rank == r) mine.push_back(x.pass);
          CHECK(mine == parallel::interleaved(p, r, m, v));
        }
      }
}

TEMPLATE_TEST_CASE("pipeline parallelism trains what DDP trains, sends and keeps what the model says",
                   "[parallel][pipeline]", threads_backend, sim_backend) {
  struct shape {
    std::size_t p, m, v;
  };
  for (const auto& [p, m, v] : {shape{4, 4, 1}, shape{4, 8, 1}, shape{4, 2, 1}, shape{4, 4, 2}, shape{4, 8, 2},
                                shape{2, 6, 4}, shape{8, 8, 1}, shape{2, 4, 2}}) {
    const int world = 8;
    std::vector<std::vector<std::string>> bad(world);
    TestType::run(world, [&](auto& c) { bad[static_cast<std::size_t>(c.rank())] = pp_check::run(c, p, m, v); });
    for (int r = 0; r < world; ++r) {
      INFO("p=" << p << ", m=" << m << ", v=" << v << " in a world of 8, rank " << r);
      CHECK(bad[static_cast<std::size_t>(r)] == std::vector<std::string>{});
    }
  }
}

TEST_CASE(
    "pipeline parallelism: a middle rank sends the step model's pipeline bytes, and rank 0 keeps its in-flight "
    "count",
    "[parallel][pipeline]") {
  // model::price counts pp_bytes = m·2·v·(the activation / t) for the binding stage, and rank 0's activations in
  // flight as model::pipeline_in_flight: min(p, m) stages, or interleaved min(m, p + (p − 1)/v), the counts
  // pipeline_check asserts against the mechanism.
  for (const std::size_t v : {std::size_t{1}, std::size_t{2}}) {
    const std::size_t p = 4, m = 8;
    model::training_job j;
    j.shape = {8, pp_check::width, pp_check::width, 1, 1, 8, false, false};
    j.sequence = pp_check::rows;
    j.global_batch = m;
    model::training_cluster c;
    c.peak = flops_per_second{1e15};
    c.memory_bandwidth = bytes_per_second{1e12};
    c.fast = c.slow = {seconds{1e-6}, bytes_per_second{1e11}};
    model::parallel_layout l;
    l.pp = p;
    l.vpp = v;
    const auto r = model::price(j, c, l);
    // 16-bit activations in the model, fp32 in the mechanism.
    CHECK(r.pp_bytes.value() * 2.0 == Approx(double(m * 2 * v * pp_check::rows * pp_check::width * 4)));
    CHECK(model::pipeline_in_flight(p, m, v) * double(v) == double(v == 1 ? p : p * v + p - 1));
  }
  // Fewer micro-batches than Korthikanti et al.'s p + (p − 1)/v: rank 0 keeps them all (with m = p interleaved,
  // every forward of its p·v chunks runs before the first backward).
  CHECK(model::pipeline_in_flight(4, 4, 2) == 4.0);
  CHECK(model::pipeline_in_flight(4, 2, 1) == 2.0);
  CHECK(model::pipeline_in_flight(4, 12, 2) == 5.5);
}

}  // namespace parallel_pipeline_test
