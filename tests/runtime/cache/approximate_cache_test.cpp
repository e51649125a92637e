// The approximate cache: the paper's Table 1 at its boundaries, the three
// eviction orders, capacity never exceeded, hits counted per depth with the
// compute they save, and bad input refused without losing anything.
#include <catch2/catch.hpp>

#include <trinity/cache/approximate_cache.hpp>
#include <trinity/cache/eviction.hpp>
#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/reuse_table.hpp>
#include <trinity/units/literals.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace cache_approximate_cache_test {

using namespace trinity;
using namespace trinity::literals;

namespace {

// A unit vector in 2-d at angle θ from (1, 0): its cosine with (1, 0) is cos θ, so similarities are exact.
std::vector<float> at_cosine(double c) { return {static_cast<float>(c), static_cast<float>(std::sqrt(1 - c * c))}; }
const std::vector<float> origin{1, 0};

// An orthogonal basis vector per entry, so no entry is similar to another.
std::vector<float> basis(std::size_t i, std::size_t d) {
  std::vector<float> v(d, 0.0f);
  v[i % d] = 1;
  return v;
}

}  // namespace

TEST_CASE("Table 1 maps similarity to reuse depth at and around its thresholds", "[cache]") {
  constexpr auto t = cache::paper_table_1;
  STATIC_REQUIRE(t.depth(0.96) == 25);
  STATIC_REQUIRE(t.depth(0.95) == 20);  // s > 0.95 → 25, so 0.95 itself is 20
  STATIC_REQUIRE(t.depth(0.9) == 15);
  STATIC_REQUIRE(t.depth(0.85) == 10);
  STATIC_REQUIRE(t.depth(0.8) == 10);
  STATIC_REQUIRE(t.depth(0.75) == 5);
  STATIC_REQUIRE(t.depth(0.7) == 5);
  STATIC_REQUIRE(t.depth(0.65) == 0);
  STATIC_REQUIRE(t.depth(-1.0) == 0);
  STATIC_REQUIRE(t.deepest() == 25);
  CHECK(t.depths() == std::vector<int>{5, 10, 15, 20, 25});
  using fixed = cache::static_reuse<cache::make_reuse_table({{0.9, 8}, {0.5, 2}})>;
  STATIC_REQUIRE(fixed::depth(0.95) == 8);
  STATIC_REQUIRE(fixed::depth(0.6) == 2);
  STATIC_REQUIRE(cache::ReusePolicy<fixed>);
}

TEST_CASE("a run-time reuse table is checked rule by rule, by name", "[cache]") {
  cache::reuse_table t;
  t.rules[0] = {0.9, 10};
  t.rules[1] = {0.95, 5};
  t.count = 2;
  CHECK_THROWS_WITH(cache::runtime_reuse(t),
                    Catch::StartsWith("reuse_table.rules[1].above") && Catch::Contains("fall"));
  t.rules[1] = {0.8, 10};
  CHECK_THROWS_WITH(cache::runtime_reuse(t), Catch::StartsWith("reuse_table.rules[1].depth"));
  t.rules[1] = {1.5, 1};
  CHECK_THROWS_WITH(cache::runtime_reuse(t),
                    Catch::StartsWith("reuse_table.rules[1].above") && Catch::Contains("[-1, 1)"));
  t.count = 0;
  CHECK_THROWS_WITH(cache::runtime_reuse(t), Catch::Contains("from 1 to 16 rules"));
}

TEST_CASE("a hit reuses the deepest stored latent the table allows and saves depth × c_step", "[cache]") {
  cache::approximate_cache<cache::flat_index, cache::lru, cache::runtime_reuse, int> c(
      cache::flat_index(2), {.capacity = 1_GB, .step_cost = 1e9_FLOP});
  auto miss = c.lookup(origin);
  CHECK_FALSE(miss.hit);
  CHECK(miss.similarity == 0);
  // Stored at depths 5 and 15 only: a similarity allowing 20 reuses 15; one allowing 10 reuses 5.
  REQUIRE(c.insert(origin, {{5, 1_MB, 5}, {15, 1_MB, 15}}));
  const auto a = c.lookup(at_cosine(0.92));  // table: 20
  CHECK(a.hit);
  CHECK(a.table_depth == 20);
  CHECK(a.depth == 15);
  CHECK(*a.payload == 15);
  const auto b = c.lookup(at_cosine(0.8));  // table: 10
  CHECK(b.depth == 5);
  CHECK(*b.payload == 5);
  const auto m = c.lookup(at_cosine(0.6));  // table: 0
  CHECK_FALSE(m.hit);
  CHECK(m.similarity == Approx(0.6).margin(1e-6));
  const auto& s = c.stats();
  CHECK(s.lookups == 4);
  CHECK(s.hits == 2);
  CHECK(s.misses == 2);
  CHECK(s.hits_per_depth == std::map<int, std::uint64_t>{{5, 1}, {15, 1}});
  CHECK(s.saved == 2e10_FLOP);  // (15 + 5) × 1e9
  CHECK(c.resident() == 2_MB);
}

