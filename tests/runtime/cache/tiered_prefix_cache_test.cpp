// The tiered prefix cache worked by hand: demotion instead of dropping, loads from the tier a block sits in,
// recomputation where the link is slower than the device, tenants apart, capacities never exceeded.
#include <catch2/catch.hpp>

#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/io/block_trace.hpp>

#include <vector>

namespace cache_tiered_prefix_cache_test {

using namespace trinity;

namespace {
// Blocks of 1 MB; the device recomputes a block (1 GFLOP at depth 0, (d + 1) GFLOP at depth d) at 1 TFLOP/s,
// so 1 ms per GFLOP. The host link loads a block in `load_ms`.
cache::tiered_prefix_config config(std::uint64_t hbm, std::uint64_t host, double load_ms, bool by_depth = false) {
  return {.tiers = {{"HBM", hbm, {}, {}}, {"host", host, bytes_per_second{1e6 / (load_ms * 1e-3)}, seconds{0}}},
          .block_bytes = bytes{1e6},
          .prefill = [by_depth](std::size_t d) { return flops{1e9 * (by_depth ? static_cast<double>(d + 1) : 1.0)}; },
          .device_rate = flops_per_second{1e12}};
}
std::vector<std::uint32_t> chain(std::initializer_list<std::uint32_t> ids) { return ids; }
}  // namespace

TEST_CASE("a tiered prefix cache demotes instead of dropping and serves hits from the tier they sit in",
          "[cache][prefix][tiered]") {
  cache::tiered_prefix_cache kv(config(2, 2, 0.1));
  // By hand (HBM 2 blocks, host 2; oldest out first, ties to the deepest):
  CHECK(kv.request(0, chain({1, 2})).hit_blocks == 0);  // HBM 1,2
  CHECK(kv.request(0, chain({3, 4})).hit_blocks == 0);  // HBM 3,4; 2 then 1 down to host
  CHECK(kv.tier_of(0, 1) == 1u);
  const auto r3 = kv.request(0, chain({1, 2}));  // both from host; 4 then 3 down
  CHECK(r3.hit_blocks == 2);
  CHECK(r3.served_blocks == 2);
  CHECK(r3.saved.value() == 2e9);
  CHECK(r3.load_time.value() == Approx(2e-4));
  CHECK(kv.request(0, chain({5})).hit_blocks == 0);  // 2 down to host; host drops 4 (older than 2, deeper than 3)
  CHECK(kv.tier_of(0, 4) == std::nullopt);
  CHECK(kv.request(0, chain({3, 4})).hit_blocks == 1);  // 3 from host, 4 gone; then 1, 5 down and host drops 2
  CHECK(kv.request(0, chain({1, 2})).hit_blocks == 1);  // 1 from host, 2 gone; then 4, 3 down and host drops 5
  const auto& c = kv.counts();
  CHECK(c[0].hits == 0);
  CHECK(c[1].hits == 4);
  CHECK(c[1].loaded.value() == 4e6);
  CHECK(c[1].demoted.value() == 9e6);  // 2, 1; 4, 3; 2; 1, 5; 4, 3
  CHECK(c[1].dropped == 3);            // 4, 2, 5
  const auto resident = kv.resident();
  CHECK(resident[0] <= 2);
  CHECK(resident[1] <= 2);
}

TEST_CASE("a block is loaded only when the link beats recomputing it at its depth", "[cache][prefix][tiered]") {
  // Loading takes 1.5 ms; recomputing depth 0 takes 1 ms, depth 1 2 ms, depth 2 3 ms.
  cache::tiered_prefix_cache kv(config(0, 10, 1.5, true));  // no HBM: every cached block sits in host memory
  (void)kv.request(0, chain({1, 2, 3}));
  const auto r = kv.request(0, chain({1, 2, 3}));
  CHECK(r.hit_blocks == 3);
  CHECK(r.served_blocks == 2);            // depths 1 and 2 loaded
  CHECK(r.saved.value() == 5e9);          // 2 + 3 GFLOP
  CHECK(kv.counts()[1].recomputed == 1);  // depth 0 recomputed
}

TEST_CASE("tenants never share a tiered block, and no tier ever holds more than its capacity",
          "[cache][prefix][tiered]") {
  cache::tiered_prefix_cache kv(config(3, 5, 0.1));
  (void)kv.request(7, chain({1, 2}));
  CHECK(kv.request(8, chain({1, 2})).hit_blocks == 0);
  CHECK(kv.request(7, chain({1, 2})).hit_blocks == 2);
  for (std::uint32_t i = 0; i < 200; ++i) {
    (void)kv.request(i % 3, chain({i % 7, 100 + i % 11, 1000 + i}));
    const auto r = kv.resident();
    REQUIRE(r[0] <= 3);
    REQUIRE(r[1] <= 5);
  }
  auto bad = config(1, 1, 0.1);
  bad.tiers[1].bandwidth = bytes_per_second{0};
  CHECK_THROWS_WITH(cache::tiered_prefix_cache(bad), Catch::Contains("tiers[1].bandwidth"));
  CHECK_THROWS_WITH(cache::tiered_prefix_cache(config(1, 1, 0)), Catch::Contains("tiers[1].bandwidth"));  // infinite
}

TEST_CASE("with one tier the tiered cache hits exactly what the prefix cache's replay hits, on the real excerpt",
          "[cache][prefix][tiered]") {
  const auto trace = io::read_block_trace(TRINITY_SOURCE_DIR "/docs/examples/mooncake_conversation_excerpt.jsonl");
  for (const std::uint64_t capacity : {100u, 1000u, 3000u}) {
    cache::tiered_prefix_cache kv({.tiers = {{"HBM", capacity, {}, {}}},
                                   .block_bytes = bytes{1e6},
                                   .prefill = [](std::size_t) { return flops{1e9}; },
                                   .device_rate = flops_per_second{1e12}});
    std::uint64_t hits = 0;
    for (const auto& q : trace) hits += kv.request(0, q.hash_ids).hit_blocks;
    INFO(capacity);
    CHECK(hits == cache::replay_blocks(trace, {.capacity_blocks = capacity}).hit_blocks);
    CHECK(kv.counts()[0].hits == hits);
  }
}

}  // namespace cache_tiered_prefix_cache_test
