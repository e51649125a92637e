#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <trinity/detail/splitmix.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/retrieval/hnsw/hnsw_index.hpp>
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/synthetic.hpp>
#include <trinity/retrieval/hnsw/tiered_hnsw.hpp>

#include "recorded_runs.hpp"

namespace retrieval_tiered_hnsw_test {

using namespace trinity;

namespace {

constexpr std::size_t d = 32, n = 4000;

// SYNTHETIC clustered vectors (retrieval::clustered_vectors), queries from the same clusters.
struct fixture {
  std::vector<float> data = retrieval::clustered_vectors(n, d, 1, {.clusters = 64});
  std::vector<float> queries = retrieval::clustered_vectors(200, d, 2, {.clusters = 64});
  retrieval::hnsw_index index{d, {.m = 8, .ef_construction = 64}};
  fixture() { index.add(data, 0); }
  std::span<const float> query(std::size_t q) const { return std::span<const float>(queries).subspan(q * d, d); }
};

}  // namespace

TEST_CASE("HNSW: recall@10 against the exact search grows with ef", "[retrieval][hnsw]") {
  fixture f;
  CHECK(f.index.size() == n);
  double previous = 0;
  for (const std::size_t ef : {10u, 40u, 160u}) {
    double found = 0;
    for (std::size_t q = 0; q < 100; ++q) {
      std::set<std::uint64_t> truth;
      for (const auto& t : retrieval::exact_search(f.data, d, f.query(q), 10)) truth.insert(t.id);
      for (const auto& h : f.index.search(f.query(q), 10, ef)) found += truth.contains(h.id);
    }
    CAPTURE(ef, found);
    CHECK(found >= previous);
    previous = found;
  }
  CHECK(previous >= 990);  // ef 160: at least 99% of the true neighbours
}

TEST_CASE("a tiered HNSW finds hnswlib's hits at every placement and ef", "[retrieval][hnsw]") {
  fixture f;
  place::tier_resource fast("hbm", bytes{4e6}), capacity("cxl-capacity", bytes{4e6});
  retrieval::tiered_hnsw tiered(f.index, {&fast, &capacity});
  const auto frequency = tiered.visit_frequency(std::span<const float>(f.queries).subspan(100 * d), 10, 32);
  std::size_t all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) all += tiered.node_bytes(v);
  for (const double share : {0.0, 0.1, 0.5, 1.0}) {
    tiered.place(frequency, static_cast<std::size_t>(share * static_cast<double>(all)));
    for (const std::size_t ef : {1u, 10u, 64u})
      for (std::size_t q = 0; q < 40; ++q) {
        CAPTURE(share, ef, q);
        CHECK(tiered.search(f.query(q), 10, ef) == f.index.search(f.query(q), 10, ef));
      }
  }
}

TEST_CASE("a tiered HNSW keeps its upper layers fast and reads more of the fast tier as it grows",
          "[retrieval][hnsw]") {
  fixture f;
  place::tier_resource fast("hbm", bytes{4e6}), capacity("cxl-capacity", bytes{4e6});
  retrieval::tiered_hnsw tiered(f.index, {&fast, &capacity});
  const auto layers = f.index.layers();
  std::size_t upper = 0, all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) {
    all += tiered.node_bytes(v);
    if (layers.level[v] > 0) {
      ++upper;
      CHECK(tiered.tier_of(v) == 0);
    } else {
      CHECK(tiered.tier_of(v) == 1);
    }
  }
  CHECK(upper > 0);
  CHECK(upper < n / 4);  // levels fall off geometrically: about n / m nodes above the bottom layer
  CHECK(tiered.upper_bytes() < all / 4);
  // Node bytes: the vector, and a count and the neighbours of every level's list.
  std::size_t expect = d * 4;
  for (const auto& l : layers.links[0]) expect += (l.size() + 1) * 4;
  CHECK(tiered.node_bytes(0) == expect);

  const auto frequency = tiered.visit_frequency(std::span<const float>(f.queries).subspan(100 * d), 10, 32);
  double total = -1, share = -1;
  for (const double budget : {0.0, 0.25, 0.5, 1.0}) {
    const auto placed = tiered.place(frequency, static_cast<std::size_t>(budget * static_cast<double>(all)));
    CHECK(placed >= tiered.upper_bytes());
    CHECK(fast.used() >= placed);
    tiered.reset_traffic();
    for (std::size_t q = 0; q < 100; ++q) (void)tiered.search(f.query(q), 10, 32);
    const auto& t = tiered.traffic();
    CAPTURE(budget, t.bytes[0], t.bytes[1]);
    // Placement moves bytes between tiers and never changes how many a search reads.
    if (total >= 0) CHECK(t.bytes[0] + t.bytes[1] == total);
    total = t.bytes[0] + t.bytes[1];
    const double now = t.bytes[0] / total;
    CHECK(now >= share);
    share = now;
  }
  CHECK(share == 1.0);  // everything fast: nothing read from the capacity tier
}

