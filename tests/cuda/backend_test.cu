// The CUDA backend runs the same body as the CPU and simulated backends. It
// builds wherever nvcc is, and runs where a GPU is: without one the binary
// exits 77, which CTest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <trinity/backends/cuda/backend.cuh>
#include <trinity/units/literals.hpp>

#include "../runtime/backends/backend_laws.hpp"

#include <cstdio>

using namespace trinity::literals;

TEST_CASE("the CUDA backend moves bytes in, around and out unchanged, and its clock never runs backwards",
          "[backends][cuda]") {
  STATIC_REQUIRE(trinity::Backend<trinity::cuda::backend<>>);
  trinity::cuda::backend<> b;
  trinity::testing::check_round_trip(b);
}

TEST_CASE("the CUDA backend refuses what cudaMalloc cannot do, with the reason", "[backends][cuda]") {
  trinity::cuda::backend<> b;
  trinity::testing::check_refuses_impossible_sizes(b);
  CHECK_THROWS_WITH(b.allocate(1_MB, 4096),
                    "alignment: must be a power of two no larger than 256, cudaMalloc's guarantee");
  CHECK_THROWS_AS(b.allocate(trinity::bytes{1e18}), trinity::cuda::error);
  // The failed allocation leaves the backend usable.
  void* p = b.allocate(1_MB);
  b.deallocate(p, 1_MB);
}

int main(int argc, char** argv) {
  if (trinity::cuda::device_count() == 0) {
    std::puts("no CUDA device: the CUDA backend tests are skipped");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
