// Retrieval-augmented generation as a planned workload (issue 34, item 4): the probe split against a brute-force
// sum, the recall curve read as stated, a query's bytes per tier against closed forms, the pool over RDMA at the
// gap DirectCXL measured, and every plan the planner keeps reaching its recall, fitting its tiers and keeping up.
#include <catch2/catch.hpp>

#include <trinity/plan.hpp>
#include <trinity/plan/cxl_case_studies.hpp>
#include <trinity/retrieval/product_quantizer.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace plan_rag_serve_test {

using namespace trinity;

namespace {
double brute_zipf(double n, double s) {
  double sum = 0;
  for (double k = 1; k <= n; ++k) sum += std::pow(k, -s);
  return sum;
}
}  // namespace

TEST_CASE("Zipf sums: the expansion meets the brute-force sum, and head shares run from 0 to 1", "[plan][rag]") {
  for (const double s : {0.0, 0.5, 1.0, 1.05, 1.5, 3.0}) {
    CAPTURE(s);
    for (const double n : {1.0, 10.0, 2001.0, 2002.0, 100000.0}) {
      const double want = brute_zipf(n, s);
      CHECK(model::zipf_sum(1, n, s) == Approx(want).epsilon(1e-10));
    }
    CHECK(model::zipf_head_share(0, 1000, s) == 0);
    CHECK(model::zipf_head_share(1000, 1000, s) == Approx(1).epsilon(1e-12));
    CHECK(model::zipf_head_share(10, 1000, s) == Approx(brute_zipf(10, s) / brute_zipf(1000, s)).epsilon(1e-10));
  }
}

TEST_CASE("probes split: uniform in proportion, skewed as the capped brute-force sum", "[plan][rag]") {
  // Uniform: each list probed with nprobe/L.
  const auto u = plan::detail::probes_split(1000, 16, 250, 0);
  CHECK(u[0] == Approx(16.0 * 250 / 1000));
  CHECK(u[1] == Approx(16.0 * 750 / 1000));
  // Skewed: list r probed with min(1, nprobe·r^-s / Σ), its first lists certain.
  for (const double s : {0.8, 1.2, 2.0})
    for (const std::size_t hot : {0u, 3u, 40u, 4999u}) {
      CAPTURE(s, hot);
      const double L = 5000, n = 64;
      const double total = brute_zipf(L, s);
      double want_hot = 0, want_cold = 0;
      for (double r = 1; r <= L; ++r) (r <= hot ? want_hot : want_cold) += std::min(1.0, n * std::pow(r, -s) / total);
      const auto got = plan::detail::probes_split(5000, 64, hot, s);
      CHECK(got[0] == Approx(want_hot).epsilon(1e-6).margin(1e-9));
      CHECK(got[1] == Approx(want_cold).epsilon(1e-6).margin(1e-9));
    }
}

TEST_CASE("the recall curve: interpolated in log share, unmeasured below its first point, 1 at every list",
          "[plan][rag]") {
  const std::vector<plan::recall_point> c{{0.01, 0.5}, {0.04, 0.9}};
  CHECK_FALSE(plan::detail::recall_at(c, 0.005).has_value());
  CHECK(*plan::detail::recall_at(c, 0.01) == Approx(0.5));
  CHECK(*plan::detail::recall_at(c, 0.02) == Approx(0.7));  // halfway in log share
  CHECK(*plan::detail::recall_at(c, 0.04) == Approx(0.9));
  CHECK(*plan::detail::recall_at(c, 0.5) == Approx(0.9));
  CHECK(*plan::detail::recall_at(c, 1.0) == 1.0);
  // The default is the measured file's: its points go up, and it reaches 0.9 within a few lists in a thousand.
  const auto m = plan::measured_ivf_recall();
  REQUIRE(m.size() >= 4);
  for (std::size_t i = 1; i < m.size(); ++i) CHECK(m[i].recall >= m[i - 1].recall);
  CHECK(m.front().probe_share == Approx(1.0 / 1024));
}

