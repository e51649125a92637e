// The training planner with types of a user's own: a codec the library does not ship, calibrated here, and a
// tier it does not ship, both searched beside the built-in ones; and its slots as TradeoffPolicy models whose
// priced trades are the explanation's.

#include <catch2/catch.hpp>

#include <trinity/compress/user_codec.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/extend.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/training_trades.hpp>
#include <trinity/units/literals.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace plan_extend_test {

using namespace trinity;
using namespace trinity::literals;

namespace {

// A user's codec: each float's upper 16 bits (bfloat16 by truncation, not rounding), under frame id 221. Its
// ratio is 2 against fp32 and its relative error at most 2^-7.
constexpr compress::codec truncated_id{221};

void decode_truncated(const compress::frame_view& f, std::span<float> out, compress::element) {
  if (f.body.size() != out.size() * 2) throw compress::decode_error("truncated.body", "2 bytes per element");
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t hi = 0;
    std::memcpy(&hi, f.body.data() + 2 * i, 2);
    const std::uint32_t word = std::uint32_t{hi} << 16;
    std::memcpy(&out[i], &word, 4);
  }
}
inline constexpr auto truncated_frames = compress::frame_decoder_of<&decode_truncated>("truncated");
inline const bool truncated_registered = compress::register_frame_decoder(truncated_id, truncated_frames);

struct truncated_bf16 {
  using compressor_concept = compressor_tag;
  static constexpr compress::compressor_traits traits{.name = "truncated-bf16",
                                                      .wire_codec = truncated_id,
                                                      .role = compress::role::values,
                                                      .error = {compress::error_kind::relative, 1.0 / 128},
                                                      .summable = true,
                                                      .expected_ratio = 2.0};
  void encode(std::span<const float> in, compress::frame_buffer& out, std::span<float> residual = {}) const {
    const std::size_t at = compress::begin_frame(out, truncated_id, compress::element::f32, in.size());
    std::byte* body = out.grow(in.size() * 2);
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::uint32_t word = 0;
      std::memcpy(&word, &in[i], 4);
      const auto hi = static_cast<std::uint16_t>(word >> 16);
      std::memcpy(body + 2 * i, &hi, 2);
      if (!residual.empty()) {
        const std::uint32_t kept = std::uint32_t{hi} << 16;
        float y = 0;
        std::memcpy(&y, &kept, 4);
        residual[i] = in[i] - y;
      }
    }
    compress::finish_frame(out, at);
  }
};

// A user's tier: a CXL memory pool of 512 GB at 64 GB/s, 600 ns away (figures of this test, not a product).
struct test_cxl_pool {
  using tier_concept = tier_tag;
  static constexpr tier_descriptor descriptor{
      "test-cxl-pool", tier_level::capacity_pool, 512_GB, 64_GBps,
      600_ns,          joules_per_byte{20e-12},   true,   "a tier of this test's own"};
};

}  // namespace

TEST_CASE("a codec and a tier the library does not ship are searched beside the built-in ones", "[plan]") {
  REQUIRE(truncated_registered);
  auto codecs = plan::default_codecs();
  const std::size_t built_in = codecs.size();
  codecs.push_back(plan::calibrated_codec<truncated_bf16>("truncated-bf16", {}, std::size_t{1} << 16));
  const auto& mine = codecs.back();
  CHECK(mine.name == "truncated-bf16");
  CHECK(mine.ratio == 2.0);  // 2 bytes per float in the frame's body, measured here
  CHECK(mine.relative_error > 0);
  CHECK(mine.relative_error < 1.0 / 128);
  CHECK(mine.encode_rate > bytes_per_second{});
  CHECK_FALSE(mine.lossless);

  const auto s = plan::with_tier<test_cxl_pool>(plan::presets::h100_infiniband());
  REQUIRE(s.tiers.size() == 3);
  CHECK(s.tiers[2].name == "test-cxl-pool");
  CHECK(s.tiers[2].level == tier_level::capacity_pool);

  const auto w = plan::presets::llm_70b();
  const auto r = plan::plan_training(s, w, codecs);
  REQUIRE(r.codecs.size() == built_in + 1);
  std::size_t with_codec = 0, with_tier = 0;
  for (const auto& c : r.candidates) {
    // Each priced exactly as the built-in choices are.
    const auto again = plan::price(s, w, r.codecs[c.plan.codec], c.plan);
    CHECK(again.total.time == c.cost.total.time);
    with_codec += c.plan.codec == built_in;
    if (c.plan.offload_tier == 2) {
      ++with_tier;
      CHECK(c.cost.offload_time == 600_ns + c.cost.offload_bytes / 64_GBps);
      CHECK(c.cost.tier_bytes[2] > bytes{});
    }
  }
  // Every ZeRO stage, offload choice and recomputation with the user's codec; every codec, stage and
  // recomputation with the user's tier.
  CHECK(with_codec == 4 * 3 * 2);
  CHECK(with_tier == r.codecs.size() * 4 * 2);
}

