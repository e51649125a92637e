// A plan on the simulated fabric against the planner's α-β prediction: on InfiniBand, whose messages the
// simulator frames at no cost, the fabric's line rate (50 GB/s) beside the planner's NCCL rate (47 GB/s); 1/16
// slower on NVLink, whose packets carry a 16-byte header per 256 bytes of payload.
#include <catch2/catch.hpp>

#include <trinity/plan.hpp>

namespace plan_simulate_test {

using namespace trinity;

TEST_CASE("the planner's collectives, simulated on the preset fabrics, land where the α-β formula and flits say",
          "[plan][fabric]") {
  const auto w = plan::presets::llm_7b();
  {
    const auto s = plan::presets::h100_infiniband();
    const auto r = plan::plan_training(s, w, plan::default_codecs());
    const auto sim = plan::simulate(s, w, r);
    REQUIRE(sim.size() == (r.chosen().plan.stage == 0 ? 1u : 2u));
    // The fabric carries InfiniBand's line; the planner prices what NCCL moves over it.
    const double line = s.interconnect.collective_rate().value() / s.interconnect.bandwidth.value();
    REQUIRE(line == Approx(47.0 / 50.0));
    for (const auto& x : sim) CHECK(x.ratio() == Approx(line).epsilon(0.01));
  }
  {
    const auto s = plan::presets::gb200_nvl72_cxl();
    const auto r = plan::plan_training(s, w, plan::default_codecs());
    for (const auto& x : plan::simulate(s, w, r)) {
      INFO(x.what);
      CHECK(x.ratio() > 1.0);
      CHECK(x.ratio() == Approx(272.0 / 256.0).epsilon(0.01));
      CHECK(x.events > 0);
    }
  }
}

TEST_CASE("a cached latent read crosses the fabric only when the cache lives on it", "[plan][fabric]") {
  const auto d = plan::presets::diffusion_dit_12b();
  const auto gb = plan::presets::gb200_nvl72_cxl();
  const auto sim = plan::simulate(gb, d, plan::plan_diffusion(gb, d));
  REQUIRE(sim.size() == 1);
  CHECK(sim[0].ratio() > 1.0);  // GPU -> C2C -> Grace -> CXL switch -> tray: more hops than the tier's figure
  CHECK(sim[0].ratio() < 1.2);
  const auto h = plan::presets::h100_infiniband();
  CHECK(plan::simulate(h, d, plan::plan_diffusion(h, d)).empty());  // host DDR is not on the InfiniBand fabric
  auto mine = plan::presets::h100_infiniband();
  mine.name = "mine";
  // Renamed, it still names its fabric and simulates the same; without one it is refused, with the fix.
  const auto same = plan::simulate(mine, plan::presets::llm_7b(),
                                   plan::plan_training(mine, plan::presets::llm_7b(), plan::default_codecs()));
  CHECK(same.size() == plan::simulate(h, plan::presets::llm_7b(),
                                      plan::plan_training(h, plan::presets::llm_7b(), plan::default_codecs()))
                           .size());
  mine.fabric.clear();
  CHECK_THROWS_WITH(plan::simulate(mine, plan::presets::llm_7b(),
                                   plan::plan_training(mine, plan::presets::llm_7b(), plan::default_codecs())),
                    Catch::StartsWith("system: mine names no simulated fabric") && Catch::Contains("Fix"));
}

TEST_CASE("plan::simulate runs a plan on the user's own topology, bound with plan::bind", "[plan][fabric]") {
  const auto s = plan::presets::h100_infiniband();
  const auto w = plan::presets::llm_7b();
  const auto r = plan::plan_training(s, w, plan::default_codecs_for(s));
  const std::size_t n = w.ranks(s);
  // The preset's own fabric, bound by hand, simulates exactly as the system's named fabric does.
  const auto named = plan::simulate(s, w, r);
  const auto bound =
      plan::simulate(s, w, r, plan::bind(fabric::presets::rdma_cluster(static_cast<int>(n), 1), n, {}, "rdma-cluster"));
  REQUIRE(bound.size() == named.size());
  for (std::size_t i = 0; i < named.size(); ++i) CHECK(bound[i].simulated.value() == named[i].simulated.value());
  // A fabric of the user's making with links a third as wide (PCIe 5 x4, 16 GB/s, against 400 Gb/s) costs more than the
  // plan's α-β prediction says.
  fabric::topology t;
  const auto sw = t.add_switch("tor", link_family::pcie);
  for (std::size_t i = 0; i < n; ++i) t.connect(t.add_host("h" + std::to_string(i)), sw, links::pcie5_x4::descriptor);
  const auto slow = plan::simulate(s, w, r, plan::bind(t, n, {}, "my-rack"));
  REQUIRE(slow.size() == named.size());
  for (const auto& x : slow) CHECK(x.ratio() > 2.5);
  // Too few places for the plan's ranks is refused with the count.
  fabric::topology small;
  small.connect(small.add_host("x"), small.add_host("y"), links::pcie5_x4::descriptor);
  CHECK_THROWS_WITH(plan::bind(small, n, {}, "tiny"), Catch::StartsWith("fabric: the tiny fabric has 2 places for"));
  CHECK_THROWS_WITH(plan::simulate(s, w, r, plan::bind(small, 2, {}, "tiny")),
                    Catch::Contains("places 2 ranks; the plan runs"));
}

}  // namespace plan_simulate_test
