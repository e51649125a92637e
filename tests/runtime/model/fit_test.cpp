#include <catch2/catch.hpp>

#include <trinity/model/fit.hpp>
#include <trinity/units/literals.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace model_fit_test {

using namespace trinity;
using namespace trinity::literals;
namespace m = trinity::model;

namespace {
template <class H>
std::vector<m::capacity_point> sample(const H& h, std::initializer_list<double> gigabytes) {
  std::vector<m::capacity_point> out;
  for (double g : gigabytes) out.push_back({bytes{g * 1e9}, h(bytes{g * 1e9})});
  return out;
}
}  // namespace

TEST_CASE("fits recover the parameters that generated exact points", "[model][fit]") {
  const m::exponential_saturation truth_exp{0.35, 2_GB};
  const auto e = m::fit_exponential_saturation(sample(truth_exp, {1, 2, 4, 8, 16, 32}), 2_GB);
  CHECK(e.model.beta == Approx(0.35).epsilon(1e-7));
  CHECK(e.rmse < 1e-9);

  const m::power_law truth_pow{per_byte{2e-11}, 0.8};
  const auto p = m::fit_power_law(sample(truth_pow, {1, 3, 10, 30, 100, 300, 1000}));
  CHECK(p.model.kappa.value() == Approx(2e-11).epsilon(1e-5));
  CHECK(p.model.gamma == Approx(0.8).epsilon(1e-5));
  CHECK(p.rmse < 1e-8);
  CHECK(p.points == 7);
}

TEST_CASE("one measured point fixes the exponential curve through it", "[model][fit]") {
  const std::vector<m::capacity_point> one{{10_GB, 0.6}};
  const auto e = m::fit_exponential_saturation(one, 2_GB);
  CHECK(e.model.beta == Approx(m::exponential_saturation::through(10_GB, 0.6, 2_GB).beta).epsilon(1e-9));
}

TEST_CASE("the right family fits better, and the error says by how much", "[model][fit]") {
  // Power-law data with noise: the power law must beat the exponential.
  const m::power_law truth{per_byte{1e-11}, 0.6};
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0.0, 0.005);
  std::vector<m::capacity_point> pts;
  for (double g = 1; g <= 50000; g *= 1.6) pts.push_back({bytes{g * 1e9}, truth(bytes{g * 1e9}) + noise(rng)});
  const auto p = m::fit_power_law(pts);
  const auto e = m::fit_exponential_saturation(pts, 16_GB);
  CHECK(p.rmse < 0.01);
  CHECK(p.rmse < e.rmse / 3);
  CHECK(p.max_abs_error >= p.rmse);
  // Least squares: nudging the fitted parameters never lowers the error.
  auto sse = [&](const m::power_law& h) {
    double s = 0;
    for (const auto& q : pts) s += (h(q.capacity) - q.hit_rate) * (h(q.capacity) - q.hit_rate);
    return s;
  };
  const double best = sse(p.model);
  for (double f : {0.99, 1.01}) {
    CHECK(sse({p.model.kappa * f, p.model.gamma}) >= best);
    CHECK(sse({p.model.kappa, p.model.gamma * f}) >= best);
  }
}

TEST_CASE("fit inputs that cannot work name the point", "[model][fit]") {
  const std::vector<m::capacity_point> bad{{10_GB, 0.5}, {20_GB, 1.2}};
  CHECK_THROWS_WITH(m::fit_power_law(bad), "points[1].hit_rate: must lie in [0, 1)");
  const std::vector<m::capacity_point> negative{{-1_GB, 0.5}, {20_GB, 0.6}};
  CHECK_THROWS_WITH(m::fit_exponential_saturation(negative, 2_GB), "points[0].capacity: must be positive and finite");
  const std::vector<m::capacity_point> one{{10_GB, 0.5}};
  CHECK_THROWS_WITH(m::fit_power_law(one), Catch::StartsWith("points: need at least 2"));
}

}  // namespace model_fit_test
