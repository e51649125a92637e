// Recommendation inference over embedding tables as a planned workload (issue 34, item 4): the DLRM preset's
// dense part from its layer sizes, a batch's bytes per tier against closed forms, the hit rate of a cache of the
// hottest rows against a sampled stream through a static cache and through embedding::tiered_table's LFU, and every
// plan kept fitting its tiers and keeping up.
#include <catch2/catch.hpp>

#include <trinity/detail/splitmix.hpp>
#include <trinity/embedding.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/plan.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace plan_embedding_serve_test {

using namespace trinity;

TEST_CASE("the DLRM preset: MLPerf's tables, and its dense part from the layer sizes", "[plan][embedding]") {
  const auto w = plan::presets::dlrm_serve();
  REQUIRE(w.tables.size() == 26);
  double rows = 0, pooled = 0;
  for (const auto& t : w.tables) rows += t.rows, pooled += t.pooling;
  CHECK(rows == 204184588);
  CHECK(pooled == 214);
  CHECK(w.table_bytes().value() == Approx(rows * 512));
  // bottom 13-512-256-128, three rank-512 cross layers over 27 x 128, top 3456-1024-1024-512-256-1.
  CHECK(w.dense_flops.value() == 2.0 * (170496 + 10616832 + 5243136));
}

TEST_CASE("a batch's bytes per tier: all from device memory, all from the pool, or split by the hit rate",
          "[plan][embedding]") {
  const auto s = *plan::presets::find("dgx-h100-cxl");
  const auto w = plan::presets::dlrm_serve();
  const double row = 512, lookups = 2048.0 * 214;
  const auto all = plan::price(s, w, plan::embedding_plan{plan::list_home::replicated, 0, 0});
  CHECK(all.traffic.bytes[0] == Approx(lookups * row));
  CHECK(all.traffic.bytes[1] == 0);
  CHECK(all.hit_rate == 1);
  const auto none = plan::price(s, w, plan::embedding_plan{plan::list_home::pooled, 2, 0});
  CHECK(none.traffic.bytes[0] == 0);
  CHECK(none.traffic.bytes[1] == Approx(lookups * row));
  CHECK(none.traffic.reads[1] == Approx(lookups));
  CHECK(none.hit_rate == 0);
  const auto some = plan::price(s, w, plan::embedding_plan{plan::list_home::pooled, 2, 0.1});
  // A table whose tenth is no whole row (three rows) has no cache: its lookups all go to the pool.
  double misses = 0, through_cache = 0;
  for (const auto& t : w.tables) {
    const double cached = std::floor(0.1 * t.rows);
    misses += 2048 * t.pooling * (1 - model::zipf_head_share(cached, t.rows, t.skew));
    if (cached > 0) through_cache += 2048 * t.pooling;
  }
  CHECK(through_cache < lookups);
  CHECK(some.traffic.bytes[0] == Approx(through_cache * row));  // every lookup through a cache reads it
  CHECK(some.traffic.bytes[1] == Approx(misses * row));
  CHECK(some.hit_rate == Approx(1 - misses / lookups));
  // Gathered a table at a time: one latency a tier a table, and the bytes at bandwidth.
  const auto& hbm = s.tiers[0];
  const auto& pool = s.tiers[2];
  CHECK(some.lookup.value() == Approx(26 * hbm.latency.value() + through_cache * row / hbm.bandwidth.value() +
                                      26 * pool.latency.value() + misses * row / pool.bandwidth.value()));
  // Initialization: the pool's one copy written over every device's link, an eighth each.
  CHECK(some.initialization.value() == Approx(w.table_bytes().value() / 8 / pool.bandwidth.value()));
}

