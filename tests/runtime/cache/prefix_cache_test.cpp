// The exact prefix cache: longest-prefix matches of whole blocks, tenants
// isolated by salt, blocks in use never evicted, LRU among idle leaves, and a
// randomized run against a plain model of which prefixes are cached.
#include <catch2/catch.hpp>

#include <trinity/cache/prefix_cache.hpp>
#include <trinity/units/literals.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace cache_prefix_cache_test {

using namespace trinity;
using namespace trinity::literals;
using cache::token;

namespace {
std::vector<token> seq(std::initializer_list<token> t) { return t; }
std::vector<token> range(token from, std::size_t n) {
  std::vector<token> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}
std::vector<token> cat(std::vector<token> a, const std::vector<token>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

TEST_CASE("a match covers the longest cached prefix of whole blocks", "[cache][prefix]") {
  cache::prefix_cache kv({.block_tokens = 4, .block_size = 1_MB, .capacity = 100_MB});
  const auto prompt = range(0, 10);  // two whole blocks and two tokens that make none
  {
    auto held = kv.insert(7, prompt);
    CHECK(held.blocks() == 2);
    CHECK(held.tokens() == 8);
  }
  CHECK(kv.blocks() == 2);
  CHECK(kv.match(7, prompt).tokens() == 8);
  CHECK(kv.match(7, range(0, 7)).tokens() == 4);                          // the second block is incomplete
  CHECK(kv.match(7, cat(range(0, 4), seq({9, 9, 9, 9}))).tokens() == 4);  // diverges in block 2
  CHECK(kv.match(7, cat(seq({1}), range(1, 9))).tokens() == 0);           // diverges in block 1
  CHECK(kv.match(8, prompt).tokens() == 0);                               // another tenant's salt
  auto extended = kv.insert(7, cat(range(0, 8), range(100, 8)));          // shares two blocks, adds two
  CHECK(extended.blocks() == 4);
  CHECK(kv.blocks() == 4);
  CHECK(kv.stats().inserted_blocks == 4);
  CHECK(kv.stats().hit_tokens == 8 + 4 + 4);
}

TEST_CASE("tenants with different salts never share a block", "[cache][prefix]") {
  cache::prefix_cache kv({.block_tokens = 2, .block_size = 1_MB, .capacity = 100_MB});
  const auto p = range(0, 8);
  { auto a = kv.insert(1, p); }
  { auto b = kv.insert(2, p); }
  CHECK(kv.blocks() == 8);  // the same tokens, stored twice
  CHECK(kv.match(1, p).tokens() == 8);
  CHECK(kv.match(2, p).tokens() == 8);
  CHECK(kv.match(3, p).tokens() == 0);
}

TEST_CASE("blocks held by a lease are never evicted, idle leaves go least recently used first", "[cache][prefix]") {
  cache::prefix_cache kv({.block_tokens = 2, .block_size = 1_MB, .capacity = 4_MB});  // four blocks
  auto a = kv.insert(0, range(0, 4));                                                 // blocks a1 a2, held
  { auto b = kv.insert(0, range(10, 4)); }                                            // b1 b2, idle
  CHECK(kv.blocks() == 4);
  CHECK(kv.evictable_blocks() == 1);        // only the leaf b2 (b1 has a child)
  { auto c = kv.insert(0, range(20, 2)); }  // needs one block: b2 goes, then b1 is a leaf
  CHECK(kv.stats().evicted_blocks == 1);
  { auto d = kv.insert(0, range(30, 2)); }  // b1 is older than c1: b1 goes
  CHECK(kv.stats().evicted_blocks == 2);
  CHECK(kv.match(0, range(10, 2)).tokens() == 0);
  CHECK(kv.match(0, range(20, 2)).tokens() == 2);
  // Everything left is held or recent; with a and a fresh hold on c and d, nothing can go.
  auto c = kv.match(0, range(20, 2));
  auto d = kv.match(0, range(30, 2));
  auto e = kv.insert(0, range(40, 4));
  CHECK(e.blocks() == 0);  // no room and nothing idle: it caches nothing rather than evict a held block
  CHECK(kv.match(0, range(0, 4)).tokens() == 4);
  a.release();
  auto f = kv.insert(0, range(40, 2));  // now a2 is an idle leaf and goes
  CHECK(f.blocks() == 1);
  CHECK(kv.match(0, range(0, 4)).tokens() == 2);
  CHECK(kv.blocks() <= kv.max_blocks());
}

TEST_CASE("a randomized run keeps the tree, the counts and the capacity consistent with a model", "[cache][prefix]") {
  cache::prefix_cache kv({.block_tokens = 3, .block_size = 1_kB, .capacity = 60_kB});
  std::mt19937_64 gen(3);
  std::uniform_int_distribution<int> pick(0, 39), len(0, 20), tenant(0, 2), tok(0, 2);
  // Sequences drawn from a small alphabet share prefixes often.
  std::vector<std::vector<token>> pool(40);
  for (auto& s : pool) {
    s.resize(static_cast<std::size_t>(len(gen)));
    for (auto& t : s) t = static_cast<token>(tok(gen));
  }
  std::vector<cache::prefix_cache::lease> held;
  for (int op = 0; op < 20000; ++op) {
    const auto& s = pool[static_cast<std::size_t>(pick(gen))];
    const auto salt = static_cast<std::uint64_t>(tenant(gen));
    if (op % 3 == 0) {
      auto l = kv.insert(salt, s);
      // Once inserted and held, its prefix matches at least as far as was cached.
      CHECK(kv.match(salt, s).tokens() >= l.tokens());
      held.push_back(std::move(l));
    } else {
      held.push_back(kv.match(salt, s));
    }
    if (held.size() > 6) held.erase(held.begin());
    REQUIRE(kv.blocks() <= kv.max_blocks());
  }
  held.clear();
  CHECK(kv.blocks() == kv.max_blocks());  // full, and with nothing held every leaf is evictable
  CHECK(kv.evictable_blocks() >= 1);
  CHECK(kv.stats().evicted_blocks + kv.blocks() == kv.stats().inserted_blocks);
}

TEST_CASE("prefix cache settings are checked by name", "[cache][prefix]") {
  CHECK_THROWS_WITH(cache::prefix_cache({.block_tokens = 0, .block_size = 1_MB, .capacity = 1_GB}),
                    Catch::StartsWith("block_tokens"));
  CHECK_THROWS_WITH(cache::prefix_cache({.block_tokens = 16, .block_size = 0_B, .capacity = 1_GB}),
                    Catch::StartsWith("block_size"));
  CHECK_THROWS_WITH(cache::prefix_cache({.block_tokens = 16, .block_size = 1_MB, .capacity = bytes{-1.0}}),
                    Catch::StartsWith("capacity"));
}

TEST_CASE("every cached block has an identity below the capacity, its own while cached, reused after eviction",
          "[cache][prefix]") {
  // A paged KV allocator indexes its pool by these, as vLLM's block table does.
  cache::prefix_cache kv({.block_tokens = 4, .block_size = bytes{1024}, .capacity = bytes{8 * 1024}});
  std::vector<cache::token> a(16), b(16);
  for (std::size_t i = 0; i < 16; ++i) {
    a[i] = static_cast<cache::token>(i);
    b[i] = static_cast<cache::token>(i < 8 ? i : 100 + i);  // shares a's first two blocks
  }
  std::vector<cache::block_id> a_table;
  {
    const auto held = kv.insert(1, a);
    REQUIRE(held.created() == 4);
    a_table.assign(held.block_table().begin(), held.block_table().end());
  }
  REQUIRE(a_table.size() == 4);
  const auto hb = kv.insert(1, b);
  REQUIRE(hb.created() == 2);  // two blocks reused, two new
  REQUIRE(hb.block_table()[0] == a_table[0]);
  REQUIRE(hb.block_table()[1] == a_table[1]);
  std::set<cache::block_id> live(a_table.begin(), a_table.end());
  live.insert(hb.block_table().begin(), hb.block_table().end());
  REQUIRE(live.size() == 6);  // distinct while cached
  for (const auto id : live) REQUIRE(id < kv.max_blocks());
  REQUIRE(kv.match(1, a).block_table().size() == 4);
  REQUIRE(kv.match(1, a).created() == 0);
  // Fill past the capacity: a's unheld tail is evicted and its identities go to the new blocks.
  std::vector<cache::token> c(16);
  for (std::size_t i = 0; i < 16; ++i) c[i] = static_cast<cache::token>(1000 + i);
  const auto hc = kv.insert(2, c);
  REQUIRE(kv.blocks() <= kv.max_blocks());
  for (const auto id : hc.block_table()) {
    REQUIRE(id < kv.max_blocks());
    REQUIRE(std::find(hb.block_table().begin(), hb.block_table().end(), id) == hb.block_table().end());
  }
  REQUIRE_THROWS_WITH(cache::prefix_cache({.block_tokens = 1, .block_size = bytes{1}, .capacity = bytes{1e12}}),
                      Catch::Contains("more than 2^32 blocks"));
}

}  // namespace cache_prefix_cache_test