TEST_CASE("LRU evicts the least recently inserted or hit entry", "[cache]") {
  cache::approximate_cache<cache::flat_index, cache::lru> c(cache::flat_index(8),
                                                            {.capacity = 3_MB, .step_cost = 1_FLOP});
  for (std::size_t i = 0; i < 3; ++i) REQUIRE(c.insert(basis(i, 8), {{25, 1_MB}}) == i);
  CHECK(c.lookup(basis(0, 8)).hit);  // 0 is now the most recent; 1 is the least
  c.insert(basis(3, 8), {{25, 1_MB}});
  CHECK_FALSE(c.contains(1));
  CHECK(c.contains(0));
  c.insert(basis(4, 8), {{25, 1_MB}});
  CHECK_FALSE(c.contains(2));
  CHECK(c.stats().evictions == 2);
}

TEST_CASE("LFU evicts the entry with fewest hits, the least recent among equals", "[cache]") {
  cache::approximate_cache<cache::flat_index, cache::lfu> c(cache::flat_index(8),
                                                            {.capacity = 3_MB, .step_cost = 1_FLOP});
  for (std::size_t i = 0; i < 3; ++i) c.insert(basis(i, 8), {{25, 1_MB}});
  c.lookup(basis(0, 8));
  c.lookup(basis(0, 8));
  c.lookup(basis(2, 8));
  c.insert(basis(3, 8), {{25, 1_MB}});  // 1 has no hits
  CHECK_FALSE(c.contains(1));
  c.insert(basis(4, 8), {{25, 1_MB}});  // the victim is chosen before 4 arrives: 3, the only entry never hit
  CHECK_FALSE(c.contains(3));
  CHECK(c.contains(0));
  CHECK(c.contains(2));
}

TEST_CASE("benefit-aware eviction keeps what saves the most compute per byte", "[cache]") {
  // Entry 0 is large and saves little per hit; entry 1 small and deep. Entry 0 goes first though it was hit last.
  cache::approximate_cache<cache::flat_index, cache::benefit_aware> c(cache::flat_index(8),
                                                                      {.capacity = 10_MB, .step_cost = 1_FLOP});
  c.insert(basis(0, 8), {{5, 8_MB}});
  c.insert(basis(1, 8), {{25, 1_MB}});
  c.lookup(basis(1, 8));
  c.lookup(basis(0, 8));
  c.insert(basis(2, 8), {{25, 2_MB}});
  CHECK_FALSE(c.contains(0));
  CHECK(c.contains(1));
  CHECK(c.contains(2));
  cache::benefit_aware p;
  CHECK(p.priority({.size_bytes = 2, .hits = 1, .saved_flops = 10, .deepest_saving_flops = 99}) == Approx(10.0));
  CHECK(p.priority({.size_bytes = 2, .hits = 0, .saved_flops = 0, .deepest_saving_flops = 4}) == Approx(2.0));
}

TEMPLATE_TEST_CASE("capacity is never exceeded over random inserts and lookups, on every policy", "[cache]", cache::lru,
                   cache::lfu, cache::benefit_aware) {
  cache::approximate_cache<cache::flat_index, TestType> c(cache::flat_index(16),
                                                          {.capacity = 50_MB, .step_cost = 1_FLOP});
  std::mt19937_64 gen(5);
  std::normal_distribution<float> normal(0, 1);
  std::uniform_int_distribution<int> mb(1, 12);
  double worst = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<float> k(16);
    for (auto& x : k) x = normal(gen);
    c.lookup(k);
    c.insert(k, {{5, bytes{mb(gen) * 1e6}}, {25, bytes{mb(gen) * 1e6}}});
    worst = std::max(worst, c.resident().value());
    REQUIRE(c.index().size() == c.entries());
  }
  CHECK(worst <= 50e6);
  CHECK(c.stats().evictions > 100);
}

TEST_CASE("an entry larger than the cache is refused, a bad key evicts nothing", "[cache]") {
  cache::approximate_cache<> c(cache::flat_index(2), {.capacity = 10_MB, .step_cost = 1_FLOP});
  c.insert(origin, {{25, 6_MB}});
  CHECK_FALSE(c.insert(at_cosine(0.1), {{25, 11_MB}}));
  CHECK(c.stats().rejected == 1);
  const std::vector<float> bad{0, 0};
  CHECK_THROWS_WITH(c.insert(bad, {{25, 6_MB}}), Catch::Contains("zero vector"));
  CHECK(c.entries() == 1);  // the 6 MB entry was not evicted for a key that never went in
  CHECK(c.resident() == 6_MB);
  CHECK_THROWS_WITH(c.insert(origin, {}), Catch::StartsWith("latents"));
  CHECK_THROWS_WITH(c.insert(origin, {{0, 1_MB}}), Catch::StartsWith("latents[0].depth"));
  CHECK_THROWS_WITH((cache::approximate_cache<>(cache::flat_index(2), {.capacity = bytes{-1.0}})),
                    Catch::StartsWith("capacity"));
  CHECK(c.erase(0));
  CHECK_FALSE(c.erase(0));
  CHECK(c.resident() == 0_B);
}

}  // namespace cache_approximate_cache_test
