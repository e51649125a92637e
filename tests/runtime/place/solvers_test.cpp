// The placement solvers against GLPK's branch-and-cut on the same integer
// program (libglpk, an independent solver): the exact solver's cost equals
// GLPK's optimum on random instances; the greedy is never better than the
// optimum, and its reported lower bound never above it.
#include <catch2/catch.hpp>

#include <glpk.h>

#include <trinity/place.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/literals.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace place_solvers_test {

using namespace trinity;
using namespace trinity::literals;

namespace {

// min Σ c_ij x_ij  s.t.  Σ_j x_ij = 1,  Σ_i s_i x_ij ≤ C_j,  x binary. Returns the optimum, or NaN.
double glpk_optimum(const place::placement_problem& p) {
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  const int n = static_cast<int>(p.objects()), k = static_cast<int>(p.tiers());
  glp_add_rows(lp, n + k);
  for (int i = 0; i < n; ++i) glp_set_row_bnds(lp, i + 1, GLP_FX, 1.0, 1.0);
  const double gib = 1024.0 * 1024.0 * 1024.0;  // sizes in GiB keep GLPK's tolerances meaningful
  for (int j = 0; j < k; ++j)
    glp_set_row_bnds(lp, n + j + 1, GLP_UP, 0.0, p.capacity(static_cast<std::size_t>(j)) / gib);
  glp_add_cols(lp, n * k);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      const int col = i * k + j + 1;
      glp_set_col_kind(lp, col, GLP_BV);
      glp_set_obj_coef(lp, col, p.cost(static_cast<std::size_t>(i), static_cast<std::size_t>(j)) * 1e6);  // µs
      ia.push_back(i + 1), ja.push_back(col), ar.push_back(1.0);
      ia.push_back(n + j + 1), ja.push_back(col), ar.push_back(p.size(static_cast<std::size_t>(i)) / gib);
    }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  const int rc = glp_intopt(lp, &parm);
  const double value = rc == 0 && glp_mip_status(lp) == GLP_OPT ? glp_mip_obj_val(lp) / 1e6 : NAN;
  glp_delete_prob(lp);
  return value;
}

// Four tiers like HBM, CXL-coherent, CXL-capacity and NVMe, with capacities too tight for the hot set.
place::placement_problem random_instance(std::mt19937& gen, std::size_t n, std::size_t k) {
  std::uniform_real_distribution<double> size(1, 100), freq(1e3, 1e7), unit(0, 1);
  std::vector<place::object_profile> objects;
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    place::object_profile o;
    o.name = "object " + std::to_string(i);
    o.size = bytes{std::round(size(gen)) * 1024.0 * 1024.0 * 1024.0 / 16};
    o.accesses_per_second = freq(gen);
    o.bytes_per_access = bytes{unit(gen) < 0.5 ? 64.0 : 4096.0};
    o.write_fraction = unit(gen);
    o.latency_weight = unit(gen) < 0.3 ? 0.0 : 1.0;
    total += o.size.value();
    objects.push_back(o);
  }
  const double latency[] = {200e-9, 300e-9, 600e-9, 80e-6};
  const double write[] = {220e-9, 350e-9, 900e-9, 120e-6};
  const double bandwidth[] = {8e12, 128e9, 64e9, 7e9};
  const double share[] = {0.15, 0.25, 0.35, 1.0};
  std::vector<place::tier_slot> tiers;
  for (std::size_t j = 0; j < k; ++j)
    tiers.push_back({"tier " + std::to_string(j), bytes{j + 1 == k ? total : total * share[j]}, seconds{latency[j]},
                     seconds{write[j]}, bytes_per_second{bandwidth[j]}});
  return {objects, tiers};
}

}  // namespace

TEST_CASE("the exact placement equals GLPK's optimum on random instances", "[place]") {
  std::mt19937 gen(2026);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    // Up to 28 objects: tight random instances with integral sizes have a Lagrangian gap near 10%, and
    // beyond ~30 objects the search can outrun its node budget (it then says so: optimal = false).
    const std::size_t n = 4 + static_cast<std::size_t>(trial % 7) * 4, k = 2 + static_cast<std::size_t>(trial % 3);
    const auto p = random_instance(gen, n, k);
    const double reference = glpk_optimum(p);
    REQUIRE_FALSE(std::isnan(reference));
    const auto e = place::exact(p);
    INFO("trial " << trial << ": " << n << " objects, " << k << " tiers, " << e.nodes << " nodes");
    REQUIRE(e.optimal);
    REQUIRE(e.cost == Approx(reference).epsilon(1e-6));
    const auto g = place::greedy(p);
    REQUIRE(g.cost >= e.cost * (1 - 1e-9));
    REQUIRE(g.lower_bound <= reference * (1 + 1e-6));
    REQUIRE(g.gap() >= (g.cost - reference) / reference - 1e-6);  // the reported gap covers the true one
    ++compared;
  }
  CHECK(compared == 60);
}

