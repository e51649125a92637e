#include <catch2/catch.hpp>

#include <trinity/model/cross_entropy.hpp>

using namespace trinity;
using namespace trinity::model;

TEST_CASE("cross entropy: Megatron's fp32 loss moves 38 bytes a logit forward and 14 backward", "[model]") {
  const auto [f, b] = cross_entropy_time(1e9, bytes_per_second{2e12});
  CHECK(f.value() == Approx(38e9 / 2e12).epsilon(1e-15));
  CHECK(b.value() == Approx(14e9 / 2e12).epsilon(1e-15));
}
