#include <catch2/catch.hpp>

#include <trinity/model/cross_entropy.hpp>

namespace model_cross_entropy_test {

using namespace trinity;
using namespace trinity::model;

TEST_CASE("cross entropy: Megatron's fp32 loss moves 38 bytes a logit forward and 14 backward", "[model]") {
  const auto [f, b] = cross_entropy_time(1e9, bytes_per_second{2e12});
  CHECK(f.value() == Approx(38e9 / 2e12).epsilon(1e-15));
  CHECK(b.value() == Approx(14e9 / 2e12).epsilon(1e-15));
}

TEST_CASE("cross entropy: Transformer Engine's fused loss moves 6 bytes a logit forward and 4 backward, and keeps 2",
          "[model]") {
  const auto [f, b] = cross_entropy_time(1e9, bytes_per_second{2e12}, loss_kernel::transformer_engine);
  CHECK(f.value() == Approx(6e9 / 2e12).epsilon(1e-15));
  CHECK(b.value() == Approx(4e9 / 2e12).epsilon(1e-15));
  CHECK(bytes_of(loss_kernel::transformer_engine).kept == 2.0);
  CHECK(bytes_of(loss_kernel::native).kept == 4.0);  // the fp32 softmax
}

TEST_CASE("cross entropy: the kernels go by Megatron-Core's names for them, both ways", "[model]") {
  for (const auto k : {loss_kernel::native, loss_kernel::transformer_engine})
    CHECK(loss_kernel_named(to_string(k)) == k);
  CHECK(to_string(loss_kernel::native) == "native");
  CHECK(to_string(loss_kernel::transformer_engine) == "te");
}

}  // namespace model_cross_entropy_test
