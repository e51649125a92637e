// Trace replay and its inputs: .fvecs and CSV read as hostile input, the
// synthetic generator, and the replay semantics on a trace small enough to
// work out by hand.
#include <catch2/catch.hpp>

#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/units/literals.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

namespace cache_replay_test {

using namespace trinity;
using namespace trinity::literals;

namespace {
std::vector<std::byte> fvecs_bytes(std::initializer_list<std::pair<std::int32_t, std::vector<float>>> rows) {
  std::vector<std::byte> out;
  for (const auto& [d, v] : rows) {
    const auto* p = reinterpret_cast<const std::byte*>(&d);
    out.insert(out.end(), p, p + 4);
    const auto* q = reinterpret_cast<const std::byte*>(v.data());
    out.insert(out.end(), q, q + 4 * v.size());
  }
  return out;
}
}  // namespace

TEST_CASE(".fvecs round-trips, and every malformed file is refused with the vector and byte named", "[cache][trace]") {
  cache::embedding_matrix m{3, {1, 2, 3, 4, 5, 6}};
  const auto path = (std::filesystem::temp_directory_path() / "trinity-test.fvecs").string();
  cache::write_fvecs(path, m);
  const auto back = cache::read_fvecs(path);
  CHECK(back.dimension == 3);
  CHECK(back.values == m.values);
  std::filesystem::remove(path);

  CHECK(cache::parse_fvecs(fvecs_bytes({{2, {1, 2}}, {2, {3, 4}}})).rows() == 2);
  CHECK_THROWS_WITH(cache::parse_fvecs({}), Catch::Contains("is empty"));
  CHECK_THROWS_WITH(cache::parse_fvecs(fvecs_bytes({{0, {}}})), Catch::Contains("dimension 0"));
  CHECK_THROWS_WITH(cache::parse_fvecs(fvecs_bytes({{-5, {}}})), Catch::Contains("dimension -5"));
  CHECK_THROWS_WITH(cache::parse_fvecs(fvecs_bytes({{1 << 30, {}}})), Catch::Contains("expected 1 to 65536"));
  auto truncated = fvecs_bytes({{2, {1, 2}}, {2, {3, 4}}});
  truncated.pop_back();
  CHECK_THROWS_WITH(cache::parse_fvecs(truncated), Catch::Contains("not a whole number"));
  CHECK_THROWS_WITH(cache::parse_fvecs(fvecs_bytes({{2, {1, 2}}, {3, {3, 4}}})),
                    Catch::Contains("vector 1 (byte 12) declares dimension 3"));
  CHECK_THROWS_WITH(cache::parse_fvecs(fvecs_bytes({{2, {1, 2}}, {2, {NAN, 4}}})),
                    Catch::Contains("vector 1 value 0 (byte 16) is NaN"));
  CHECK_THROWS_WITH(cache::read_fvecs("/nonexistent/x.fvecs"),
                    Catch::Contains("/nonexistent/x.fvecs: cannot be read: no such file"));
}

TEST_CASE("a trace CSV is read in timestamp order, and a bad line is named with its number", "[cache][trace]") {
  const auto t = cache::parse_trace("timestamp,row\n3.5,2\n\n1,0\r\n3.5,1\n", 3, "t.csv");
  REQUIRE(t.size() == 3);
  CHECK(t[0].row == 0);
  CHECK(t[1].row == 2);  // ties keep file order
  CHECK(t[2].row == 1);
  CHECK_THROWS_WITH(cache::parse_trace("1,0\n2,3\n", 3, "t.csv"),
                    Catch::StartsWith("t.csv:2") && Catch::Contains("row 3 is past the 3 vectors"));
  CHECK_THROWS_WITH(cache::parse_trace("1,0\nx,1\n", 3, "t.csv"),
                    Catch::StartsWith("t.csv:2") && Catch::Contains("timestamp 'x'"));
  CHECK_THROWS_WITH(cache::parse_trace("1,-1\n", 3, "t.csv"), Catch::Contains("row '-1' is not a whole number"));
  CHECK_THROWS_WITH(cache::parse_trace("1,0,2\n", 3, "t.csv"), Catch::Contains("two columns"));
  CHECK_THROWS_WITH(cache::parse_trace("inf,0\n", 3, "t.csv"), Catch::Contains("finite"));
  CHECK_THROWS_WITH(cache::parse_trace("timestamp,row\n", 3, "t.csv"), Catch::Contains("holds no requests"));
}

TEST_CASE("replay follows the documented semantics on a trace worked by hand", "[cache][trace]") {
  // 2-d unit vectors, so every similarity is a known cosine. Entry = 5 latents × 1 MB; capacity two entries.
  const double c92 = 0.92, s92 = std::sqrt(1 - c92 * c92);
  cache::embedding_matrix e{2,
                            {1, 0,                                      // row 0: A
                             0.96f, float(std::sqrt(1 - 0.96 * 0.96)),  // row 1: cos 0.96 to A → depth 25
                             0, 1,                                      // row 2: B, orthogonal to A
                             float(s92), float(c92),                    // row 3: cos 0.92 to B → depth 20
                             1, 0}};                                    // row 4: A again, after A was evicted
  // Timestamps out of file order: replay runs them sorted.
  const auto trace = cache::parse_trace("0,0\n4,4\n1,1\n3,3\n2,2\n", e.rows());
  cache::approximate_cache<> c(cache::flat_index(2), {.capacity = 10_MB, .step_cost = 1e9_FLOP});
  const auto r = cache::replay(
      c, e, trace, {.capacity = 10_MB, .latent_size = 1_MB, .step_cost = 1e9_FLOP, .steps = 50, .warmup = 0.2});
  // Request 0 (warm-up) misses and inserts A. Counted from request 1: hit at 25 (deepest: no insert); B misses
  // and goes in; the 0.92 request hits B at 20 and inserts C, evicting A (least recent); A's row misses (nearest
  // is C at cos 0.39) and inserts D, evicting B.
  CHECK(r.requests == 4);
  CHECK(r.hits == 2);
  CHECK(r.hits_per_depth == std::map<int, std::uint64_t>{{20, 1}, {25, 1}});
  CHECK(r.saved == 4.5e10_FLOP);
  CHECK(r.hit_rate == 0.5);
  CHECK(r.saved_share == Approx(45.0 / 200.0));
  CHECK(r.insertions == 3);
  CHECK(r.evictions == 2);
  CHECK(r.entries_at_end == 2);
  CHECK(r.entry_size == 5_MB);
  CHECK_THROWS_WITH(cache::replay(c, e, trace, {.latent_size = 1_MB, .warmup = 1.0}), Catch::StartsWith("warmup"));
  CHECK_THROWS_WITH(cache::replay(c, e, trace, {.latent_size = 1_MB, .steps = 20}), Catch::StartsWith("steps"));
}

TEST_CASE("the synthetic trace is deterministic, skewed, and spans the reuse table", "[cache][trace]") {
  const cache::synthetic_trace_options o{.requests = 3000, .dimension = 64, .topics = 50, .seed = 4};
  const auto a = cache::generate_trace(o), b = cache::generate_trace(o);
  CHECK(a.embeddings.values == b.embeddings.values);
  REQUIRE(a.requests.size() == 3000);
  for (std::size_t i = 1; i < a.requests.size(); ++i) REQUIRE(a.requests[i].timestamp > a.requests[i - 1].timestamp);
  double norm = 0;
  for (std::size_t k = 0; k < 64; ++k) norm += double(a.embeddings.row(17)[k]) * a.embeddings.row(17)[k];
  CHECK(norm == Approx(1.0).margin(1e-5));
  // Replayed at growing capacities the hit rate rises, every depth of Table 1 is reached, and both families fit.
  const std::vector<bytes> caps{10_MB, 40_MB, 160_MB, 640_MB};
  const auto curve =
      cache::replay_curve([] { return cache::flat_index(64); }, a.embeddings, a.requests, caps, {.latent_size = 1_MB});
  for (std::size_t i = 1; i < curve.size(); ++i) CHECK(curve[i].hit_rate >= curve[i - 1].hit_rate);
  CHECK(curve.back().hit_rate > 0.3);
  CHECK(curve.front().hit_rate < curve.back().hit_rate);
  for (int depth : {5, 10, 15, 20, 25}) CHECK(curve.back().hits_per_depth.contains(depth));
  std::vector<model::capacity_point> points;
  for (const auto& r : curve) points.push_back({r.capacity, r.hit_rate});
  const auto power = model::fit_power_law(points);
  CHECK(power.rmse < 0.05);
  // HNSW replays the same trace to nearly the same curve.
  const auto approx = cache::replay_curve([] { return cache::hnsw_index(64, {.initial_capacity = 256}); }, a.embeddings,
                                          a.requests, std::span(caps).last(1), {.latent_size = 1_MB});
  CHECK(approx.front().hit_rate == Approx(curve.back().hit_rate).margin(0.03));
  CHECK_THROWS_WITH(cache::generate_trace({.paraphrase = 2}), Catch::StartsWith("paraphrase"));
}

}  // namespace cache_replay_test
