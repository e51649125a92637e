#include <catch2/catch.hpp>

#include <trinity/resources.hpp>
#include <trinity/units/literals.hpp>

namespace resources_resource_vector_test {

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

TEST_CASE("a price list turns work into time and energy", "[resources][price]") {
  const price_list p{1e15_FLOP / 1_s, joules_per_flop{1e-12}, 400_Gbps, 30_pJ_per_bit};
  const resource_vector work{1.2e10_FLOP, 100_GB, 10_GB, 0_J, 1_ms};
  const resource_vector r = priced(work, p);
  // 1.2e10 FLOP at 1e15 FLOP/s = 12 us; 100 GB at 50 GB/s = 2 s; serialised, on top of the 1 ms it had.
  CHECK(r.time.value() == Approx(1e-3 + 12e-6 + 2.0).epsilon(1e-15));
  // 1.2e10 FLOP x 1 pJ = 12 mJ; 100 GB x 240 pJ/B = 24 J.
  CHECK(r.energy.value() == Approx(0.012 + 24.0).epsilon(1e-15));
  CHECK(r.memory == 10_GB);
  CHECK(r.compute == work.compute);

  price_list overlapped = p;
  overlapped.overlap = true;
  CHECK(priced(work, overlapped).time.value() == Approx(1e-3 + 2.0).epsilon(1e-15));

  price_list broken = p;
  broken.link_rate = bytes_per_second{};
  CHECK_THROWS_WITH(priced(work, broken), "link_rate: must be positive and finite");
}

TEST_CASE("a priced trade says the time and energy it saves", "[resources][price]") {
  // The paper's cache on a device of 1e15 FLOP/s at 1 pJ per FLOP.
  priced_trade<resources::memory, resources::compute> cache{};
  cache.before.compute = 5e10_FLOP;
  cache.after.compute = 3.8e10_FLOP;
  cache.after.memory = 10_GB;
  const auto t = cache.priced({1e15_FLOP / 1_s, joules_per_flop{1e-12}, 400_Gbps, 30_pJ_per_bit});
  CHECK(t.time_saved().value() == Approx(12e-6).epsilon(1e-12));
  CHECK(t.energy_saved().value() == Approx(0.012).epsilon(1e-12));
  CHECK(t.saved() == 1.2e10_FLOP);  // the work stays as it was

  // Streaming a deficit costs time and energy on the link.
  priced_trade<resources::bandwidth, resources::memory> stream{};
  stream.before.memory = 400_GB;
  stream.after.memory = 200_GB;
  stream.after.bandwidth = 100_GB;
  const auto s = stream.priced({1e15_FLOP / 1_s, joules_per_flop{1e-12}, 400_Gbps, 30_pJ_per_bit});
  CHECK(s.time_saved() == -2_s);
  CHECK(s.energy_saved().value() == Approx(-24.0).epsilon(1e-12));
}

}  // namespace resources_resource_vector_test
