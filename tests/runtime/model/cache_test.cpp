#include <catch2/catch.hpp>

#include <trinity/model/cache.hpp>
#include <trinity/units/literals.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <trinity/model/deficit.hpp>
#include <trinity/model/frontier.hpp>

namespace model_cache_test {

using namespace trinity;
using namespace trinity::literals;
namespace m = trinity::model;

namespace {
constexpr m::diffusion_cache paper{50, 1e9_FLOP, 20, 2_GB};
}

TEST_CASE("the paper's cache: 10 GB holds 5 entries and saves 1.2e10 FLOPs a request", "[model][cache]") {
  CHECK(paper.full_cost() == 5e10_FLOP);
  CHECK(paper.saved_per_hit() == 2e10_FLOP);
  CHECK(paper.entries(10_GB) == 5);
  CHECK(paper.entries(11.9_GB) == 5);
  CHECK(paper.entries(12_GB) == 6);
  CHECK(paper.saved_per_request(0.6) == 1.2e10_FLOP);
  CHECK(paper.expected_cost(0.6) == 3.8e10_FLOP);
}

TEST_CASE("every ~1.7 GB of cache yields ~2e9 FLOPs, as the paper says", "[model][cache]") {
  const flops_per_byte rate = paper.average_benefit(10_GB, 0.6);
  CHECK(rate.value() == Approx(1.2));                           // 1.2 GFLOP per GB
  CHECK((2e9_FLOP / rate).value() == Approx(1.0 / 0.6 * 1e9));  // 1.667 GB per 2e9 FLOPs
}

TEST_CASE("exponential saturation: value, derivative and inverse agree", "[model][cache]") {
  const auto h = m::exponential_saturation::through(10_GB, 0.6, 2_GB);
  CHECK(h.beta == Approx(-std::log(0.4) / 5.0).epsilon(1e-15));
  CHECK(h(10_GB) == Approx(0.6).epsilon(1e-15));
  CHECK(h.capacity_for(0.6).value() == Approx(10e9).epsilon(1e-12));
  // Derivative against a central difference.
  const double dm = 1e3;
  const double numeric = (h(bytes{10e9 + dm}) - h(bytes{10e9 - dm})) / (2 * dm);
  CHECK(h.derivative(10_GB).value() == Approx(numeric).epsilon(1e-6));
  // dE/dM = -(β/s_e)·exp(-β·M/s_e)·c_saved(r), the paper's marginal.
  const double closed = -(h.beta / 2e9) * std::exp(-h.beta * 5.0) * 2e10;
  CHECK(m::marginal_cost(paper, h, 10_GB).value() == Approx(closed).epsilon(1e-12));
  CHECK(m::expected_cost(paper, h, 10_GB).value() == Approx(3.8e10).epsilon(1e-12));
  CHECK(m::memory_for_saving(paper, h, 1.2e10_FLOP).value() == Approx(10e9).epsilon(1e-12));
}

TEST_CASE("power law: value, derivative and inverse agree", "[model][cache]") {
  const m::power_law h{per_byte{1e-10}, 0.5};
  CHECK(h(10_GB) == Approx(1.0 - std::pow(2.0, -0.5)).epsilon(1e-15));
  CHECK(h.capacity_for(h(37_GB)).value() == Approx(37e9).epsilon(1e-12));
  const double dm = 1e3;
  const double numeric = (h(bytes{20e9 + dm}) - h(bytes{20e9 - dm})) / (2 * dm);
  CHECK(h.derivative(20_GB).value() == Approx(numeric).epsilon(1e-6));
  // Diminishing returns: the marginal shrinks as the cache grows.
  CHECK(-m::marginal_cost(paper, h, 100_GB) < -m::marginal_cost(paper, h, 10_GB));
}

TEST_CASE("constexpr math matches <cmath> to a few ulps", "[model][detail]") {
  for (double x : {-30.0, -2.5, -1e-3, 0.0, 1e-8, 0.5, 1.0, 3.7, 40.0, 700.0}) {
    INFO(x);
    CHECK(trinity::detail::ce::exp(x) == Approx(std::exp(x)).epsilon(1e-14));
  }
  for (double x : {1e-300, 1e-9, 0.3, 1.0, 2.0, 3.14159, 1e9, 1e300}) {
    INFO(x);
    CHECK(trinity::detail::ce::log(x) == Approx(std::log(x)).epsilon(1e-14).margin(1e-15));
  }
}

TEST_CASE("cache inputs that cannot work name their field", "[model][cache]") {
  constexpr m::diffusion_cache too_deep{50, 1e9_FLOP, 60, 2_GB};
  CHECK_THROWS_WITH(too_deep.full_cost(), Catch::StartsWith("reuse_depth: must not exceed the step count"));
  CHECK_THROWS_WITH(paper.saved_per_request(1.5), "hit_rate: must lie in [0, 1]");
  CHECK_THROWS_WITH(paper.saved_per_request(-0.1), "hit_rate: must lie in [0, 1]");
  constexpr m::diffusion_cache empty_entries{50, 1e9_FLOP, 20, 0_GB};
  CHECK_THROWS_WITH(empty_entries.entries(1_GB), "entry_size: must be positive and finite");
  const auto h = m::exponential_saturation::through(10_GB, 0.6, 2_GB);
  CHECK_THROWS_WITH(m::memory_for_saving(paper, h, 2e10_FLOP), Catch::StartsWith("target_saving"));
  CHECK_THROWS_AS(h.capacity_for(1.0), invalid_input);
}

TEST_CASE("infinite or NaN inputs are refused by every model, by name", "[model][hostile]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const m::diffusion_cache infinite_steps{50, flops{inf}, 20, 2_GB};
  CHECK_THROWS_WITH(infinite_steps.full_cost(), "step_flops: must be positive and finite");
  CHECK_THROWS_WITH(paper.entries(bytes{inf}), "capacity: must be finite and not negative");
  CHECK_THROWS_WITH(paper.average_benefit(bytes{nan}, 0.5), "capacity: must be positive and finite");
  CHECK_THROWS_AS(paper.saved_per_request(nan), invalid_input);
  CHECK_THROWS_AS(m::exponential_saturation::through(bytes{inf}, 0.5, 2_GB), invalid_input);
  CHECK_THROWS_WITH(m::memory_deficit(bytes{inf}, 100_GB, 2), "total: must be finite and not negative");
  CHECK_THROWS_WITH(m::communication_cost(0_B, nan, 0.5, 1_GB), "allreduce_factor: must be finite and not negative");
  using F = m::frontier<flops, bits_per_pixel>;
  const std::vector<F::point> infinite{{1e9_FLOP, 0.1_bpp}, {flops{inf}, 0.05_bpp}};
  CHECK_THROWS_WITH(F(infinite), "points.compute: every compute value must be positive and finite");
  const std::vector<F::point> not_a_number{{1e9_FLOP, bits_per_pixel{nan}}, {1e10_FLOP, 0.05_bpp}};
  CHECK_THROWS_WITH(F(not_a_number), "points.bandwidth: every bandwidth value must be positive and finite");
}

}  // namespace model_cache_test
