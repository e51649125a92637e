// One body for every backend (STYLE.md: tests run on every backend). CUDA
// joins the list when its target is built.
#include <catch2/catch.hpp>

#include "backend_laws.hpp"

#include <trinity/backends/cpu.hpp>
#include <trinity/backends/sim.hpp>
#include <trinity/backends/backend.hpp>
#include <trinity/units/literals.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

namespace backends_backend_test {

using namespace trinity;
using namespace trinity::literals;

// CUDA runs the same body in tests/cuda (its own nvcc-built binary).
using enabled_backends = std::tuple<cpu::backend, sim::backend<tiers::host_ddr>, sim::backend<tiers::gb200_hbm3e>>;

TEMPLATE_LIST_TEST_CASE("a backend moves bytes in, around and out unchanged, and its clock never runs backwards",
                        "[backends]", enabled_backends) {
  STATIC_REQUIRE(Backend<TestType>);
  TestType b;
  trinity::testing::check_round_trip(b);
}

TEMPLATE_LIST_TEST_CASE("a backend refuses sizes it cannot count, by name, and moves nothing", "[backends]",
                        enabled_backends) {
  TestType b;
  trinity::testing::check_refuses_impossible_sizes(b);
}

TEMPLATE_TEST_CASE("the simulated clock advances by the tier's α-β cost of a copy", "[backends][sim]",
                   sim::backend<tiers::host_ddr>, sim::backend<tiers::gb200_hbm3e>) {
  using tier = typename TestType::memory_tier;
  TestType b;
  std::vector<char> src(1 << 16, 'x'), dst(1 << 16);
  const bytes n{static_cast<double>(src.size())};
  b.copy(dst.data(), src.data(), n);
  // The law every transfer obeys: at least size / bandwidth.
  CHECK(b.now() >= n / tier::descriptor.bandwidth);
  CHECK(b.now() == tier::descriptor.latency + 2.0 * n / tier::descriptor.bandwidth);
  // Upload and download pay the host-to-tier route (PCIe for a GPU tier).
  const seconds before = b.now();
  b.upload(dst.data(), src.data(), n);
  const double route = link_traits<tiers::host_ddr, tier>::transfer_time(n).value();
  CHECK((b.now() - before).value() == Approx(route).epsilon(1e-12));
  b.download(dst.data(), src.data(), n);
  CHECK((b.now() - before).value() == Approx(2 * route).epsilon(1e-12));
  b = TestType{};
  b.copy(dst.data(), src.data(), n);
  b.advance(1_ms);
  CHECK(b.now() == tier::descriptor.latency + 2.0 * n / tier::descriptor.bandwidth + 1_ms);
}

TEST_CASE("the simulated tier refuses to exceed its capacity", "[backends][sim]") {
  sim::backend<tiers::gb200_hbm3e> b;
  void* p = b.allocate(1_MB, 64);
  CHECK(b.resident() == 1_MB);
  CHECK_THROWS_AS(b.allocate(192_GB, 64), sim::capacity_exceeded);
  CHECK(b.resident() == 1_MB);  // the refused allocation left nothing behind
  b.deallocate(p, 1_MB, 64);
  CHECK(b.resident() == 0_B);
}

}  // namespace backends_backend_test
