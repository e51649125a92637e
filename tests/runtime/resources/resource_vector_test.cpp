#include <catch2/catch.hpp>

#include <trinity/resources.hpp>
#include <trinity/units/literals.hpp>

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("resource vectors add, subtract and scale component by component", "[resources]") {
  const resource_vector a{1_TFLOP, 2_GB, 3_GB, 4_J, 5_s};
  const resource_vector b{1_TFLOP, 1_GB, 1_GB, 1_J, 1_s};
  const resource_vector sum = a + b;
  CHECK(sum == resource_vector{2_TFLOP, 3_GB, 4_GB, 5_J, 6_s});
  CHECK(sum - b == a);
  CHECK(2.0 * b == resource_vector{2_TFLOP, 2_GB, 2_GB, 2_J, 2_s});
}

TEST_CASE("pareto dominance needs no worse everywhere and better somewhere", "[resources]") {
  const resource_vector base{1_TFLOP, 1_GB, 1_GB, 1_J, 1_s};
  resource_vector cheaper = base;
  cheaper.time = 0.5_s;
  CHECK(dominates(cheaper, base));
  CHECK_FALSE(dominates(base, cheaper));
  CHECK_FALSE(dominates(base, base));
  resource_vector trade = cheaper;
  trade.memory = 2_GB;  // faster but bigger: neither dominates
  CHECK_FALSE(dominates(trade, base));
  CHECK_FALSE(dominates(base, trade));
}

TEST_CASE("a priced trade reports what it spends, what it saves and the rate", "[resources]") {
  priced_trade<resources::memory, resources::compute> t{};
  t.before.compute = 5e10_FLOP;
  t.after.compute = 3.8e10_FLOP;
  t.after.memory = 10_GB;
  CHECK(t.spent() == 10_GB);
  CHECK(t.saved() == 1.2e10_FLOP);
  CHECK(t.rate().value() == Approx(1.2));  // FLOP per byte = GFLOP per GB
  CHECK(t.pays());
  t.after.compute = 6e10_FLOP;
  CHECK_FALSE(t.pays());
  CHECK(resources::compute::of(t.after) == 6e10_FLOP);
  CHECK(resources::memory::name == "memory");
}
