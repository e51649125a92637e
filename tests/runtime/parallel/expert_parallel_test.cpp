// Expert parallelism's MoE layer: the top-k router against a worked example; the layer over 1 to 6 ranks (threads
// and the simulated fabric), forward and backward, against the same layer computed on one rank, bit for bit, with
// each rank's bytes the count expert_dispatch_bytes gives; and its gradients against central differences.
#include <catch2/catch.hpp>

#include "../comm/test_backends.hpp"
#include "expert_parallel_check.hpp"

#include <trinity/parallel/expert_parallel.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace parallel_expert_parallel_test {

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
  test_backends::check_every_rank<TestType>({1, 2, 3, 4, 5, 6}, [](auto& c) { return moe_check::run(c); });
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

TEMPLATE_TEST_CASE("the expert-parallel layer's backward gives the one-rank layer's gradients, bit for bit",
                   "[parallel][moe]", threads_backend, sim_backend) {
  test_backends::check_every_rank<TestType>({1, 2, 3, 4, 5, 6}, [](auto& c) { return moe_check::run_backward(c); });
}

TEMPLATE_TEST_CASE(
    "expert tensor parallelism: each expert split over a second group gives the one-rank layer's outputs and "
    "gradients to rounding, and sends the bytes expert_tensor_bytes counts",
    "[parallel][moe]", threads_backend, sim_backend) {
  // Two members a tensor group (the width, 10, splits 2 ways) beside 1 to 3 expert-parallel ranks, and the
  // whole width split 5 ways on one expert-parallel rank.
  test_backends::check_every_rank<TestType>({2, 4, 6}, [](auto& c) { return moe_check::tensor::run(c, 2); });
  test_backends::check_every_rank<TestType>({5}, [](auto& c) { return moe_check::tensor::run(c, 5); });
}

TEST_CASE("expert tensor parallelism refuses a width that does not split over its ranks", "[parallel][moe]") {
  comm::thread_world world(3, std::chrono::seconds(5));
  std::vector<std::string> errors(3);
  const parallel::moe_shape s{2, 4, 3, 1, 1.0};
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    comm::group one(c, {c.rank()});
    const auto r = parallel::route_top_k(std::vector<float>(3, 0.0f), 1, s);
    std::vector<float> x(2), y(2);
    parallel::moe_pass pass;
    try {
      parallel::moe_forward(one, c, s, std::span<const parallel::expert_weights>(), std::span<const float>(x), r,
                            std::span<float>(y), pass);
    } catch (const invalid_input& e) {
      errors[static_cast<std::size_t>(c.rank())] = e.what();
    }
  });
  for (const auto& e : errors)
    CHECK(e == "ffn_hidden: 4 does not split over 3 expert-tensor-parallel ranks; give a group that divides it");
}

TEST_CASE("the MoE layer's gradients are the loss's derivatives (central differences, one rank)", "[parallel][moe]") {
  // Loss = sum(y · v): dy = v. Small enough to difference every input, logit and weight.
  const parallel::moe_shape s{3, 4, 4, 2, 2.0};
  const std::size_t tokens = 3;
  std::vector<parallel::expert_weights> w;
  for (std::size_t e = 0; e < s.experts; ++e) {
    parallel::expert_weights x{std::vector<float>(12), std::vector<float>(12)};
    for (std::size_t i = 0; i < 12; ++i)
      x.w1[i] = static_cast<float>(std::sin(double(e * 12 + i) * 1.3) * 0.8),
      x.w2[i] = static_cast<float>(std::cos(double(e * 12 + i) * 0.7) * 0.8);
    w.push_back(x);
  }
  std::vector<float> x{0.3f, -0.7f, 0.9f, 0.5f, 0.1f, -0.4f, -0.2f, 0.8f, 0.6f};
  std::vector<float> logits{0.9f, 0.1f, -0.6f, 0.4f, -0.3f, 0.7f, 0.2f, -0.9f, 0.5f, -0.1f, 0.8f, -0.5f};
  const std::vector<float> v{1.0f, -0.5f, 0.25f, 0.75f, -1.0f, 0.5f, -0.25f, 0.6f, 0.3f};
  const auto loss = [&](const std::vector<float>& xs, const std::vector<float>& ls,
                        const std::vector<parallel::expert_weights>& ws) {
    comm::thread_world world(1);
    double out = 0;
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      std::vector<float> y(xs.size());
      parallel::moe_forward(c, s, std::span<const parallel::expert_weights>(ws), std::span<const float>(xs),
                            parallel::route_top_k(ls, tokens, s), std::span<float>(y));
      for (std::size_t i = 0; i < y.size(); ++i) out += double(y[i]) * v[i];
    });
    return out;
  };
  std::vector<float> dx(x.size()), dlogits(logits.size());
  std::vector<parallel::expert_weights> dw;
  for (const auto& e : w) dw.push_back({std::vector<float>(e.w1.size(), 0.0f), std::vector<float>(e.w2.size(), 0.0f)});
  comm::thread_world world(1);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    std::vector<float> y(x.size());
    parallel::moe_pass pass;
    parallel::moe_forward(c, s, std::span<const parallel::expert_weights>(w), std::span<const float>(x),
                          parallel::route_top_k(logits, tokens, s), std::span<float>(y), pass);
    parallel::moe_backward(c, s, std::span<const parallel::expert_weights>(w), pass, std::span<const float>(v),
                           std::span<float>(dx), std::span<parallel::expert_weights>(dw), std::span<float>(dlogits));
  });
  const float eps = 1e-3f;
  const auto central = [&](float& p, auto&& f) {
    const float keep = p;
    p = keep + eps;
    const double up = f();
    p = keep - eps;
    const double down = f();
    p = keep;
    return (up - down) / (2.0 * eps);
  };
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(dx[i] == Approx(central(x[i], [&] { return loss(x, logits, w); })).margin(2e-3));
  for (std::size_t i = 0; i < logits.size(); ++i)
    CHECK(dlogits[i] == Approx(central(logits[i], [&] { return loss(x, logits, w); })).margin(2e-3));
  for (std::size_t e = 0; e < s.experts; ++e)
    for (std::size_t i = 0; i < 12; ++i) {
      CHECK(dw[e].w1[i] == Approx(central(w[e].w1[i], [&] { return loss(x, logits, w); })).margin(2e-3));
      CHECK(dw[e].w2[i] == Approx(central(w[e].w2[i], [&] { return loss(x, logits, w); })).margin(2e-3));
    }
}

}  // namespace parallel_expert_parallel_test
