// The compress-or-send model against closed forms: the break-even link speed
// of a codec is where encode + decode time equals the transfer time it saves.

#include <catch2/catch.hpp>

#include <trinity/model/compression.hpp>
#include <trinity/units/literals.hpp>

#include <vector>

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

TEST_CASE("the chooser moves from heavy compression to none as the link gets faster", "[model][compress]") {
  const model::link_model slow{125_MBps, 2_us};    // 1 Gbps
  const model::link_model fast{50_GBps, 2_us};     // 400 Gbps
  REQUIRE(costs[model::choose(costs, 100_MB, slow).index].name == "topk");
  REQUIRE(costs[model::choose(costs, 100_MB, fast).index].name == "identity");
  const auto c = model::choose(costs, 100_MB, fast);
  REQUIRE_THAT(c.why, Catch::Contains("no codec pays"));
  REQUIRE(c.verdicts.size() == 3);
}

TEST_CASE("the switch happens at the closed-form break-even bandwidth", "[model][compress]") {
  // identity vs int8: 2·S/10G + S/B  =  S/2G + S/8G + S/(4B)  =>  (3/4)/B = 0.625/G - 0.2/G  =>  B = 1.7647 GB/s
  // (headers and latency are equal on both sides up to 56 bytes, too small to move it).
  const std::vector<compressor_cost> two{costs[0], costs[1]};
  const double b_star = 0.75 / (0.625 - 0.2) * 1e9;
  REQUIRE(two[model::choose(two, 1_GB, {bytes_per_second{b_star * 0.99}, 0_s}).index].name == "int8");
  REQUIRE(two[model::choose(two, 1_GB, {bytes_per_second{b_star * 1.01}, 0_s}).index].name == "identity");
}

TEST_CASE("budgets exclude candidates and say which budget did", "[model][compress]") {
  const model::link_model slow{125_MBps, 2_us};
  const auto by_error = model::choose(costs, 100_MB, slow, {.error = 0.05});
  REQUIRE(costs[by_error.index].name == "int8");
  REQUIRE_THAT(by_error.verdicts[2].rejected, Catch::Contains("error 0.9") && Catch::Contains("budget 0.05"));
  const auto lossless = model::choose(costs, 100_MB, slow, {.error = 0.0});
  REQUIRE(costs[lossless.index].name == "identity");
  const auto by_compute = model::choose(costs, 100_MB, slow, {.compute = 70_ms});
  REQUIRE(costs[by_compute.index].name == "int8");  // topk needs 102 ms of encode + decode
  REQUIRE_THAT(by_compute.verdicts[2].rejected, Catch::Contains("over the compute budget"));
}

TEST_CASE("the chooser refuses candidates without an uncompressed baseline, and bad costs by name", "[model][compress]") {
  const std::vector<compressor_cost> no_identity{costs[1]};
  REQUIRE_THROWS_WITH(model::choose(no_identity, 1_MB, {1_GBps, 0_s}), Catch::Contains("candidates: need an uncompressed option"));
  std::vector<compressor_cost> bad = costs;
  bad[1].ratio = -2;
  REQUIRE_THROWS_WITH(model::choose(bad, 1_MB, {1_GBps, 0_s}), Catch::Contains("int8.ratio: must be positive"));
}
