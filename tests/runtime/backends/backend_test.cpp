// One body for every backend (STYLE.md: tests run on every backend). CUDA
// joins the list when its target is built.
#include <catch2/catch.hpp>

#include <trinity/backends/cpu.hpp>
#include <trinity/backends/sim.hpp>
#include <trinity/concepts/backend.hpp>
#include <trinity/units/literals.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

using namespace trinity;
using namespace trinity::literals;

using enabled_backends = std::tuple<cpu::backend, sim::backend<tiers::host_ddr>, sim::backend<tiers::gb200_hbm3e>>;

TEMPLATE_LIST_TEST_CASE("a backend copies bytes exactly and its clock never runs backwards", "[backends]",
                        enabled_backends) {
  STATIC_REQUIRE(Backend<TestType>);
  TestType b;
  constexpr std::size_t n = 1 << 20;
  auto* src = static_cast<std::uint32_t*>(b.allocate(bytes{n * 4.0}, 64));
  auto* dst = static_cast<std::uint32_t*>(b.allocate(bytes{n * 4.0}, 64));
  REQUIRE(reinterpret_cast<std::uintptr_t>(src) % 64 == 0);
  std::iota(src, src + n, 7u);
  const seconds t0 = b.now();
  b.copy(dst, src, bytes{n * 4.0});
  const seconds t1 = b.now();
  CHECK(std::equal(src, src + n, dst));
  CHECK(t1 >= t0);
  b.copy(dst, src, 0_B);  // an empty copy is allowed and touches nothing
  CHECK(b.now() >= t1);
  b.deallocate(src, bytes{n * 4.0}, 64);
  b.deallocate(dst, bytes{n * 4.0}, 64);
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