TEST_CASE("past its node budget the exact solver says it is not proven, and its gap is still true", "[place]") {
  std::mt19937 gen(2026);
  for (int trial = 0; trial < 35; ++trial)
    random_instance(gen, 4 + static_cast<std::size_t>(trial % 9) * 4, 2 + static_cast<std::size_t>(trial % 3));
  const auto p = random_instance(gen, 36, 4);  // a tight instance the search cannot finish in 100,000 nodes
  const auto e = place::exact(p, {.node_limit = 100'000});
  const double reference = glpk_optimum(p);
  CHECK_FALSE(e.optimal);
  CHECK(e.cost >= reference * (1 - 1e-9));
  CHECK(e.lower_bound <= reference * (1 + 1e-9));
}

TEST_CASE("the greedy's gap stays small on large instances and its bound is real", "[place]") {
  std::mt19937 gen(7);
  const auto p = random_instance(gen, 2000, 4);
  const auto g = place::greedy(p);
  CHECK(g.gap() < 0.05);
  CHECK(g.lower_bound > 0);
  CHECK(g.lower_bound <= g.cost);
}

TEST_CASE("the spill rule fills tier-1 before it uses tier-2, hottest objects first", "[place]") {
  std::vector<place::object_profile> objects;
  for (int i = 0; i < 10; ++i) objects.push_back({"o" + std::to_string(i), 1_GB, 1000.0 * (i + 1), 64_B, 0.0, 1.0});
  std::vector<place::tier_slot> tiers{{"hbm", 4_GB, 300_ns, 300_ns, 8_TBps}, {"cxl", 100_GB, 600_ns, 600_ns, 64_GBps}};
  const auto s = place::spill({objects, tiers});
  // The four hottest (o6..o9) in tier-1, the rest in tier-2, and tier-1 exactly full.
  for (int i = 0; i < 10; ++i) CHECK(s.tier_of[static_cast<std::size_t>(i)] == (i >= 6 ? 0u : 1u));
  // Here every object prefers the faster tier in the same order, so the spill rule is optimal.
  const place::placement_problem p{objects, tiers};
  CHECK(place::spill(p).cost == Approx(place::exact(p).cost));
}

TEST_CASE("placement input is checked by name", "[place]") {
  std::vector<place::tier_slot> tiers{{"hbm", 4_GB, 300_ns, 300_ns, 8_TBps}};
  CHECK_THROWS_WITH(place::placement_problem({{"big", 5_GB}}, tiers),
                    Catch::Contains("objects") && Catch::Contains("add capacity"));
  CHECK_THROWS_WITH(place::placement_problem({{"neg", bytes{-1.0}}}, tiers), Catch::Contains("objects[0].size"));
  CHECK_THROWS_WITH(place::placement_problem({{"w", 1_GB, 1.0, 64_B, 1.5}}, tiers),
                    Catch::Contains("objects[0].write_fraction"));
  tiers[0].bandwidth = bytes_per_second{};
  CHECK_THROWS_WITH(place::placement_problem({{"x", 1_GB}}, tiers), Catch::Contains("tiers[0].bandwidth"));
  const place::placement_problem ok({{"a", 3_GB}, {"b", 3_GB}},
                                    {{"hbm", 4_GB, 300_ns, 300_ns, 8_TBps}, {"cxl", 4_GB, 600_ns, 600_ns, 64_GBps}});
  CHECK_THROWS_WITH(ok.evaluate({0, 0}), Catch::Contains("tiers[0].capacity"));
}

TEST_CASE("tiers come from the presets with their figures", "[place]") {
  const auto t = place::tier_slot::from(tiers::gb200_hbm3e::descriptor);
  CHECK(t.capacity == tiers::gb200_hbm3e::descriptor.capacity);
  CHECK(t.read_latency == tiers::gb200_hbm3e::descriptor.latency);
  CHECK(place::tier_slot::from(tiers::cxl_capacity::descriptor, 1_TB).capacity == 1_TB);
}

}  // namespace place_solvers_test
