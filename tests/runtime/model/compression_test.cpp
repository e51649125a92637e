// The compress-or-send model against closed forms: the break-even link speed
// of a codec is where encode + decode time equals the transfer time it saves.

#include <catch2/catch.hpp>

#include <trinity/model/compression.hpp>
#include <trinity/units/literals.hpp>

#include <vector>

namespace model_compression_test {

using namespace trinity;
using namespace trinity::literals;
using model::compressor_cost;

namespace {
// Round numbers, so every expectation is arithmetic.
const std::vector<compressor_cost> costs{
    {"identity", 1.0, 10_GBps, 10_GBps, 0.0, true},
    {"int8", 4.0, 2_GBps, 8_GBps, 0.01, false},
    {"topk", 100.0, 1_GBps, 50_GBps, 0.9, false},
};
}  // namespace

TEST_CASE("predict is encode + latency + wire bytes over bandwidth + decode", "[model][compress]") {
  const auto t = model::predict(costs[1], 100_MB, {1_GBps, 10_us});
  REQUIRE(t.encode.value() == Approx(0.05));
  REQUIRE(t.transfer.value() == Approx(10e-6 + (25e6 + 56) / 1e9));
  REQUIRE(t.decode.value() == Approx(0.0125));
  REQUIRE(t.total().value() == Approx(0.05 + 10e-6 + 0.025000056 + 0.0125));
}

TEST_CASE("the baseline is the raw bytes: latency + bytes / bandwidth, no codec's copies", "[model][compress]") {
  // 100 MB at 400 Gbps is 2 ms on the link; the identity codec's two copies at 10 GB/s would add 20 ms.
  const model::link_model fast{50_GBps, 2_us};
  const auto c = model::choose(costs, 100_MB, fast, {.error = 1.0});
  REQUIRE_FALSE(c.compressed());
  REQUIRE(c.time.total().value() == Approx(2e-6 + 100e6 / 50e9));
  REQUIRE(c.raw.total().value() == Approx(0.002002));
  REQUIRE(c.verdicts[0].time.total().value() == Approx(0.01 + 0.002002 + 56 / 50e9 + 0.01));
  REQUIRE_THAT(c.why, Catch::Contains("no codec pays") && Catch::Contains("raw takes 2.002 ms"));
}

TEST_CASE("the chooser moves from heavy compression to none as the link gets faster", "[model][compress]") {
  const model::link_model slow{125_MBps, 2_us};  // 1 Gbps
  const model::link_model fast{50_GBps, 2_us};   // 400 Gbps
  REQUIRE(costs[*model::choose(costs, 100_MB, slow, {.error = 1.0}).index].name == "topk");
  REQUIRE_FALSE(model::choose(costs, 100_MB, fast, {.error = 1.0}).index);
  const auto c = model::choose(costs, 100_MB, fast);
  REQUIRE_THAT(c.why, Catch::Contains("no codec pays"));
  REQUIRE(c.verdicts.size() == 3);
}

TEST_CASE("the switch happens at the closed-form break-even bandwidth", "[model][compress]") {
  // raw vs int8: S/B  =  S/2G + S/8G + S/(4B) + h/B  =>  (3/4)/B = 0.625/G  =>  B = 1.2 GB/s
  // (the 56-byte header against 1 GB is too small to move it).
  const std::vector<compressor_cost> one{costs[1]};
  const double b_star = 0.75 / 0.625 * 1e9;
  REQUIRE(model::choose(one, 1_GB, {bytes_per_second{b_star * 0.99}, 0_s}).index == 0u);
  REQUIRE_FALSE(model::choose(one, 1_GB, {bytes_per_second{b_star * 1.01}, 0_s}).index);
}

TEST_CASE("budgets exclude candidates and say which budget did, the default is the planner's 0.01",
          "[model][compress]") {
  const model::link_model slow{125_MBps, 2_us};
  STATIC_REQUIRE(model::exchange_budget{}.error == 0.01);
  const auto by_default = model::choose(costs, 100_MB, slow);
  REQUIRE(costs[*by_default.index].name == "int8");  // topk's 0.9 is far over 0.01
  REQUIRE_THAT(by_default.verdicts[2].rejected, Catch::Contains("error 0.9 over the budget 0.01"));
  const auto by_error = model::choose(costs, 100_MB, slow, {.error = 0.05});
  REQUIRE(costs[*by_error.index].name == "int8");
  const auto lossless = model::choose(costs, 100_MB, slow, {.error = 0.0});
  REQUIRE_FALSE(lossless.index);  // identity's copies never beat the raw bytes
  const auto by_compute = model::choose(costs, 100_MB, slow, {.compute = 70_ms, .error = 1.0});
  REQUIRE(costs[*by_compute.index].name == "int8");  // topk needs 102 ms of encode + decode
  REQUIRE_THAT(by_compute.verdicts[2].rejected, Catch::Contains("over the compute budget"));
}

TEST_CASE("the chooser refuses bad costs and budgets by name", "[model][compress]") {
  std::vector<compressor_cost> bad = costs;
  bad[1].ratio = -2;
  REQUIRE_THROWS_WITH(model::choose(bad, 1_MB, {1_GBps, 0_s}), Catch::Contains("int8.ratio: must be positive"));
  REQUIRE_THROWS_WITH(model::choose(costs, 1_MB, {1_GBps, 0_s}, {.error = -1}), Catch::Contains("budget.error"));
  REQUIRE_FALSE(model::choose(std::vector<compressor_cost>{}, 1_MB, {1_GBps, 0_s}).index);
}

}  // namespace model_compression_test
