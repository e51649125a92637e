#include <catch2/catch.hpp>

#include <trinity/model/deficit.hpp>
#include <trinity/units/literals.hpp>

namespace model_deficit_test {

using namespace trinity;
using namespace trinity::literals;
namespace m = trinity::model;

TEST_CASE("the paper's deficit: 400 GB on two 100 GB devices misses 200 GB", "[model][deficit]") {
  CHECK(m::memory_deficit(400_GB, 100_GB, 2) == 200_GB);
  CHECK(m::communication_cost(0_B, 0.0, 0.5, 200_GB) == 100_GB);
}

TEST_CASE("the deficit is zero once the devices hold everything", "[model][deficit]") {
  CHECK(m::memory_deficit(400_GB, 100_GB, 4) == 0_B);
  CHECK(m::memory_deficit(400_GB, 100_GB, 5) == 0_B);
  CHECK(m::memory_deficit(400_GB, 100_GB, 3) == 100_GB);
  CHECK(m::devices_to_fit(400_GB, 100_GB) == 4);
  CHECK(m::devices_to_fit(401_GB, 100_GB) == 5);
  CHECK(m::devices_to_fit(0_GB, 100_GB) == 1);
}

TEST_CASE("C_comm adds the all-reduce of the synchronized state", "[model][deficit]") {
  // Ring all-reduce over 8 ranks sends 2·7/8 of the state per rank.
  CHECK(m::ring_allreduce_factor(8) == 1.75);
  CHECK(m::ring_allreduce_factor(1) == 0.0);
  CHECK(m::communication_cost(16_GB, m::ring_allreduce_factor(8), 0.5, 200_GB) == 128_GB);
}

TEST_CASE("streaming the deficit is a priced trade of bandwidth for memory", "[model][deficit]") {
  const m::bandwidth_for_memory policy{0.5, 16_GB, 1.0};
  const auto t = policy.price({400_GB, 100_GB, 2});
  CHECK(t.before.bandwidth == 16_GB);
  CHECK(t.after.bandwidth == 116_GB);
  CHECK(t.spent() == 100_GB);
  CHECK(t.saved() == 200_GB);
  CHECK(t.rate() == 2.0);
}

TEST_CASE("impossible deficit inputs name their field", "[model][deficit]") {
  CHECK_THROWS_WITH(m::memory_deficit(-1_GB, 100_GB, 2), "total: must be finite and not negative");
  CHECK_THROWS_WITH(m::memory_deficit(400_GB, 0_GB, 2), "avail: must be positive and finite");
  CHECK_THROWS_WITH(m::memory_deficit(400_GB, 100_GB, 0), "devices: must be at least 1");
  CHECK_THROWS_WITH(m::communication_cost(0_B, 0.0, -0.5, 1_GB), "k: must be finite and not negative");
}

}  // namespace model_deficit_test