TEST_CASE("a query's bytes per tier: the centroids and the probed lists, split as the probes", "[plan][rag]") {
  const auto s = *plan::presets::find("gb200-nvl72-cxl");
  auto w = plan::presets::rag_serve();
  const auto llm = plan::plan_rag_llm(s, w, {});
  const double L = 40000, list = 100e6 / L * (12 + 4 * 1024.0), centroids = 4.0 * 1024 * L;
  REQUIRE(w.list_count() == 40000);
  CHECK(w.list_bytes().value() == Approx(list));
  // Every list in device memory: one read for the centroids, then nprobe lists.
  const auto r = plan::price(s, w, llm, plan::rag_plan{256, plan::list_home::replicated, 0, 1});
  CHECK(r.traffic.bytes[0] == Approx(centroids + 256 * list));
  CHECK(r.traffic.reads[0] == Approx(257));
  CHECK(r.traffic.bytes[1] == 0);
  CHECK(r.search_flops.value() == Approx(2.0 * 1024 * (L + 256 * 2500)));
  // A quarter of the lists hot: a quarter of the probes (no skew) stay in device memory, the rest go to the pool.
  const auto p = plan::price(s, w, llm, plan::rag_plan{256, plan::list_home::pooled, 2, 0.25});
  CHECK(p.traffic.bytes[0] == Approx(centroids + 64 * list));
  CHECK(p.traffic.bytes[1] == Approx(192 * list));
  CHECK(p.traffic.reads[1] == Approx(192));
  // The pool holds the other three quarters, one copy shared by the 72 devices.
  CHECK(p.tier_bytes[2].value() == Approx(30000 * list / 72));
  // Its time: each tier's reads at latency and bytes at bandwidth, then the distances at the fp32 rate.
  const auto& hbm = s.tiers[0];
  const auto& pool = s.tiers[2];
  const double want = 65 * hbm.latency.value() + (centroids + 64 * list) / hbm.bandwidth.value() +
                      192 * pool.latency.value() + 192 * list / pool.bandwidth.value() +
                      p.search_flops.value() / s.device.rate("fp32").value();
  CHECK(p.search.value() == Approx(want));
}

TEST_CASE("an IVF-PQ query: the codes of the probed lists from device memory, the re-ranked vectors where they live",
          "[plan][rag]") {
  const auto s = *plan::presets::find("gb200-nvl72-cxl");
  auto w = plan::presets::rag_serve();
  w.index = "ivf-pq";
  w.pq_bytes = 64;
  w.rerank = 100;
  w.recall_curve = plan::measured_ivf_pq_recall();
  plan::validate(w, s);
  const auto llm = plan::plan_rag_llm(s, w, {});
  const double L = 40000, n = 100e6 / L, d = 1024, vector = 4 + 4 * d;
  const double centroids = 4 * d * (L + 256);  // the centroids and 64 parts' 256 codewords of 16 values each
  // The planner's codewords a part are the mechanism's (the planner does not include it).
  STATIC_REQUIRE(plan::detail::pq_codewords == retrieval::product_quantizer::centroids);
  CHECK(w.code_bytes().value() == 72);
  CHECK(w.vector_bytes().value() == vector);
  CHECK(w.centroid_bytes().value() == centroids);
  CHECK(w.index_bytes().value() == Approx(100e6 * (72 + vector) + centroids));
  // The vectors in the pool (no hot lists): 256 lists' codes and 100 ids from device memory, 100 vectors from the
  // pool, one access each.
  const auto p = plan::price(s, w, llm, plan::rag_plan{256, plan::list_home::pooled, 2, 0});
  CHECK(p.traffic.bytes[0] == Approx(centroids + 256 * n * 64 + 100 * 8));
  CHECK(p.traffic.reads[0] == Approx(2 + 256));
  CHECK(p.traffic.bytes[1] == Approx(100 * vector));
  CHECK(p.traffic.reads[1] == Approx(100));
  CHECK(p.search_flops.value() == Approx(2 * d * L + 256 * (3 * 256 * d + d) + 256 * n * 64 + 2 * d * 100));
  // Device memory holds every code and id, the centroids and codebooks; the pool one copy of the vectors.
  CHECK(p.tier_bytes[0].value() == Approx(llm.cost.tier_bytes[0].value() + centroids + 100e6 * 72));
  CHECK(p.tier_bytes[2].value() == Approx(100e6 * vector / 72));
  // A quarter of the lists' vectors hot: a quarter of the re-ranked reads stay in device memory.
  const auto h = plan::price(s, w, llm, plan::rag_plan{256, plan::list_home::pooled, 2, 0.25});
  CHECK(h.traffic.bytes[1] == Approx(75 * vector));
  CHECK(h.traffic.reads[0] == Approx(2 + 256 + 25));
  // Against IVF-Flat at the same nprobe, the pool sees a hundred vectors instead of 192 whole lists.
  auto flat = plan::presets::rag_serve();
  const auto f = plan::price(s, flat, llm, plan::rag_plan{256, plan::list_home::pooled, 2, 0.25});
  CHECK(h.traffic.bytes[1] < f.traffic.bytes[1] / 1000);
  CHECK(plan::describe(plan::rag_plan{256, plan::list_home::pooled, 2, 0.25}, w, s) ==
        "nprobe 256 of 40000 lists, 64-byte codes in gb200-hbm3e, 100 re-ranked, 25% hottest lists' vectors in "
        "gb200-hbm3e, the rest in cxl-capacity");
}

