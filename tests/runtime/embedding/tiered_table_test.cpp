#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/embedding/tiered_table.hpp>
#include <trinity/model/embedding_lookup.hpp>
#include <trinity/detail/splitmix.hpp>
#include <trinity/place/tier_resource.hpp>

namespace embedding_tiered_table_test {

using namespace trinity;

namespace {

// A SYNTHETIC lookup trace: `batches` batches of `bags` bags, each of 1 to 2·pooling - 1 rows drawn Zipf(alpha)
// over `rows` rows (rank r drawn with weight 1/(r + 1)^alpha, the ranks shuffled over the rows), from a seed.
struct trace {
  std::vector<std::vector<std::uint64_t>> indices;
  std::vector<std::vector<std::size_t>> offsets;
};
trace zipf_trace(std::size_t rows, std::size_t batches, std::size_t bags, std::size_t pooling, double alpha,
                 std::uint64_t seed) {
  std::vector<double> cdf(rows);
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) cdf[r] = total += 1.0 / std::pow(static_cast<double>(r + 1), alpha);
  std::vector<std::uint64_t> row_of(rows);
  for (std::size_t r = 0; r < rows; ++r) row_of[r] = (r * 7919) % rows;  // 7919 is prime: a permutation
  trace t;
  std::uint64_t s = seed;
  for (std::size_t b = 0; b < batches; ++b) {
    std::vector<std::uint64_t> idx;
    std::vector<std::size_t> off{0};
    for (std::size_t g = 0; g < bags; ++g) {
      const std::size_t n = 1 + trinity::detail::splitmix_next(s) % (2 * pooling - 1);
      for (std::size_t k = 0; k < n; ++k) {
        const double u = static_cast<double>(trinity::detail::splitmix_next(s) >> 11) * 0x1p-53 * total;
        idx.push_back(row_of[static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin())]);
      }
      off.push_back(idx.size());
    }
    t.indices.push_back(std::move(idx));
    t.offsets.push_back(std::move(off));
  }
  return t;
}

// An independent reference cache: a list of (row, uses, last use), evicting by a scan.
std::uint64_t reference_hits(const trace& t, std::size_t capacity, embedding::cache_policy policy) {
  struct held {
    std::uint64_t row, last;
  };
  std::vector<held> cache;
  std::vector<std::uint64_t> uses(1 << 20, 0);
  std::uint64_t hits = 0, tick = 0;
  for (const auto& batch : t.indices)
    for (const auto i : batch) {
      ++uses[i];
      ++tick;
      const auto it = std::find_if(cache.begin(), cache.end(), [&](const held& h) { return h.row == i; });
      if (it != cache.end()) {
        ++hits;
        it->last = tick;
        continue;
      }
      if (capacity == 0) continue;
      if (cache.size() == capacity) {
        const auto victim = std::min_element(cache.begin(), cache.end(), [&](const held& a, const held& b) {
          if (policy == embedding::cache_policy::lru) return a.last < b.last;
          return uses[a.row] != uses[b.row] ? uses[a.row] < uses[b.row] : a.last < b.last;
        });
        cache.erase(victim);
      }
      cache.push_back({i, tick});
    }
  return hits;
}

std::vector<float> table_values(std::size_t rows, std::size_t dim) {
  std::vector<float> v(rows * dim);
  std::uint64_t s = 3;
  for (auto& x : v)
    x = static_cast<float>(static_cast<double>(trinity::detail::splitmix_next(s) >> 40) * 0x1p-24 - 0.5);
  return v;
}
}  // namespace

TEST_CASE("a tiered table's bags are the plain gather's, bit for bit, cached or not", "[embedding]") {
  const std::size_t rows = 2000, dim = 16;
  const auto values = table_values(rows, dim);
  const auto t = zipf_trace(rows, 20, 32, 4, 1.05, 9);
  for (const auto policy : {embedding::cache_policy::lru, embedding::cache_policy::lfu})
    for (const std::size_t cached : {0u, 50u, 400u, 2000u})
      for (const bool prefetch : {false, true})
        for (const auto pool : {embedding::pooling::sum, embedding::pooling::mean}) {
          place::tier_resource fast("hbm", bytes{1e6}), capacity("cxl-capacity", bytes{1e7});
          place::tier_resource* tiers[] = {&fast, &capacity};
          embedding::tiered_table table(rows, dim, values, tiers, cached, policy);
          for (std::size_t b = 0; b < t.indices.size(); ++b) {
            const embedding::bag_batch batch{t.indices[b], t.offsets[b]};
            std::vector<float> want(batch.bags() * dim), got(want.size());
            embedding::embedding_bag(values, dim, batch, pool, want);
            if (prefetch) table.prefetch(batch);
            table.bag(batch, pool, got);
            REQUIRE(got == want);
          }
        }
}

