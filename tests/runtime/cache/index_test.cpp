// Both similarity indexes against brute force in double precision: the flat
// index exactly (same top-1, same top-k set), HNSW by measured recall. One body
// runs on every index (the SimilarityIndex laws).
#include <catch2/catch.hpp>

#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

namespace cache_index_test {

using namespace trinity;

namespace {

std::vector<float> random_vectors(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n * d);
  for (auto& x : v) x = normal(gen);
  return v;
}

// Vectors near a few centres, as prompt embeddings of a few topics are.
std::vector<float> clustered(std::size_t n, std::size_t d, std::size_t clusters, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0, 1);
  const auto centres = random_vectors(clusters, d, seed + 1);
  std::vector<float> v(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = i % clusters;
    for (std::size_t k = 0; k < d; ++k) v[i * d + k] = centres[c * d + k] + 0.5f * normal(gen);
  }
  return v;
}

double cosine(const float* a, const float* b, std::size_t d) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t k = 0; k < d; ++k) ab += double(a[k]) * b[k], aa += double(a[k]) * a[k], bb += double(b[k]) * b[k];
  return ab / std::sqrt(aa * bb);
}

// The k best ids by exact cosine, ties to the smaller id.
std::vector<std::uint64_t> brute_force(const std::vector<float>& keys, std::size_t n, const float* q, std::size_t d,
                                       std::size_t k) {
  std::vector<std::pair<double, std::uint64_t>> s;
  for (std::size_t i = 0; i < n; ++i) s.push_back({-cosine(&keys[i * d], q, d), i});
  std::sort(s.begin(), s.end());
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < k && i < s.size(); ++i) ids.push_back(s[i].second);
  return ids;
}

template <class Index>
Index make(std::size_t d);
template <>
cache::flat_index make<cache::flat_index>(std::size_t d) {
  return cache::flat_index(d);
}
template <>
cache::hnsw_index make<cache::hnsw_index>(std::size_t d) {
  return cache::hnsw_index(d, {.initial_capacity = 16});
}

}  // namespace

TEMPLATE_TEST_CASE("an index finds each key first when queried with it, and never returns a removed one",
                   "[cache][index]", cache::flat_index, cache::hnsw_index) {
  constexpr std::size_t n = 300, d = 48;
  const auto keys = clustered(n, d, 6, 7);
  auto index = make<TestType>(d);
  for (std::size_t i = 0; i < n; ++i) index.add(1000 + i, std::span<const float>(&keys[i * d], d));
  CHECK(index.size() == n);
  std::size_t self = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = index.search(std::span<const float>(&keys[i * d], d), 1);
    REQUIRE(r.size() == 1);
    self += r[0].id == 1000 + i;
    CHECK(r[0].similarity == Approx(1.0).margin(1e-5));
  }
  CHECK(self == n);
  for (std::size_t i = 0; i < n; i += 2) CHECK(index.remove(1000 + i));
  CHECK_FALSE(index.remove(1000));
  CHECK(index.size() == n / 2);
  for (std::size_t i = 0; i < n; i += 2) {
    for (const auto& nb : index.search(std::span<const float>(&keys[i * d], d), 5)) CHECK(nb.id % 2 == 1);
  }
  // Removed ids can come back, with new keys.
  index.add(1000, std::span<const float>(&keys[1 * d], d));
  CHECK(index.size() == n / 2 + 1);
  const auto again = index.search(std::span<const float>(&keys[1 * d], d), 2);
  CHECK(std::set<std::uint64_t>{again[0].id, again[1].id} == std::set<std::uint64_t>{1000, 1001});
  CHECK(index.search(std::span<const float>(&keys[0], d), 0).empty());
}

TEMPLATE_TEST_CASE("an index refuses bad keys by name and changes nothing", "[cache][index]", cache::flat_index,
                   cache::hnsw_index) {
  auto index = make<TestType>(4);
  const float good[4] = {1, 0, 0, 0}, zero[4] = {0, 0, 0, 0}, nan[4] = {1, NAN, 0, 0}, three[3] = {1, 2, 3};
  index.add(1, good);
  CHECK_THROWS_WITH(index.add(1, good), Catch::Contains("id") && Catch::Contains("already"));
  CHECK_THROWS_WITH(index.add(2, three), Catch::Contains("key: has 3 floats") && Catch::Contains("dimension 4"));
  CHECK_THROWS_WITH(index.add(2, zero), Catch::Contains("key: is the zero vector"));
  CHECK_THROWS_WITH(index.add(2, nan), Catch::Contains("NaN"));
  CHECK_THROWS_WITH(index.search(three, 1), Catch::Contains("query"));
  CHECK(index.size() == 1);
}

