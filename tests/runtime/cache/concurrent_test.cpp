// Caches shared between threads (run under ThreadSanitizer by scripts/test.sh):
// concurrent lookups and inserts through cache::synchronized, and the flat
// index's own search threads. Invariants, not timings, are checked.
#include <catch2/catch.hpp>

#include <trinity/cache/approximate_cache.hpp>
#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>
#include <trinity/cache/prefix_cache.hpp>
#include <trinity/cache/synchronized.hpp>
#include <trinity/units/literals.hpp>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace cache_concurrent_test {

using namespace trinity;
using namespace trinity::literals;

namespace {
template <class TestType>
void concurrent_lookups_and_inserts() {
  constexpr std::size_t d = 32;
  constexpr int threads = 4, per_thread = 400;
  cache::synchronized<cache::approximate_cache<TestType>> shared(
      cache::approximate_cache<TestType>(TestType(d), {.capacity = 40_MB, .step_cost = 1e9_FLOP}));
  std::atomic<std::uint64_t> hits{0}, over{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 gen(static_cast<std::uint64_t>(t));
      std::normal_distribution<float> normal(0, 1);
      std::uniform_int_distribution<int> topic(0, 7);
      std::vector<float> centre(d), k(d);
      for (int i = 0; i < per_thread; ++i) {
        std::mt19937_64 c(static_cast<std::uint64_t>(topic(gen)));  // eight shared topics
        for (auto& x : centre) x = std::normal_distribution<float>(0, 1)(c);
        for (std::size_t j = 0; j < d; ++j) k[j] = centre[j] + 0.3f * normal(gen);
        const auto r = shared.lookup(k);
        hits += r.hit;
        if (!r.hit || r.depth < 25) shared.insert(k, std::vector<cache::stored_latent<>>{{5, 1_MB}, {25, 1_MB}});
        shared.with([&](auto& c2) { over += c2.resident() > c2.capacity(); });
      }
    });
  for (auto& th : pool) th.join();
  const auto s = shared.stats();
  CHECK(s.lookups == threads * per_thread);
  CHECK(s.hits == hits.load());
  CHECK(s.hits + s.misses == s.lookups);
  CHECK(over.load() == 0);
  shared.with([](auto& c) {
    CHECK(c.index().size() == c.entries());
    CHECK(c.resident().value() == Approx(2e6 * static_cast<double>(c.entries())));
  });
}
}  // namespace

TEST_CASE("concurrent lookups and inserts keep the counts and the capacity: flat index", "[cache][concurrent]") {
  concurrent_lookups_and_inserts<cache::flat_index>();
}

// [hnsw]: the ThreadSanitizer run checks these for data races but not for lock order, which inside hnswlib 0.6's
// addPoint is its own (tests/CMakeLists.txt says how).
TEST_CASE("concurrent lookups and inserts keep the counts and the capacity: HNSW index", "[cache][concurrent][hnsw]") {
  concurrent_lookups_and_inserts<cache::hnsw_index>();
}

TEST_CASE("a prefix cache shared through a mutex keeps its block counts under concurrent use", "[cache][concurrent]") {
  cache::synchronized<cache::prefix_cache*> unused(nullptr);  // the wrapper holds any type, pointers too
  (void)unused;
  cache::prefix_cache kv({.block_tokens = 4, .block_size = 1_kB, .capacity = 64_kB});
  std::mutex m;
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 gen(static_cast<std::uint64_t>(t) + 10);
      std::uniform_int_distribution<cache::token> tok(0, 3);
      for (int i = 0; i < 500; ++i) {
        std::vector<cache::token> s(24);
        for (auto& x : s) x = tok(gen);
        std::lock_guard lock(m);
        auto held = kv.insert(static_cast<std::uint64_t>(t % 2), s);
        REQUIRE(kv.blocks() <= kv.max_blocks());
      }
    });
  for (auto& th : pool) th.join();
  CHECK(kv.stats().evicted_blocks + kv.blocks() == kv.stats().inserted_blocks);
}

TEST_CASE("the flat index's search threads agree with a single-threaded search", "[cache][concurrent]") {
  constexpr std::size_t n = 20000, d = 64;  // large enough that the search splits across threads
  std::mt19937_64 gen(9);
  std::normal_distribution<float> normal(0, 1);
  cache::flat_index many(d, {.threads = 4}), one(d, {.threads = 1});
  std::vector<float> v(d);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto& x : v) x = normal(gen);
    many.add(i, v);
    one.add(i, v);
  }
  std::vector<float> q(8 * d);
  for (auto& x : q) x = normal(gen);
  CHECK(many.search_batch(q, 5) == one.search_batch(q, 5));
}

TEST_CASE("HNSW's batched search on several threads gives each query's own search", "[cache][concurrent][hnsw]") {
  constexpr std::size_t n = 2000, d = 32, nq = 64;
  std::mt19937_64 gen(21);
  std::normal_distribution<float> normal(0, 1);
  cache::hnsw_index index(d, {.threads = 4});
  std::vector<float> v(d), q(nq * d);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto& x : v) x = normal(gen);
    index.add(i, v);
  }
  for (auto& x : q) x = normal(gen);
  const auto batch = index.search_batch(q, 3);
  REQUIRE(batch.size() == nq);
  for (std::size_t i = 0; i < nq; ++i) CHECK(batch[i] == index.search(std::span<const float>(&q[i * d], d), 3));
}

}  // namespace cache_concurrent_test