TEST_CASE("replayed hit rates equal an independent LRU and LFU, and bytes per tier follow the hits", "[embedding]") {
  const std::size_t rows = 5000, dim = 8;
  const auto values = table_values(rows, dim);
  const auto t = zipf_trace(rows, 40, 64, 3, 1.1, 21);
  std::uint64_t lookups = 0;
  for (const auto& b : t.indices) lookups += b.size();
  for (const auto policy : {embedding::cache_policy::lru, embedding::cache_policy::lfu}) {
    std::uint64_t previous = 0;
    for (const std::size_t cached : {0u, 16u, 128u, 1024u, 5000u}) {
      CAPTURE(cached, policy == embedding::cache_policy::lru);
      place::tier_resource fast("hbm", bytes{1e6}), capacity("cxl-capacity", bytes{1e7});
      place::tier_resource* tiers[] = {&fast, &capacity};
      embedding::tiered_table table(rows, dim, values, tiers, cached, policy);
      std::vector<float> out;
      for (std::size_t b = 0; b < t.indices.size(); ++b) {
        const embedding::bag_batch batch{t.indices[b], t.offsets[b]};
        out.resize(batch.bags() * dim);
        table.bag(batch, embedding::pooling::sum, out);
      }
      const auto& x = table.traffic();
      CHECK(x.hits == reference_hits(t, cached, policy));
      CHECK(x.hits + x.misses == lookups);
      // A miss reads its row from the capacity tier; every lookup through a cache then reads the fast tier.
      const double row = dim * 4.0;
      CHECK(x.bytes[1] == static_cast<double>(x.misses) * row);
      CHECK(x.bytes[0] == (cached ? static_cast<double>(lookups) * row : 0.0));
      // The lookup model at the replayed hit rate counts the same bytes and reads per tier.
      const auto m = model::embedding_lookup_traffic(static_cast<double>(lookups), row, x.hit_rate(), cached > 0);
      for (std::size_t k = 0; k < 2; ++k) {
        CHECK(m.bytes[k] == Approx(x.bytes[k]).margin(1e-6));
        CHECK(m.reads[k] == Approx(x.reads[k]).margin(1e-9));
      }
      // LRU keeps what a smaller LRU keeps (its stack property): its hits never fall as the cache grows.
      if (policy == embedding::cache_policy::lru) CHECK(x.hits >= previous);
      previous = x.hits;
    }
  }
}

TEST_CASE("prefetching a batch brings its rows in: its lookups then all hit", "[embedding]") {
  const std::size_t rows = 1000, dim = 8;
  const auto values = table_values(rows, dim);
  const auto t = zipf_trace(rows, 5, 16, 4, 1.0, 4);
  place::tier_resource fast("hbm", bytes{1e6}), capacity("cxl-capacity", bytes{1e7});
  place::tier_resource* tiers[] = {&fast, &capacity};
  embedding::tiered_table table(rows, dim, values, tiers, 512, embedding::cache_policy::lfu);
  for (std::size_t b = 0; b < t.indices.size(); ++b) {
    const embedding::bag_batch batch{t.indices[b], t.offsets[b]};
    std::vector<float> out(batch.bags() * dim);
    table.reset_traffic();
    table.prefetch(batch);
    table.bag(batch, embedding::pooling::mean, out);
    CHECK(table.traffic().misses == 0);
    CHECK(table.traffic().hits == batch.indices.size());
    CHECK(table.traffic().bytes[1] == static_cast<double>(table.traffic().prefetched) * dim * 4);
  }
}

TEST_CASE("prefetching into a full cache evicts none of the batch's own rows", "[embedding]") {
  // A cache barely larger than a batch's rows, full from the batches before: under LFU every row just brought in
  // has the fewest uses, so without pinning each would evict the one before it and the batch would miss.
  const std::size_t rows = 1000, dim = 4;
  const auto values = table_values(rows, dim);
  const auto t = zipf_trace(rows, 12, 8, 2, 0.8, 6);
  for (const auto policy : {embedding::cache_policy::lru, embedding::cache_policy::lfu}) {
    place::tier_resource fast("hbm", bytes{1e6}), capacity("cxl-capacity", bytes{1e7});
    place::tier_resource* tiers[] = {&fast, &capacity};
    embedding::tiered_table table(rows, dim, values, tiers, 24, policy);
    for (std::size_t b = 0; b < t.indices.size(); ++b) {
      const embedding::bag_batch batch{t.indices[b], t.offsets[b]};
      REQUIRE(std::set<std::uint64_t>(t.indices[b].begin(), t.indices[b].end()).size() <= 24);
      std::vector<float> out(batch.bags() * dim), want(out.size());
      table.reset_traffic();
      table.prefetch(batch);
      table.bag(batch, embedding::pooling::sum, out);
      embedding::embedding_bag(values, dim, batch, embedding::pooling::sum, want);
      CHECK(out == want);
      CHECK(table.traffic().misses == 0);
    }
  }
}

TEST_CASE("a tiered table refuses what does not fit and batches that are not well formed", "[embedding]") {
  const auto values = table_values(100, 8);
  place::tier_resource fast("hbm", bytes{64}), capacity("cxl-capacity", bytes{1e6});
  place::tier_resource* tiers[] = {&fast, &capacity};
  CHECK_THROWS_AS(embedding::tiered_table(100, 8, values, tiers, 10, embedding::cache_policy::lru),
                  place::capacity_exceeded);  // 10 rows of 32 bytes in 64
  embedding::tiered_table table(100, 8, values, tiers, 2, embedding::cache_policy::lru);
  const std::uint64_t idx[] = {1, 2, 300};
  const std::size_t off[] = {0, 2, 3};
  std::vector<float> out(2 * 8);
  CHECK_THROWS_WITH(table.bag({idx, off}, embedding::pooling::sum, out), Catch::Contains("indices: index 300"));
  const std::size_t falling[] = {0, 3, 2, 3};
  CHECK_THROWS_WITH(table.bag({idx, falling}, embedding::pooling::sum, out), Catch::Contains("offsets: fall"));
  const std::size_t short_off[] = {0, 2};
  CHECK_THROWS_WITH(table.bag({idx, short_off}, embedding::pooling::sum, out), Catch::Contains("offsets: must run"));
}

}  // namespace embedding_tiered_table_test
