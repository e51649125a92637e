// The MoE layer with its exchange deduplicated by node (DeepEP's dispatch): over 1 to 6 ranks in nodes of every
// size that divides them (threads and the simulated fabric), forward and backward against the one-rank layer to
// rounding, each rank's bytes the count node_dispatch_bytes gives for the records every rank's routing implies.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"
#include "node_dispatch_check.hpp"

#include <trinity/parallel/node_dispatch.hpp>

#include <string>
#include <vector>

namespace parallel_node_dispatch_test {

using namespace trinity;
using test_backends::sim_backend;
using test_backends::threads_backend;

TEMPLATE_TEST_CASE(
    "the node-deduplicated MoE layer gives the one-rank layer's outputs and gradients, and sends the bytes "
    "node_dispatch_bytes counts",
    "[parallel][moe]", threads_backend, sim_backend) {
  test_backends::check_every_rank<TestType>({1, 2, 3, 5}, [](auto& c) { return node_dispatch_check::run(c, 1); });
  test_backends::check_every_rank<TestType>(
      {2, 3}, [](auto& c) { return node_dispatch_check::run(c, static_cast<std::size_t>(c.size())); });
  test_backends::check_every_rank<TestType>({4, 6}, [](auto& c) { return node_dispatch_check::run(c, 2); });
  test_backends::check_every_rank<TestType>({6}, [](auto& c) { return node_dispatch_check::run(c, 3); });
}

TEST_CASE(
    "the node-deduplicated dispatch sends a token across once a node and to a rank once, where the all-to-all "
    "sends a row a choice",
    "[parallel][moe]") {
  // Six ranks in three nodes of two: the records rank 0 sends against the rows the all-to-all sends off the rank.
  const std::size_t n = 6, g = 2, per = node_dispatch_check::shape.experts / n, k = node_dispatch_check::shape.top_k;
  const auto r = node_dispatch_check::routing_of(0);
  std::size_t rows = 0;
  for (std::size_t a = 0; a < r.expert.size(); ++a) rows += r.kept[a] && r.expert[a] / per != 0 ? 1u : 0u;
  const auto records = node_dispatch_check::count_records(0, n, g);
  INFO("rows " << rows << ", records " << records.sent);
  CHECK(rows > 0);
  CHECK(records.sent < rows);
  CHECK(k == 4);
}

TEST_CASE("the node-deduplicated MoE layer refuses nodes that do not split its ranks", "[parallel][moe]") {
  comm::thread_world world(4, std::chrono::seconds(5));
  std::vector<std::string> errors(4);
  const parallel::moe_shape s{2, 2, 4, 1, 1.0};
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    const auto r = parallel::route_top_k(std::vector<float>(4, 0.0f), 1, s);
    std::vector<float> x(2), y(2);
    std::vector<parallel::expert_weights> local(1);
    parallel::node_pass pass;
    try {
      parallel::moe_forward_by_node(c, 3, s, std::span<const parallel::expert_weights>(local),
                                    std::span<const float>(x), r, std::span<float>(y), pass);
    } catch (const invalid_input& e) {
      errors[static_cast<std::size_t>(c.rank())] = e.what();
    }
  });
  for (const auto& e : errors)
    CHECK(e == "node_ranks: 3 ranks a node do not split the group's 4; give a divisor of it");
}

}  // namespace parallel_node_dispatch_test