namespace {
// A codec configured at run time: the leading `bytes_kept` bytes of each float (2: bfloat16 by truncation),
// default 3, under frame id 222; its decoder reads the width from the body's size. The second type has no
// default constructor.
constexpr compress::codec leading_id{222};
void decode_leading(const compress::frame_view& f, std::span<float> out, compress::element) {
  const std::size_t per = out.empty() ? 0 : f.body.size() / out.size();
  if (per < 1 || per > 4 || f.body.size() != per * out.size())
    throw compress::decode_error("leading.body", "1 to 4 bytes per element");
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t word = 0;
    std::memcpy(reinterpret_cast<std::byte*>(&word) + (4 - per), f.body.data() + per * i, per);
    std::memcpy(&out[i], &word, 4);
  }
}
inline constexpr auto leading_frames = compress::frame_decoder_of<&decode_leading>("leading");
inline const bool leading_registered = compress::register_frame_decoder(leading_id, leading_frames);

struct leading_bytes {
  using compressor_concept = compressor_tag;
  static constexpr compress::compressor_traits traits{.name = "leading-bytes",
                                                      .wire_codec = leading_id,
                                                      .role = compress::role::values,
                                                      .error = {compress::error_kind::relative, 1.0 / 128},
                                                      .summable = true,
                                                      .expected_ratio = 2.0};
  std::size_t bytes_kept = 3;
  void encode(std::span<const float> in, compress::frame_buffer& out, std::span<float> residual = {}) const {
    const std::size_t at = compress::begin_frame(out, leading_id, compress::element::f32, in.size());
    std::byte* body = out.grow(in.size() * bytes_kept);
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::memcpy(body + bytes_kept * i, reinterpret_cast<const std::byte*>(&in[i]) + (4 - bytes_kept), bytes_kept);
      if (!residual.empty()) residual[i] = 0;
    }
    compress::finish_frame(out, at);
  }
};
struct required_bytes : leading_bytes {
  explicit required_bytes(std::size_t b) { bytes_kept = b; }
};
}  // namespace

TEST_CASE("calibrated_codec measures the prototype it is given, configured at run time, with no default constructor",
          "[plan]") {
  REQUIRE(leading_registered);
  // The prototype keeps 2 bytes a float (ratio 2); a default-constructed codec would keep 3 (ratio 4/3), which is
  // what was measured when fresh() built C{}.
  const auto two = plan::calibrated_codec<leading_bytes>("leading-2", leading_bytes{2}, std::size_t{1} << 14);
  CHECK(two.ratio == 2.0);
  const auto three = plan::calibrated_codec<leading_bytes>("leading-3", {}, std::size_t{1} << 14);
  CHECK(three.ratio == Approx(4.0 / 3.0));
  // A codec with no default constructor calibrates from the prototype alone.
  const auto one = plan::calibrated_codec<required_bytes>("leading-1", required_bytes{1}, std::size_t{1} << 14);
  CHECK(one.ratio == 4.0);
  CHECK(one.name == "leading-1");
  // any_compressor::fresh() is the prototype as handed over, not its default.
  compress::any_compressor handed("leading-2", leading_bytes{2});
  CHECK(compress::measure(handed, compress::normal_tensors(3, 1024, 1)).ratio == 2.0);
}