TEST_CASE("an HNSW query: each vector and link list of the measured walk one access, split by the hot share",
          "[plan][rag]") {
  const auto s = *plan::presets::find("gb200-nvl72-cxl");
  const auto w = plan::presets::rag_serve_hnsw();
  plan::validate(w, s);
  // The measured walks: recall does not fall and a walk reads more as ef grows.
  const auto walks = plan::measured_hnsw_walks();
  REQUIRE(walks.size() >= 4);
  for (std::size_t i = 1; i < walks.size(); ++i) {
    CHECK(walks[i].ef > walks[i - 1].ef);
    CHECK(walks[i].recall >= walks[i - 1].recall);
    CHECK(walks[i].vectors > walks[i - 1].vectors);
    CHECK(walks[i].lists > walks[i - 1].lists);
  }
  CHECK_THROWS_WITH(plan::hnsw_walk_at(100), Catch::Contains("is not an ef the HNSW curve measured"));
  const double d = 1024, node = 8 + 4 * d + plan::detail::hnsw_link_bytes_per_node;
  CHECK(w.vector_bytes().value() == Approx(node));
  CHECK(w.centroid_bytes().value() == 0);
  CHECK(w.index_bytes().value() == Approx(100e6 * node));
  const auto llm = plan::plan_rag_llm(s, w, {});
  const auto walk = plan::hnsw_walk_at(64);
  const double read = walk.vectors * 4 * d + walk.lists * plan::detail::hnsw_link_bytes_per_list;
  // A quarter of the nodes in HBM, the rest in the pool: a quarter of every kind of read stays in HBM.
  const plan::rag_plan p{64, plan::list_home::pooled, 2, 0.25};
  const auto c = plan::price(s, w, llm, p);
  CHECK(c.recall == walk.recall);
  CHECK(c.traffic.bytes[0] == Approx(0.25 * read));
  CHECK(c.traffic.bytes[1] == Approx(0.75 * read));
  CHECK(c.traffic.reads[1] == Approx(0.75 * (walk.vectors + walk.lists)));
  CHECK(c.search_flops.value() == Approx(2 * d * walk.vectors));
  // Every access a random one: its latency each, beside the bytes at each tier's bandwidth and the distances.
  const auto& hbm = s.tiers[0];
  const auto& pool = s.tiers[2];
  CHECK(c.search.value() ==
        Approx(0.25 * (walk.vectors + walk.lists) * hbm.latency.value() + 0.25 * read / hbm.bandwidth.value() +
               0.75 * (walk.vectors + walk.lists) * pool.latency.value() + 0.75 * read / pool.bandwidth.value() +
               2 * d * walk.vectors / s.device.rate("fp32").value()));
  CHECK(c.tier_bytes[0].value() == Approx(llm.cost.tier_bytes[0].value() + 0.25 * 100e6 * node));
  CHECK(c.tier_bytes[2].value() == Approx(0.75 * 100e6 * node / 72));
  CHECK(plan::describe(p, w, s) ==
        "ef 64 on an HNSW graph of degree 16, 25% of the graph's nodes in gb200-hbm3e, the rest in cxl-capacity");
  // The walk reads a few hundred nodes where IVF-Flat at its recall streams whole lists.
  const auto flat =
      plan::price(s, plan::presets::rag_serve(), llm, plan::rag_plan{256, plan::list_home::pooled, 2, 0.25});
  CHECK(c.traffic.bytes[1] < flat.traffic.bytes[1] / 100);
}