TEST_CASE("a tiered HNSW's reads taken apart: vectors scored, link lists and their bytes, per tier",
          "[retrieval][hnsw]") {
  fixture f;
  place::tier_resource fast("hbm", bytes{4e6}), capacity("cxl-capacity", bytes{4e6});
  retrieval::tiered_hnsw tiered(f.index, {&fast, &capacity});
  const auto placing = std::span<const float>(f.queries).subspan(100 * d);
  const auto frequency = tiered.visit_frequency(placing, 10, 32);
  std::size_t all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) all += tiered.node_bytes(v);
  tiered.place(frequency, all / 5);
  tiered.reset_traffic();
  // The same queries visit_frequency walked: each vector it counted is one this search scores.
  for (std::size_t q = 100; q < 200; ++q) (void)tiered.search(f.query(q), 10, 32);
  const auto& t = tiered.traffic();
  const auto& r = tiered.reads();
  double visits = 0, fast_visits = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) {
    visits += frequency[v];
    if (tiered.tier_of(v) == 0) fast_visits += frequency[v];
  }
  CHECK(r.vectors[0] + r.vectors[1] == visits);
  CHECK(r.vectors[0] == fast_visits);
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(r.vectors[i] + r.lists[i] == t.reads[i]);
    CHECK(r.vectors[i] * d * 4 + r.list_bytes[i] == t.bytes[i]);
    // A list is its count and at most 2m neighbours at the bottom layer (m 8), at least its count.
    CHECK(r.list_bytes[i] >= 4 * r.lists[i]);
    CHECK(r.list_bytes[i] <= 4 * 17 * r.lists[i]);
  }
  // Every list read is a node expanded: fewer than the vectors scored, each scored once a walk.
  CHECK(r.lists[0] + r.lists[1] < r.vectors[0] + r.vectors[1]);
  tiered.reset_traffic();
  CHECK(tiered.reads().vectors[0] + tiered.reads().lists[1] == 0);
}

