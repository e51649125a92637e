// A system figure far from every preset of its kind is reported with the nearest (plan/plausibility.hpp): the
// presets themselves are all plausible, a unit slip is caught, bits read as bytes too.
#include <catch2/catch.hpp>

#include <trinity/plan/plausibility.hpp>
#include <trinity/units/literals.hpp>

namespace plan_plausibility_test {

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("every system preset is plausible", "[plan]") {
  for (const auto name : plan::presets::names()) {
    INFO(name);
    CHECK(plan::implausible_figures(*plan::presets::find(name)).empty());
  }
}

TEST_CASE("a device rate typed in GFLOP/s for TFLOP/s is reported with the nearest preset", "[plan]") {
  auto s = plan::presets::dgx_h100();
  s.device.compute = flops_per_second{989e9};
  s.device.compute_by_precision.clear();
  const auto found = plan::implausible_figures(s);
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "device.compute");
  CHECK(found[0].message ==
        "989 GFLOP/s is more than 10x from every device preset's (the nearest: jetson-orin-nano, 10 TFLOP/s). Fix: "
        "check its unit");
  s.device.compute = flops_per_second{9.89e12};  // within 10x of the Jetson's: a small device, not a typo
  CHECK(plan::implausible_figures(s).empty());
}

TEST_CASE("a link rate in bits read as bytes is reported", "[plan]") {
  auto s = plan::presets::dgx_h100();
  REQUIRE(s.scale_out.has_value());
  s.scale_out->bandwidth = 400_GBps;  // an NDR port is 400 Gb/s, 50 GB/s
  const auto found = plan::implausible_figures(s);
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "scale_out.bandwidth");
  CHECK(found[0].message.find("is 8 times infiniband-400g's 50 GB/s") != std::string::npos);
  s.scale_out->bandwidth = 600_GBps;  // 6x an 800G port: fast, but within 10x of a preset and not 8x one
  CHECK(plan::implausible_figures(s).empty());
}

}  // namespace plan_plausibility_test