TEST_CASE("the pool over RDMA: 2 us an access, 8.3 times the CXL pool's, at most one 400G NIC's bandwidth",
          "[plan][rag]") {
  const auto s = *plan::presets::find("gb200-nvl72-cxl");
  const auto& pool = s.tiers[2];
  REQUIRE(pool.name == "cxl-capacity");
  const auto a = plan::rdma_pool_access(pool);
  CHECK(a.latency.value() == Approx(2e-6));
  CHECK(a.latency / pool.latency == Approx(8.3).epsilon(0.01));  // DirectCXL's measured gap
  CHECK(a.bandwidth.value() == Approx(50e9));
  CHECK_THROWS_WITH(plan::rdma_pool_access(s.tiers[1]), Catch::Contains("is not a capacity pool"));
}

TEST_CASE("every plan kept reaches the recall target, fits its tiers and keeps up, more probes read more",
          "[plan][rag]") {
  for (const char* name : {"gb200-nvl72-cxl", "dgx-h100-cxl"})
    for (const char* index : {"ivf-flat", "ivf-pq", "hnsw"}) {
      CAPTURE(name, index);
      const auto s = *plan::presets::find(name);
      const bool pq = std::string(index) == "ivf-pq";
      auto w = std::string(index) == "hnsw" ? plan::presets::rag_serve_hnsw() : plan::presets::rag_serve();
      if (pq) {
        w.index = "ivf-pq";
        w.recall_curve = plan::measured_ivf_pq_recall();
      }
      const auto r = plan::plan_rag(s, w);
      REQUIRE(r.chosen().fits());
      for (const auto& e : r.candidates) {
        if (!e.fits()) continue;
        CHECK(e.cost.recall >= w.recall_target);
        for (std::size_t t = 0; t < s.tiers.size(); ++t) CHECK(e.cost.tier_bytes[t] <= s.tiers[t].capacity);
        CHECK(e.cost.devices_busy <= static_cast<double>(s.device.count));
        CHECK(r.chosen().cost.total.time <= e.cost.total.time);
      }
      // The same placement scanning twice the lists reads more.
      for (const auto& a : r.candidates)
        for (const auto& b : r.candidates)
          if (a.plan.home == b.plan.home && a.plan.pool == b.plan.pool && a.plan.hot_share == b.plan.hot_share &&
              b.plan.nprobe == 2 * a.plan.nprobe)
            CHECK(b.cost.traffic.bytes[0] + b.cost.traffic.bytes[1] >
                  a.cost.traffic.bytes[0] + a.cost.traffic.bytes[1]);
      // 411 GB of lists (419 GB of nodes): no device holds a copy, so the untraded baseline breaks device memory.
      CHECK(r.candidates[r.baseline].violation.find("capacity") != std::string::npos);
      // IVF-PQ's pool reads are the re-ranked vectors, one access each; IVF-Flat's whole lists.
      if (pq && r.chosen().plan.home == plan::list_home::pooled)
        CHECK(r.chosen().cost.traffic.bytes[1] == Approx(r.chosen().cost.traffic.reads[1] * w.vector_bytes().value()));
    }
}