TEST_CASE("the flat index returns brute force's top-1 and top-10, single and batched, on every thread count",
          "[cache][index]") {
  constexpr std::size_t n = 2003, d = 77, nq = 37;  // odd sizes: row, query and lane tails all run
  const auto keys = random_vectors(n, d, 1), queries = random_vectors(nq, d, 2);
  for (unsigned threads : {1u, 2u, 3u}) {
    cache::flat_index index(d, {.threads = threads});
    for (std::size_t i = 0; i < n; ++i) index.add(i, std::span<const float>(&keys[i * d], d));
    const auto batch = index.search_batch(queries, 10);
    REQUIRE(batch.size() == nq);
    for (std::size_t q = 0; q < nq; ++q) {
      const auto want = brute_force(keys, n, &queries[q * d], d, 10);
      const auto one = index.search(std::span<const float>(&queries[q * d], d), 10);
      CHECK(one == batch[q]);
      REQUIRE(one.size() == 10);
      CHECK(one[0].id == want[0]);
      CHECK(one[0].similarity == Approx(cosine(&keys[want[0] * d], &queries[q * d], d)).margin(1e-5));
      std::set<std::uint64_t> got;
      for (const auto& nb : one) got.insert(nb.id);
      CHECK(got == std::set<std::uint64_t>(want.begin(), want.end()));
      CHECK(std::is_sorted(one.begin(), one.end(), [](auto& a, auto& b) { return a.similarity > b.similarity; }));
    }
  }
}

TEST_CASE("every instruction set the CPU has gives the portable kernel's products", "[cache][index]") {
  constexpr std::size_t d = 53;
  const auto rows = random_vectors(4, d, 3), qs = random_vectors(4, d, 4);
  float portable[16], other[16];
  cache::detail::tile_portable<4, 4>(rows.data(), qs.data(), d, portable, 4);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t q = 0; q < 4; ++q) {
      double want = 0;
      for (std::size_t k = 0; k < d; ++k) want += double(rows[r * d + k]) * qs[q * d + k];
      CHECK(portable[r * 4 + q] == Approx(want).margin(1e-4));
    }
  for (auto set : {cache::detail::isa::avx2, cache::detail::isa::avx512}) {
    if (static_cast<int>(cache::detail::best_isa()) < static_cast<int>(set)) continue;  // not on this CPU
    cache::detail::tile<4, 4>(set, rows.data(), qs.data(), d, other, 4);
    for (int i = 0; i < 16; ++i) CHECK(other[i] == Approx(portable[i]).margin(1e-4));
  }
}

TEST_CASE("the inner-product metric scores raw products, the cosine metric unit vectors", "[cache][index]") {
  const float a[2] = {3, 4}, q[2] = {1, 0};
  cache::flat_index ip(2, {.measure = cache::metric::inner_product}), cos(2);
  ip.add(1, a);
  cos.add(1, a);
  CHECK(ip.search(q, 1)[0].similarity == Approx(3.0));
  CHECK(cos.search(q, 1)[0].similarity == Approx(0.6));
}

TEST_CASE("HNSW recall@1 against brute force is measured, and churn reuses graph slots instead of growing",
          "[cache][index]") {
  constexpr std::size_t n = 1500, d = 64, nq = 200;
  const auto keys = clustered(n, d, 20, 11), queries = clustered(nq, d, 20, 12);
  cache::hnsw_index index(d, {.ef_search = 200, .initial_capacity = 256});
  for (std::size_t i = 0; i < n; ++i) index.add(i, std::span<const float>(&keys[i * d], d));
  std::size_t right = 0;
  for (std::size_t q = 0; q < nq; ++q)
    right += index.search(std::span<const float>(&queries[q * d], d), 1)[0].id ==
             brute_force(keys, n, &queries[q * d], d, 1)[0];
  const double recall = double(right) / nq;
  INFO("recall@1 = " << recall);
  CHECK(recall >= 0.95);
  // A cache's churn: remove and add as many again, twice. Every add takes a removed node's slot back: the
  // graph never grows past its high-water mark (it used to fill up and be rebuilt every n adds, a 77 ms
  // stall in a 1000-entry cache).
  const std::size_t high_water = index.slots(), room = index.capacity();
  for (std::size_t round = 1; round <= 2; ++round)
    for (std::size_t i = 0; i < n; ++i) {
      index.remove((round - 1) * n + i);
      index.add(round * n + i, std::span<const float>(&keys[((i + round * 7) % n) * d], d));
      REQUIRE(index.slots() == high_water);
      REQUIRE(index.capacity() == room);
    }
  CHECK(index.size() == n);
  // The reused slots hold the new keys: each is found first when queried with its own vector, and recall holds.
  std::size_t found = 0, again = 0;
  for (std::size_t i = 0; i < n; i += 10)
    found += index.search(std::span<const float>(&keys[((i + 14) % n) * d], d), 1)[0].id == 2 * n + i;
  std::vector<float> moved(keys.size());
  for (std::size_t i = 0; i < n; ++i) std::copy_n(&keys[((i + 14) % n) * d], d, &moved[i * d]);
  for (std::size_t q = 0; q < nq; ++q)
    again += index.search(std::span<const float>(&queries[q * d], d), 1)[0].id ==
             2 * n + brute_force(moved, n, &queries[q * d], d, 1)[0];
  INFO("after churn: found " << found << " of " << n / 10 << ", recall@1 " << double(again) / nq);
  CHECK(found >= n / 10 * 95 / 100);
  CHECK(double(again) / nq >= 0.9);
}

}  // namespace cache_index_test
