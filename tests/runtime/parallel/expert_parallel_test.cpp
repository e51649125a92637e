// Expert parallelism's MoE layer, forward: the top-k router against a worked example, and the layer over 1, 2 and
// 4 ranks (threads and the simulated fabric) against the same layer computed on one rank, bit for bit, with each
// rank's bytes the count expert_dispatch_bytes gives.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"
#include "expert_parallel_check.hpp"

#include <trinity/parallel/expert_parallel.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;

TEST_CASE("the top-k router: the k best experts, softmax over them, first come within an expert's capacity",
          "[parallel][moe]") {
  const parallel::moe_shape s{4, 4, 4, 2, 1.0};    // 3 tokens x 2 choices over 4 experts: capacity ceil(6/4) = 2
  const std::vector<float> logits{2, 1,  0, -1,    // token 0: experts 0 then 1
                                  3, -1, 0, 2,     // token 1: experts 0 then 3
                                  5, 1,  1, 0.5};  // token 2: expert 0 (full: dropped), then 1 (the tie's lower)
  const auto r = parallel::route_top_k(logits, 3, s);
  CHECK(r.capacity == 2);
  CHECK(r.expert == std::vector<std::uint32_t>{0, 1, 0, 3, 0, 1});
  CHECK(r.kept == std::vector<std::uint8_t>{1, 1, 1, 1, 0, 1});
  CHECK(r.dropped == 1);
  const double e1 = std::exp(-1.0);
  CHECK(r.weight[0] == Approx(1 / (1 + e1)).epsilon(1e-7));
  CHECK(r.weight[1] == Approx(e1 / (1 + e1)).epsilon(1e-7));
  CHECK(r.weight[4] == Approx(1 / (1 + std::exp(-4.0))).epsilon(1e-7));  // the dropped choice keeps its weight
  // A capacity factor of 2 drops nothing.
  auto roomy = s;
  roomy.capacity_factor = 2;
  CHECK(parallel::route_top_k(logits, 3, roomy).dropped == 0);
  CHECK_THROWS_WITH(parallel::route_top_k(logits, 2, s), Catch::StartsWith("logits: has 12 values"));
  auto bad = s;
  bad.top_k = 5;
  CHECK_THROWS_WITH(parallel::route_top_k(logits, 3, bad), "top_k: must be 1 to the experts (4)");
}

TEMPLATE_TEST_CASE(
    "the expert-parallel layer gives each token the one-rank layer's output, and sends the bytes "
    "expert_dispatch_bytes counts",
    "[parallel][moe]", threads_backend, sim_backend) {
  for (const int n : {1, 2, 3, 4, 5, 6}) {
    std::vector<std::vector<std::string>> bad(static_cast<std::size_t>(n));
    TestType::run(n, [&](auto& c) { bad[static_cast<std::size_t>(c.rank())] = moe_check::run(c); });
    for (int r = 0; r < n; ++r) {
      INFO(n << " ranks, rank " << r);
      CHECK(bad[static_cast<std::size_t>(r)] == std::vector<std::string>{});
    }
  }
}

TEST_CASE("the expert-parallel layer refuses experts that do not split over its ranks", "[parallel][moe]") {
  comm::thread_world world(4, std::chrono::seconds(5));
  std::vector<std::string> errors(4);
  const parallel::moe_shape s{2, 2, 6, 1, 1.0};
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    const auto r = parallel::route_top_k(std::vector<float>(6, 0.0f), 1, s);
    std::vector<float> x(2), y(2);
    try {
      parallel::moe_forward(c, s, std::span<const parallel::expert_weights>(), std::span<const float>(x), r,
                            std::span<float>(y));
    } catch (const invalid_input& e) {
      errors[static_cast<std::size_t>(c.rank())] = e.what();
    }
  });
  for (const auto& e : errors)
    CHECK(e == "experts: 6 do not split over 4 ranks; give an expert-parallel group that divides them");
}