TEST_CASE("a cache of the hottest rows hits the Zipf head share, an online LFU approaches it from below",
          "[plan][embedding]") {
  const std::size_t rows = 20000, dim = 4, cached = 1000;
  const double s = 1.05;
  // Inverse-CDF sampling of row r with weight r^-s.
  std::vector<double> cdf(rows);
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) cdf[r] = total += std::pow(static_cast<double>(r + 1), -s);
  std::uint64_t state = 7;
  std::vector<std::uint64_t> stream(200000);
  for (auto& x : stream) {
    const double u = static_cast<double>(trinity::detail::splitmix_next(state) >> 11) * 0x1p-53 * total;
    x = static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
  const double model = model::zipf_head_share(cached, rows, s);
  const double statically =
      static_cast<double>(std::count_if(stream.begin(), stream.end(), [&](auto r) { return r < cached; })) /
      static_cast<double>(stream.size());
  CHECK(statically == Approx(model).margin(0.01));
  std::vector<float> values(rows * dim, 1.0f);
  place::tier_resource fast("hbm", bytes{1e7}), capacity("cxl-capacity", bytes{1e8});
  place::tier_resource* tiers[] = {&fast, &capacity};
  embedding::tiered_table table(rows, dim, values, tiers, cached, embedding::cache_policy::lfu);
  const std::vector<std::size_t> offsets{0, stream.size()};
  std::vector<float> out(dim);
  table.bag({stream, offsets}, embedding::pooling::sum, out);
  CHECK(table.traffic().hit_rate() <= model + 0.01);
  CHECK(table.traffic().hit_rate() >= model - 0.05);
}

TEST_CASE("every embedding plan kept fits its tiers and keeps up, on both CXL presets", "[plan][embedding]") {
  for (const char* name : {"gb200-nvl72-cxl", "dgx-h100-cxl"}) {
    CAPTURE(name);
    const auto s = *plan::presets::find(name);
    const auto w = plan::presets::dlrm_serve();
    const auto r = plan::plan_embedding(s, w);
    REQUIRE(r.chosen().fits());
    for (const auto& e : r.candidates) {
      if (!e.fits()) continue;
      for (std::size_t t = 0; t < s.tiers.size(); ++t) CHECK(e.cost.tier_bytes[t] <= s.tiers[t].capacity);
      CHECK(e.cost.devices_busy <= static_cast<double>(s.device.count));
      CHECK(e.cost.total.time <= w.latency_slo);
      CHECK(r.chosen().cost.total.time <= e.cost.total.time);
    }
    // A larger cache in the same tier never reads more from it.
    for (const auto& a : r.candidates)
      for (const auto& b : r.candidates)
        if (a.plan.home == plan::list_home::pooled && b.plan.home == a.plan.home && a.plan.pool == b.plan.pool &&
            b.plan.cache_share > a.plan.cache_share)
          CHECK(b.cost.traffic.bytes[1] <= a.cost.traffic.bytes[1]);
  }
}

TEST_CASE("an embedding-serve workload's bad input is refused by field", "[plan][embedding]") {
  const auto s = *plan::presets::find("dgx-h100-cxl");
  const auto refused = [&](auto change, const char* field) {
    auto w = plan::presets::dlrm_serve();
    change(w);
    try {
      plan::validate(w, s);
      FAIL("accepted a workload with a bad " << field);
    } catch (const invalid_input& e) {
      CHECK(e.field() == field);
    }
  };
  refused([](auto& w) { w.tables.clear(); }, "workload.tables");
  refused([](auto& w) { w.tables[3].rows = 0; }, "workload.tables[3].rows");
  refused([](auto& w) { w.tables[0].dimension = 0; }, "workload.tables[0].dimension");
  refused([](auto& w) { w.tables[1].pooling = 0; }, "workload.tables[1].pooling");
  refused([](auto& w) { w.tables[2].skew = -1; }, "workload.tables[2].skew");
  refused([](auto& w) { w.batch = 0; }, "workload.batch");
  refused([](auto& w) { w.samples_per_second = 0; }, "workload.samples_per_second");
  refused([](auto& w) { w.latency_slo = seconds{}; }, "workload.latency_slo");
}

}  // namespace plan_embedding_serve_test