TEST_CASE("a tiered HNSW's bottom-layer nodes moved online by the dynamic tiering policy, the hits unchanged",
          "[retrieval][hnsw]") {
  // The nodes start spilled in order; queries over a few topics move the nodes they read into the fast tier, epoch
  // by epoch: the fast tier's share of the bytes read rises toward the static placement's, and no hit changes.
  fixture f;
  // 240 queries about 8 topics: each near one of 8 of the corpus's vectors.
  std::vector<float> skewed;
  std::uint64_t seed = 7;
  for (std::size_t q = 0; q < 240; ++q)
    for (std::size_t i = 0; i < d; ++i)
      skewed.push_back(f.data[(q % 8) * 97 * d + i] +
                       0.05f * (static_cast<float>(trinity::detail::splitmix_next(seed) % 1024) / 1024.0f - 0.5f));
  const std::size_t queries = skewed.size() / d;
  place::tier_resource fast("hbm", bytes{4e6}), capacity("cxl-capacity", bytes{4e6});
  retrieval::tiered_hnsw tiered(f.index, {&fast, &capacity});
  std::size_t all = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v) all += tiered.node_bytes(v);
  const std::size_t budget = tiered.upper_bytes() + (all - tiered.upper_bytes()) / 4;
  const auto& policy = tiered.follow({.epoch = 2000, .sample_period = 1, .decay = 0.5, .hysteresis = 1.2}, budget);
  const auto query = [&](std::size_t q) { return std::span<const float>(skewed).subspan((q % queries) * d, d); };
  std::vector<double> share;
  for (std::size_t q = 0; q < 4 * queries; ++q) {
    if (q % queries == 0) tiered.reset_traffic();
    REQUIRE(tiered.search(query(q), 10, 32) == f.index.search(query(q), 10, 32));
    if (q % queries == queries - 1)
      share.push_back(tiered.traffic().bytes[0] / (tiered.traffic().bytes[0] + tiered.traffic().bytes[1]));
  }
  // Beside it, the static placement from the same queries' measured visits.
  retrieval::tiered_hnsw best(f.index, {&fast, &capacity});
  best.place(best.visit_frequency(skewed, 10, 32), budget);
  for (std::size_t q = 0; q < queries; ++q) (void)best.search(query(q), 10, 32);
  const double ideal = best.traffic().bytes[0] / (best.traffic().bytes[0] + best.traffic().bytes[1]);
  CAPTURE(share[0], share[3], ideal, policy.migrations());
  CHECK(policy.migrations() > 0);
  CHECK(share[3] > share[0]);
  CHECK(share[3] >= 0.9 * ideal);
  // The upper layers stay fast; the bottom layer's nodes sit where the policy put them, within the budget.
  const auto layers = f.index.layers();
  std::size_t in_fast = 0;
  for (std::size_t v = 0; v < tiered.nodes(); ++v)
    if (tiered.tier_of(v) == 0)
      in_fast += tiered.node_bytes(v);
    else
      CHECK(layers.level[v] == 0);
  CHECK(in_fast <= budget);
  CHECK_THROWS_WITH(tiered.follow({}, tiered.upper_bytes() - 1),
                    Catch::Contains("fast_bytes") && Catch::Contains("upper layers"));
}

TEST_CASE("HNSW refuses what it cannot build or place", "[retrieval][hnsw]") {
  CHECK_THROWS_WITH(retrieval::hnsw_index(0), Catch::Contains("dimension"));
  retrieval::hnsw_index empty(d);
  const std::vector<float> q(d, 0.0f);
  CHECK_THROWS_WITH(empty.search(q, 10, 10), Catch::Contains("is empty"));
  fixture f;
  CHECK_THROWS_WITH(f.index.add(std::span<const float>(f.data).first(d), n), Catch::Contains("built by one add()"));
  place::tier_resource tiny("hbm", bytes{1e3}), capacity("cxl-capacity", bytes{4e6});
  CHECK_THROWS_AS(retrieval::tiered_hnsw(f.index, {&tiny, &capacity}), place::capacity_exceeded);
  place::tier_resource fast("hbm", bytes{4e6});
  retrieval::tiered_hnsw tiered(f.index, {&fast, &capacity});
  const std::vector<double> wrong(3, 1.0);
  CHECK_THROWS_WITH(tiered.place(wrong, 1000), Catch::Contains("frequency"));
}

TEST_CASE("the recorded run beside FAISS's HNSW: recall as FAISS's, the tiered graph's exactly the untiered's",
          "[retrieval][hnsw]") {
  // bench/retrieval.cpp, recorded on the ci build: at each ef, hnswlib's graph finds about what FAISS's
  // IndexHNSWFlat finds with the same M and construction beam (each builds its own graph: recall within 0.05),
  // answers at least as many queries a second, and the tiered graph finds exactly what the untiered one does,
  // its upper layers and hot nodes a tenth of the bytes yet a fifth or more of the bytes read.
  const test::recorded_runs r("retrieval-ci.json");
  for (const std::string ef : {"16", "64"}) {
    CAPTURE(ef);
    const std::string faiss = "hnsw/faiss/" + ef, mine = "hnsw/trinity/" + ef, tiered = "hnsw/tiered/" + ef;
    CHECK(std::abs(r(mine, "recall_at_10") - r(faiss, "recall_at_10")) <= 0.05);
    CHECK(r(tiered, "recall_at_10") == r(mine, "recall_at_10"));
    CHECK(r(mine, "x_faiss") >= 1.0);
    CHECK(r(tiered, "fast_tier_share") >= 0.2);
  }
  CHECK(r.on_ci_build());
}

}  // namespace retrieval_tiered_hnsw_test
