// A serving plan's prefix cache replayed for real (plan/serving_replay.hpp) and its KV loads on a fabric
// (plan/simulate_serving.hpp): counted by hand on a four-request trace, against the single-tier replay, and
// against the closed forms the planner prices.
#include <catch2/catch.hpp>

#include <trinity/cache/block_replay.hpp>
#include <trinity/plan/serving_replay.hpp>
#include <trinity/plan/simulate_serving.hpp>

#include <vector>

namespace plan_serving_replay_test {

using namespace trinity;

namespace {

// r1 finds r0's two blocks, r2 the first of them; r3 shares nothing. Two arrive together.
std::vector<cache::block_request> hand_trace() {
  return {{0, 1024, 10, {1, 2}}, {1000, 1536, 10, {1, 2, 3}}, {2000, 700, 10, {1, 4}}, {2000, 1024, 10, {5, 6}}};
}

plan::serving_evaluated evaluated(const plan::system& s, const plan::serving_workload& w, plan::serving_plan p,
                                  const std::vector<model::compressor_cost>& codecs) {
  plan::serving_evaluated e;
  e.plan = p;
  e.cost = plan::price(s, w, p, codecs);
  return e;
}

}  // namespace

TEST_CASE("a serving plan's cache replays a hand trace: hits, loads and prefill saved", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  const bytes block = plan::kv_block_bytes(w, {1, 1, 0, {}, 0}, codecs, 512);
  CHECK(block.value() == 512.0 * 2 * 80 * 8 * 128 * 2);  // 512 tokens of bf16 K and V, 80 layers, 8 KV heads of 128
  for (const std::size_t tier : {std::size_t{0}, std::size_t{1}}) {
    const plan::serving_plan p{4, 8, 0, 10.5 * block, tier};
    const auto m = plan::replay_serving(s, w, p, codecs, hand_trace());
    INFO("cache in " << s.tiers[tier].name);
    CHECK(m.capacity_blocks == 10);
    CHECK(m.requests == 4);
    CHECK(m.served_blocks == 3);  // r1's two, r2's one
    CHECK(m.recomputed_blocks == 0);
    CHECK(m.served_tokens == 1024 + 512);
    CHECK(m.prompt_tokens == 1024 + 1536 + 700 + 1024);
    CHECK(m.measured.hit_rate == Approx(1536.0 / 4284.0));
    CHECK(m.bound == Approx(1536.0 / 4284.0));  // everything fits: the cache hits what infinity would
    // Prefill saved: r1's blocks at depths 0 and 1, r2's at depth 0, of every block's prefill at its depth.
    const auto at = [&](double d) { return model::forward_flops(w.shape, 512, 512 * d).value(); };
    CHECK(m.saved.value() == Approx(2 * at(0) + at(1)));
    CHECK(m.prefill.value() == Approx(4 * at(0) + 4 * at(1) + at(2)));
    if (tier == 0) {
      CHECK(m.loaded.value() == 0);
      CHECK(m.loads.empty());
    } else {
      CHECK(m.loaded.value() == 3 * block.value());
      REQUIRE(m.loads.size() == 2);
      CHECK(m.loads[0].at.value() == 1.0);
      CHECK(m.loads[0].size.value() == 2 * block.value());
      CHECK(m.loads[1].at.value() == 2.0);
      CHECK(m.loads[1].size.value() == block.value());
      CHECK(m.measured.loaded_per_token.value() == Approx(3 * block.value() / 4284.0));
    }
  }
}

TEST_CASE("the replayed cache serves what the single-tier prefix cache hits at its capacity", "[plan][serving]") {
  // Below a device memory of no blocks every finished request is demoted whole, in stamp order: the lower
  // tier is then an LRU of the same capacity, the replay's documented semantics.
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  std::vector<cache::block_request> trace;
  for (std::uint32_t i = 0; i < 300; ++i) {
    cache::block_request q{i * 100, 0, 1, {}};
    const std::uint32_t family = (i * 7) % 13, depth = 1 + (i * 5) % 9;
    for (std::uint32_t d = 0; d < depth; ++d) q.hash_ids.push_back(family * 10000 + d + (d > 4 ? i % 3 : 0) * 1000);
    q.input_length = 512 * depth - (i % 200);
    trace.push_back(q);
  }
  const bytes block = plan::kv_block_bytes(w, {1, 1, 1, {}, 0}, codecs, 512);
  for (const std::uint64_t blocks : {1ul, 5ul, 20ul, 60ul, 1000ul})
    for (const std::size_t tier : {std::size_t{0}, std::size_t{1}}) {
      const auto m =
          plan::replay_serving(s, w, {2, 8, 1, (static_cast<double>(blocks) + 0.5) * block, tier}, codecs, trace);
      const auto lru = cache::replay_blocks(trace, {.capacity_blocks = blocks});
      INFO(blocks << " blocks in " << s.tiers[tier].name);
      CHECK(m.capacity_blocks == blocks);
      CHECK(m.recomputed_blocks == 0);
      CHECK(m.served_tokens == static_cast<double>(lru.hit_tokens));
      CHECK(m.served_blocks == lru.hit_blocks);
    }
}

TEST_CASE("the predicted figures are the planner's price, capped at the replayed trace's bound", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  const auto e = evaluated(s, w, {4, 64, 1, bytes{1024e9}, 1}, codecs);
  const double h = e.cost.hit_rate;
  REQUIRE(h > 0.1);
  const auto open = plan::predicted_replay(w, e, codecs);
  const double prompt = w.prompt_tokens;
  CHECK(open.hit_rate == h);
  CHECK(open.loaded_per_token.value() ==
        Approx(h * model::kv_bytes_per_token(w.shape, plan::kv_value_bytes(codecs[1])).value()));
  CHECK(open.prefill_saved == Approx(1 - model::forward_flops(w.shape, prompt * (1 - h), prompt * h).value() /
                                             model::forward_flops(w.shape, prompt).value()));
  const auto capped = plan::predicted_replay(w, e, codecs, 0.05);
  CHECK(capped.hit_rate == 0.05);
  CHECK(capped.prefill_saved < open.prefill_saved);
  // In device memory nothing is loaded.
  CHECK(
      plan::predicted_replay(w, evaluated(s, w, {4, 64, 1, bytes{64e9}, 0}, codecs), codecs).loaded_per_token.value() ==
      0);
}

TEST_CASE("KV loads on a fabric take the tier's time alone and twice it when two share the pool's link",
          "[plan][serving][fabric]") {
  auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  // A pool behind one link as fast as each device's own: alone, a load runs at the tier's bandwidth.
  const link_descriptor link{"test-link",   link_family::pcie, s.tiers[1].bandwidth,
                             seconds{1e-6}, bytes{256},        0,
                             false,         joules_per_byte{}, "test"};
  fabric::topology t;
  const auto sw = t.add_switch("sw", link_family::pcie);
  t.connect(t.add_memory("pool", bytes{1e13}), sw, link);
  for (int a = 0; a < 2; ++a) t.connect(t.add_accelerator("acc" + std::to_string(a)), sw, link);
  const auto f = plan::bind(t, 2, s.tiers[1].name);
  const auto e = evaluated(s, w, {1, 8, 0, bytes{1e12}, 1}, codecs);
  const bytes size{10e9};
  const seconds alone = s.tiers[1].latency + size / s.tiers[1].bandwidth;

  const auto apart = plan::simulate(s, w, e, codecs, {{seconds{0}, size}, {seconds{10}, size}}, f);
  REQUIRE(apart.size() == 2);  // the mean load and the worst; one device per replica, so no all-reduce
  CHECK(apart[0].predicted.value() == Approx(alone.value()));
  CHECK(apart[0].ratio() >= 1.0);
  CHECK(apart[0].ratio() < 1.05);  // the switch's latency and the packets' headers only

  const auto together = plan::simulate(s, w, e, codecs, {{seconds{0}, size}, {seconds{0}, size}}, f);
  CHECK(together[0].ratio() > 1.95);  // the two replicas' loads share the pool's one link
  CHECK(together[0].ratio() < 2.1);

  // A plan whose cache is off the fabric's memory nodes has no loads to run there.
  CHECK_THROWS_WITH(
      plan::simulate(s, w, evaluated(s, w, {1, 8, 0, bytes{64e9}, 0}, codecs), codecs, {{seconds{0}, size}}, f),
      Catch::Contains("off the fabric's memory nodes"));
}

}  // namespace plan_serving_replay_test