TEST_CASE("a rag-serve workload's bad input is refused by field", "[plan][rag]") {
  const auto s = *plan::presets::find("dgx-h100-cxl");
  const auto refused = [&](auto change, const char* field) {
    auto w = plan::presets::rag_serve();
    change(w);
    try {
      plan::validate(w, s);
      FAIL("accepted a workload with a bad " << field);
    } catch (const invalid_input& e) {
      CHECK(e.field() == field);
    }
  };
  refused([](auto& w) { w.corpus_vectors = 0; }, "workload.corpus_vectors");
  refused([](auto& w) { w.dimension = 0; }, "workload.dimension");
  refused([](auto& w) { w.index = "annoy"; }, "workload.index");
  refused(
      [](auto& w) {
        w.index = "hnsw";
        w.lists = 1000;
      },
      "workload.lists");
  refused(
      [](auto& w) {
        w.index = "hnsw";
        w.probe_skew = 1;
      },
      "workload.probe_skew");
  refused([](auto& w) { w.lists = 1000000000; }, "workload.lists");
  refused([](auto& w) { w.recall_target = 1.5; }, "workload.recall_target");
  refused([](auto& w) { w.recall_curve.clear(); }, "workload.recall_curve");
  refused([](auto& w) { w.recall_curve = {{0.1, 0.9}, {0.05, 0.95}}; }, "workload.recall_curve[1]");
  refused([](auto& w) { w.queries_per_second = -1; }, "workload.queries_per_second");
  refused([](auto& w) { w.top_k = 0; }, "workload.top_k");
  refused([](auto& w) { w.probe_skew = 9; }, "workload.probe_skew");
  refused([](auto& w) { w.llm.output_tokens = 0; }, "workload.llm.output_tokens");
  refused([](auto& w) { w.pq_bytes = 64; }, "workload.pq_bytes");  // not an ivf-pq index
  refused([](auto& w) { w.rerank = 100; }, "workload.rerank");
  const auto pq = [](auto change) {
    return [change](auto& w) {
      w.index = "ivf-pq";
      w.recall_curve = plan::measured_ivf_pq_recall();
      change(w);
    };
  };
  refused(pq([](auto& w) { w.pq_bytes = 1000; }), "workload.pq_bytes");  // does not divide 1,024
  refused(pq([](auto& w) { w.rerank = 5; }), "workload.rerank");         // fewer than top_k
}

TEST_CASE("the report's case studies: bandwidth-bound phases near the report, searches below its 14x", "[plan][rag]") {
  const auto rows = plan::cxl_case_studies();
  REQUIRE(rows.size() == 6);
  const double bandwidth_ratio = 128.0 / 50.0, latency_ratio = 2e-6 / 240e-9;
  for (const auto& r : rows) {
    CAPTURE(r.phase, r.predicted, r.reported);
    // Every pool-bound phase lies between the tiers' bandwidth ratio and their latency ratio: the model's bounds.
    // A scan's distances and inference's dense part take the same time either way, which pulls a phase a little
    // below the bandwidth ratio (inference the most).
    CHECK(r.predicted >= bandwidth_ratio * (r.phase == "DLRM inference" ? 0.95 : 0.99));
    CHECK(r.predicted <= latency_ratio);
  }
  // The LLM phase and the tables' initialization stream bytes: within 10% of the report's 2.78x and 2.71x.
  CHECK(rows[3].predicted / rows[3].reported == Approx(1).margin(0.1));
  CHECK(rows[4].predicted / rows[4].reported == Approx(1).margin(0.1));
  // A graph walk is latency-bound: near the 8.3x latency ratio, the most the tiers allow, still short of 14x.
  CHECK(rows[2].predicted == Approx(latency_ratio).epsilon(0.05));
  for (const auto i : {0, 1, 2, 5})
    CHECK(rows[static_cast<std::size_t>(i)].predicted < rows[static_cast<std::size_t>(i)].reported);
}

}  // namespace plan_rag_serve_test