TEST_CASE(
    "the training slots are TradeoffPolicy models: their priced trades are closed formulas and the "
    "explanation's steps",
    "[plan]") {
  const auto s = plan::presets::h100_infiniband();
  const auto w = plan::presets::llm_70b();
  const auto codecs = plan::default_codecs_for(s);
  const plan::training_plan base{0, 0, 0, false};
  REQUIRE(codecs[0].name == "identity");

  auto recomputed = base;
  recomputed.recompute = true;
  const auto t = plan::recompute_trade{s, w, codecs}.price({base, recomputed});
  const double sbh = 4096.0 * 1 * 8192;
  // Korthikanti et al.'s 34sbh per layer stored, against 2sbh per layer and one layer's 34sbh recomputed.
  CHECK(t.saved().value() == Approx(sbh * (34.0 * 80 - 2.0 * 80 - 34.0)).epsilon(1e-12));
  // One more forward: 8ΨT, not 6ΨT, over the 16 micro-batches of 1 a rank (1,024 sequences over 64 ranks).
  CHECK(t.spent().value() == Approx(2.0 * w.parameters * 4096 * 16).epsilon(1e-12));

  auto staged = base;
  staged.stage = 3;
  const auto z = plan::zero_stage_trade{s, w, codecs}.price({base, staged});
  CHECK(z.saved() > bytes{});
  CHECK(z.spent() > bytes{});  // ZeRO-3 gathers parameters twice a step

  const auto r = plan::plan_training(s, w, codecs);
  const auto& p = r.chosen().plan;
  REQUIRE(p.stage != base.stage);
  auto step = r.candidates[r.baseline].plan;
  auto to = step;
  to.stage = p.stage;
  const auto first = plan::zero_stage_trade{s, w, r.codecs}.price({step, to});
  REQUIRE_FALSE(r.explanation.trades.empty());
  CHECK(r.explanation.trades.front() ==
        "ZeRO stage " + std::to_string(p.stage) + " (bandwidth for memory): device memory " +
            to_string(first.before.memory) + " -> " + to_string(first.after.memory) + ", sent " +
            to_string(first.before.bandwidth) + " -> " + to_string(first.after.bandwidth) + " per step, step time " +
            to_string(first.before.time) + " -> " + to_string(first.after.time));
}

TEST_CASE(
    "the same codec and tier are searched by the diffusion cache's planner: the pool as a cache tier, the "
    "codec as the latents' storage",
    "[plan]") {
  const auto s = plan::with_tier<test_cxl_pool>(plan::presets::h100_infiniband());
  const auto w = plan::presets::diffusion_dit_12b();
  auto codecs = plan::latent_codecs(s);
  codecs.push_back(plan::calibrated_codec<truncated_bf16>("truncated-bf16", {}, std::size_t{1} << 16));
  const auto r = plan::plan_diffusion(s, w, {}, codecs);
  std::size_t in_pool = 0, coded = 0;
  for (const auto& c : r.candidates) {
    in_pool += c.plan.tier == 2;
    coded += c.plan.codec == codecs.size() - 1;
  }
  // A cache of every power-of-two GB up to the pool's 512 GB, for each codec that stores latents smaller.
  std::size_t storing = 0;
  for (const auto& k : r.codecs) storing += k.name == "identity" || plan::storage_ratio(w, k) > 1.0;
  CHECK(in_pool == 10 * storing);
  REQUIRE(r.codecs.back().name == "truncated-bf16");
  // Searched where it stores latents smaller, and skipped exactly where it would not.
  CHECK((coded > 0) == (plan::storage_ratio(w, r.codecs.back()) > 1.0));
}

}  // namespace plan_extend_test
