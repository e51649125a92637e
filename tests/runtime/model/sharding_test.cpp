// model/sharding.hpp against the ZeRO paper's own figures (Rajbhandari et al.,
// SC'20, Figure 1 and Table 1): Ψ = 7.5B, K = 12, N_d = 64 gives 120, 31.4,
// 16.6 and 1.9 GB per device; N_d = 1024 gives 120, 30.1, 15.1 and 0.12 GB.
#include <catch2/catch.hpp>

#include <trinity/model/sharding.hpp>

namespace model_sharding_test {

using namespace trinity;

TEST_CASE("memory per rank reproduces the ZeRO paper's 7.5B-parameter figures", "[model][shard]") {
  const double psi = 7.5e9;
  const double gb = 1e9;
  CHECK(model::zero_memory_per_rank(psi, 64, 0).total().value() / gb == Approx(120.0));
  CHECK(model::zero_memory_per_rank(psi, 64, 1).total().value() / gb == Approx(31.4).margin(0.05));
  CHECK(model::zero_memory_per_rank(psi, 64, 2).total().value() / gb == Approx(16.6).margin(0.05));
  CHECK(model::zero_memory_per_rank(psi, 64, 3).total().value() / gb == Approx(1.9).margin(0.05));
  CHECK(model::zero_memory_per_rank(psi, 1024, 1).total().value() / gb == Approx(30.1).margin(0.05));
  CHECK(model::zero_memory_per_rank(psi, 1024, 2).total().value() / gb == Approx(15.1).margin(0.05));
  CHECK(model::zero_memory_per_rank(psi, 1024, 3).total().value() / gb == Approx(0.12).margin(0.005));
  // The closed forms: 16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N, 16Ψ/N.
  CHECK(model::zero_memory_per_rank(1.0, 8, 1).total().value() == Approx(4.0 + 12.0 / 8));
  CHECK(model::zero_memory_per_rank(1.0, 8, 2).total().value() == Approx(2.0 + 14.0 / 8));
  CHECK(model::zero_memory_per_rank(1.0, 8, 3).total().value() == Approx(16.0 / 8));
}

TEST_CASE("traffic per step is 2Ψ for DDP and stages 1 and 2, 3Ψ for stage 3, times (N-1)/N", "[model][shard]") {
  // In parameter-sized units (2 bytes each, fp16), as the paper counts.
  for (std::size_t n : {2u, 8u, 64u}) {
    const double share = static_cast<double>(n - 1) / static_cast<double>(n);
    for (int stage : {0, 1, 2}) CHECK(model::zero_traffic_per_step(1e9, n, stage).value() / 2.0 == Approx(2e9 * share));
    CHECK(model::zero_traffic_per_step(1e9, n, 3).value() / 2.0 == Approx(3e9 * share));
  }
  CHECK(model::zero_traffic_per_step(1e9, 1, 3).value() == 0.0);
  // Where gradients and parameters differ in width, DDP moves gradients only; ZeRO gathers parameters.
  const model::state_bytes wide_grads{2, 4, 12};
  CHECK(model::zero_traffic_per_step(1.0, 2, 0, wide_grads).value() == Approx(0.5 * 2 * 4));
  CHECK(model::zero_traffic_per_step(1.0, 2, 2, wide_grads).value() == Approx(0.5 * (4 + 2)));
  CHECK(model::zero_traffic_per_step(1.0, 2, 3, wide_grads).value() == Approx(0.5 * (4 + 2 * 2)));
}

TEST_CASE("offload moves optimizer states off the device and costs a shard down and up per step", "[model][shard]") {
  const auto m = model::zero_memory_per_rank(1e9, 4, 2, model::mixed_precision_adam, true);
  CHECK(m.optimizer_states.value() == 0.0);
  CHECK(m.offloaded.value() == Approx(12e9 / 4));
  CHECK(m.total().value() == Approx(2e9 + 2e9 / 4));
  CHECK(model::offload_traffic_per_step(1e9, 4, 2).value() == Approx(1e9 / 4 * 4));
  CHECK(model::offload_traffic_per_step(1e9, 4, 2, model::mixed_precision_adam, false).value() == 0.0);
}

TEST_CASE("the sharding model refuses impossible inputs by name", "[model][shard]") {
  CHECK_THROWS_WITH(model::zero_memory_per_rank(1e9, 0, 1), Catch::Contains("ranks"));
  CHECK_THROWS_WITH(model::zero_memory_per_rank(1e9, 4, 4), Catch::Contains("stage"));
  CHECK_THROWS_WITH(model::zero_memory_per_rank(-1.0, 4, 1), Catch::Contains("parameters"));
}

}  // namespace model_sharding_test
