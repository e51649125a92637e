// Planning the cache trade: the price of a cache against the paper's model,
// the law that more memory never yields a smaller cache, and a slow tier's
// reads weighed against the compute a hit saves.
#include <catch2/catch.hpp>

#include <trinity/plan/diffusion.hpp>
#include <trinity/units/literals.hpp>

namespace plan_diffusion_test {

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("a cache plan's compute is the paper's E[C](M), and its reads and writes are the tier's", "[plan][cache]") {
  const auto s = plan::presets::gb200_nvl72_cxl();
  const auto w = plan::presets::diffusion_dit_12b();
  const auto codecs = plan::latent_codecs(s);
  REQUIRE(codecs[0].name == "identity");
  const auto none = plan::price(s, w, {}, codecs);
  CHECK(none.compute == 50.0 * w.step_cost);
  CHECK(none.hit_rate == 0);
  const auto c = plan::price(s, w, {64_GB, 2, 0}, codecs);  // in the CXL pool, as they are
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
      INFO("tiers x" << scale << ": " << plan::describe(r.chosen().plan, s, r.codecs));
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

TEST_CASE("latents stored through a codec: ratio times the entries, decoded on every hit, within the error budget",
          "[plan][cache]") {
  const auto s = plan::presets::gb200_nvl72_cxl();
  auto w = plan::presets::diffusion_dit_12b();
  const auto codecs = plan::latent_codecs(s);  // the GPU kernels' rates: the GB200 is a GPU
  std::size_t int8 = 0;
  while (codecs[int8].name != "int8") ++int8;
  const double ratio = codecs[int8].ratio;  // fp32 latents
  const auto c = plan::price(s, w, {64_GB, 2, int8}, codecs);
  const double h = w.hit_rate(ratio * 64_GB);
  CHECK(c.hit_rate == Approx(h));
  const auto& t = s.tiers[2];
  CHECK(c.read_time.value() == Approx(h * (t.latency + w.latent_size / ratio / t.bandwidth).value()));
  CHECK(c.codec_time.value() == Approx(h * w.latent_size.value() / codecs[int8].decode_rate.value() +
                                       (1 - h) * 5 * w.latent_size.value() / codecs[int8].encode_rate.value()));
  CHECK(c.error == codecs[int8].relative_error);
  CHECK(c.tier_bytes[2] == 64_GB);
  // On a pool too small to saturate the curve, storing int8 buys hit rate for microseconds of decoding.
  auto small = s;
  small.tiers[2].capacity = 100_GB;
  const auto r = plan::plan_diffusion(small, w);
  CHECK(r.codecs[r.chosen().plan.codec].name == "int8");
  CHECK_THAT(r.explanation.trades.back(), Catch::Contains("latents stored as int8 (compute for memory)"));
  // A budget int8 breaks: bf16 (half the bytes, error 0.0017) is the most it may use.
  w.error_budget = 0.005;
  const auto tight = plan::plan_diffusion(small, w);
  CHECK(tight.codecs[tight.chosen().plan.codec].name == "bf16");
  bool named = false;
  for (const auto& e : tight.candidates)
    if (tight.codecs[e.plan.codec].name == "int8") named |= e.violation.rfind("error budget: int8", 0) == 0;
  CHECK(named);
  // Latents held in bf16: bf16 storage gains nothing and is not offered; int8 halves them.
  w.error_budget = 0.01;
  w.latent_element_bytes = 2;
  CHECK(plan::storage_ratio(w, codecs[int8]) == Approx(ratio / 2));
  for (const auto& e : plan::plan_diffusion(small, w).candidates) CHECK(e.plan.codec != 1);
}

}  // namespace plan_diffusion_test
