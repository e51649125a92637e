// Planning the cache trade: the price of a cache against the paper's model,
// the law that more memory never yields a smaller cache, and a slow tier's
// reads weighed against the compute a hit saves.
#include <catch2/catch.hpp>

#include <trinity/plan/diffusion.hpp>
#include <trinity/units/literals.hpp>

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("a cache plan's compute is the paper's E[C](M), and its reads and writes are the tier's", "[plan][cache]") {
  const auto s = plan::presets::gb200_nvl72_cxl();
  const auto w = plan::presets::diffusion_dit_12b();
  const auto none = plan::price(s, w, {});
  CHECK(none.compute == 50.0 * w.step_cost);
  CHECK(none.hit_rate == 0);
  const auto c = plan::price(s, w, {64_GB, 2});  // in the CXL pool
  const double h = w.hit_rate(64_GB);
  CHECK(c.hit_rate == Approx(h));
  CHECK(c.compute.value() == Approx((50 - h * 10) * w.step_cost.value()));
  const auto& t = s.tiers[2];
  CHECK(c.read_time.value() == Approx(h * (t.latency + w.latent_size / t.bandwidth).value()));
  CHECK(c.write_time.value() == Approx((1 - h) * (t.latency + 5.0 * w.latent_size / t.bandwidth).value()));
  CHECK(c.tier_bytes[2] == 64_GB);
  CHECK(c.tier_bytes[0] == 24_GB);  // the weights
}

TEST_CASE("more memory never yields a smaller cache", "[plan][cache][laws]") {
  for (const auto o : {plan::objective::time, plan::objective::energy, plan::objective::cost}) {
    auto s = plan::presets::gb200_nvl72_cxl();
    const auto w = plan::presets::diffusion_dit_12b();
    double previous = -1;
    for (double scale = 0.125; scale <= 8; scale *= 2) {
      auto t = plan::presets::gb200_nvl72_cxl();
      for (std::size_t i = 0; i < s.tiers.size(); ++i) s.tiers[i].capacity = scale * t.tiers[i].capacity;
      if (s.tiers[0].capacity < w.model_bytes) continue;
      const auto r = plan::plan_diffusion(s, w, {.objective = o, .link_budget = std::nullopt});
      INFO("tiers x" << scale << ": " << plan::describe(r.chosen().plan, s));
      CHECK(r.chosen().plan.capacity.value() >= previous);
      CHECK(r.chosen().fits());
      previous = r.chosen().plan.capacity.value();
    }
    CHECK(previous > 0);
  }
}

TEST_CASE("a cache goes where its reads cost less than the compute they save, and nowhere if none does",
          "[plan][cache]") {
  const auto s = plan::presets::gb200_nvl72_cxl();
  auto w = plan::presets::diffusion_dit_12b();
  const auto r = plan::plan_diffusion(s, w);
  // A hit saves 10 steps of 98 TFLOP (0.39 s on a GB200); reading 16 MB from the CXL pool takes 0.13 ms:
  // the largest cache wins, in the largest tier (the CXL pool: tens of TB, report §6.3).
  CHECK(r.chosen().plan.tier == 2);
  CHECK(r.chosen().plan.capacity == bytes{16384e9});  // the largest power-of-two GB in the 32 TB pool
  CHECK_THAT(r.explanation.trades.front(), Catch::Contains("cache in cxl-capacity (memory for compute)"));
  // With the paper's toy step (1 GFLOP, 0.4 us) a read from any tier costs more than it saves: no cache.
  w.step_cost = 1e9_FLOP;
  const auto toy = plan::plan_diffusion(s, w);
  CHECK(toy.chosen().plan.capacity == 0_B);
  CHECK_THAT(toy.explanation.trades.front(), Catch::Contains("no cache pays"));
  w.model_bytes = 1_TB;
  CHECK_THROWS_WITH(plan::plan_diffusion(s, w), Catch::StartsWith("workload.model_bytes"));
}
