// Replaying block-hashed requests through the prefix cache: a trace small enough to replay by hand, each
// policy's difference from LRU on a trace built to show it, and the bounds every replay keeps.
#include <catch2/catch.hpp>

#include <trinity/cache/block_replay.hpp>

#include <vector>

namespace cache_block_replay_test {

using namespace trinity;
using cache::block_request;

namespace {
block_request req(std::uint64_t input, std::vector<cache::token> ids) { return {0, input, 1, std::move(ids)}; }
}  // namespace

TEST_CASE("a block trace replays by hand under LRU: longest cached prefix, oldest stamp out, deepest first",
          "[cache][prefix][replay]") {
  // Capacity 4 blocks of 512 tokens. By hand:
  //  r0 [1,2,3]   hit 0; cache 1,2,3
  //  r1 [1,2,4,5] hit 2; 1,2,4,5 stamped 2; 3 (stamp 1) goes
  //  r2 [1,2,3]   hit 2, min(1024, 1400) tokens; of 4 and 5 (stamp 2) the deeper, 5, goes
  //  r3 [1,2,4,5] hit 3, min(1536, 1800); 3 (stamp 3) goes
  //  r4 [6]       hit 0; 1,2,4,5 all stamped 4: the deepest, 5, goes
  //  r5 [1,2,4,5] hit 3, min(1536, 2048); 5 comes back and 6 (stamp 5) goes
  const std::vector<block_request> trace{req(1500, {1, 2, 3}),    req(2000, {1, 2, 4, 5}), req(1400, {1, 2, 3}),
                                         req(1800, {1, 2, 4, 5}), req(100, {6}),           req(2048, {1, 2, 4, 5})};
  const auto r = cache::replay_blocks(trace, {.capacity_blocks = 4});
  CHECK(r.requests == 6);
  CHECK(r.blocks == 19);
  CHECK(r.hit_blocks == 10);
  CHECK(r.tokens == 8848);
  CHECK(r.hit_tokens == 5120);
  CHECK(r.evicted_blocks == 5);   // 3, 5, 3, 5, 6
  CHECK(r.inserted_blocks == 9);  // 1, 2, 3, 4, 5, then 3, 5, 6, 5
  CHECK(r.block_hit_rate() == Approx(10.0 / 19));
  CHECK(r.token_hit_rate() == Approx(5120.0 / 8848));
}

TEST_CASE("a chain longer than the cache keeps its first blocks, and capacity 0 hits nothing",
          "[cache][prefix][replay]") {
  const std::vector<block_request> trace{req(1536, {1, 2, 3}), req(1536, {1, 2, 3})};
  const auto r = cache::replay_blocks(trace, {.capacity_blocks = 2});
  CHECK(r.hit_blocks == 2);
  CHECK(r.hit_tokens == 1024);
  CHECK(cache::replay_blocks(trace, {.capacity_blocks = 0}).hit_blocks == 0);
}

TEST_CASE("LFU and shared-prefix keep a block two requests shared where LRU drops it", "[cache][prefix][replay]") {
  // Capacity 2: [1] [1] [2] [3] [1]. When 3 arrives, LRU drops 1 (stamp 2, older than 2's 3); LFU drops 2 (one
  // insert against two); shared-prefix moves 1 a horizon ahead and drops 2 too, unless the horizon is 0.
  const std::vector<block_request> trace{req(512, {1}), req(512, {1}), req(512, {2}), req(512, {3}), req(512, {1})};
  using P = cache::prefix_eviction_policy;
  CHECK(cache::replay_blocks(trace, {.capacity_blocks = 2}).hit_blocks == 1);
  CHECK(cache::replay_blocks(trace, {.capacity_blocks = 2, .eviction = {P::lfu}}).hit_blocks == 2);
  CHECK(cache::replay_blocks(trace, {.capacity_blocks = 2, .eviction = {P::shared_prefix, 1000}}).hit_blocks == 2);
  CHECK(cache::replay_blocks(trace, {.capacity_blocks = 2, .eviction = {P::shared_prefix, 0}}).hit_blocks == 1);
}

TEST_CASE("a shared parent never leaves before its child, whatever the policy favours", "[cache][prefix][replay]") {
  // 1 is shared by every request, its children are not: under shared-prefix 1 ranks last, but when the
  // children are gone it is a leaf like any other; no request may ever find a child cached under a missing parent.
  std::vector<block_request> trace;
  for (cache::token i = 0; i < 50; ++i) trace.push_back(req(1024, {1, 100 + i}));
  trace.push_back(req(1024, {1, 100}));
  using P = cache::prefix_eviction_policy;
  for (const auto p : {P::lru, P::lfu, P::shared_prefix}) {
    const auto r = cache::replay_blocks(trace, {.capacity_blocks = 3, .eviction = {p}});
    INFO(static_cast<int>(p));
    // Each request after the first finds 1; the last one's child 100 is long gone.
    CHECK(r.hit_blocks == 50);
    CHECK(r.blocks == 102);
  }
}

TEST_CASE("with room for every distinct block the replay is the infinite bound: every repeat hits",
          "[cache][prefix][replay]") {
  const std::vector<block_request> trace{req(1024, {1, 2}), req(1536, {1, 2, 3}), req(512, {4}), req(1536, {1, 2, 3})};
  const auto distinct = cache::distinct_blocks(trace);
  CHECK(distinct == 4);
  const auto r = cache::replay_blocks(trace, {.capacity_blocks = distinct});
  CHECK(r.hit_blocks == r.blocks - distinct);
  CHECK(r.evicted_blocks == 0);
  // More capacity never hits less (LRU is a stack algorithm on this tree).
  std::uint64_t previous = 0;
  for (std::uint64_t c = 0; c <= distinct; ++c) {
    const auto h = cache::replay_blocks(trace, {.capacity_blocks = c}).hit_blocks;
    CHECK(h >= previous);
    previous = h;
  }
}

}  // namespace cache_block_replay_test
