#include <catch2/catch.hpp>

#include <trinity/model/frontier.hpp>

#include <cmath>
#include <vector>

namespace model_frontier_test {

using namespace trinity;
using namespace trinity::literals;
namespace m = trinity::model;

TEST_CASE("the paper's frontier: 100x more compute buys 4x less bandwidth", "[model][frontier]") {
  const auto f = m::paper_video_frontier();
  CHECK(f.bandwidth_at(1e9_FLOP) == 0.15_bpp);
  CHECK(f.bandwidth_at(1.4e10_FLOP) == 0.075_bpp);
  CHECK(f.bandwidth_at(1e11_FLOP) == 0.0375_bpp);
  CHECK(f.compression_gain(1e9_FLOP, 1e11_FLOP) == Approx(4.0));
}

TEST_CASE("between points the frontier is a straight line in log-log", "[model][frontier]") {
  const auto f = m::paper_video_frontier();
  // Geometric midpoint of the first segment lands on the geometric mean of bandwidths.
  const flops mid{std::sqrt(1e9 * 1.4e10)};
  CHECK(f.bandwidth_at(mid).value() == Approx(std::sqrt(0.15 * 0.075) / 8).epsilon(1e-12));
  // The slope is the segment's elasticity: log(0.5)/log(14).
  CHECK(f.elasticity(5e9_FLOP) == Approx(std::log(0.5) / std::log(14.0)).epsilon(1e-12));
  CHECK(f.elasticity(5e10_FLOP) == Approx(std::log(0.5) / std::log(1e11 / 1.4e10)).epsilon(1e-12));
}

TEST_CASE("the frontier falls monotonically and its inverse undoes it", "[model][frontier]") {
  const auto f = m::paper_video_frontier();
  bits_per_pixel previous = f.bandwidth_at(1e9_FLOP);
  for (double c = 1e9; c <= 1e11; c *= 1.1) {
    const bits_per_pixel b = f.bandwidth_at(flops{c});
    CHECK(b <= previous);
    CHECK(f.compute_for(b).value() == Approx(c).epsilon(1e-9));
    previous = b;
  }
}

TEST_CASE("the frontier is not extrapolated and says its range", "[model][frontier]") {
  const auto f = m::paper_video_frontier();
  CHECK_THROWS_AS(f.bandwidth_at(1e12_FLOP), invalid_input);
  try {
    (void)f.bandwidth_at(1e8_FLOP);
    FAIL("extrapolated");
  } catch (const invalid_input& e) {
    CHECK(e.field() == "compute");
    CHECK_THAT(e.what(), Catch::Contains("[1 GFLOP, 100 GFLOP]"));
  }
  CHECK_THROWS_AS(f.compute_for(0.2_bpp), invalid_input);
  // NaN compares false with both bounds; it is refused, not interpolated.
  CHECK_THROWS_AS(f.bandwidth_at(flops{std::nan("")}), invalid_input);
  CHECK_THROWS_AS(f.compute_for(bits_per_pixel{std::nan("")}), invalid_input);
}

TEST_CASE("points that are not a frontier are refused with the field", "[model][frontier]") {
  using F = m::frontier<flops, bits_per_pixel>;
  using P = F::point;
  const std::vector<P> rising{{1e9_FLOP, 0.1_bpp}, {1e10_FLOP, 0.2_bpp}};
  CHECK_THROWS_WITH(F(rising), Catch::StartsWith("points.bandwidth: bandwidth must not rise"));
  const std::vector<P> unordered{{1e10_FLOP, 0.1_bpp}, {1e9_FLOP, 0.05_bpp}};
  CHECK_THROWS_WITH(F(unordered), Catch::StartsWith("points.compute"));
  const std::vector<P> one{{1e9_FLOP, 0.1_bpp}};
  CHECK_THROWS_WITH(F(one), Catch::Contains("at least two"));
}

TEST_CASE("moving along the frontier is priced per frame", "[model][frontier]") {
  const m::compute_for_bandwidth<> policy{m::paper_video_frontier(), 921600_px};
  const auto t = policy.price({1e9_FLOP, 1e11_FLOP});
  CHECK(t.spent() == 9.9e10_FLOP);
  // 0.15 - 0.0375 bpp over a 1280x720 frame = 12,960 bytes.
  CHECK(t.saved().value() == Approx((0.15 - 0.0375) / 8 * 921600).epsilon(1e-12));
  CHECK(t.pays());
}

}  // namespace model_frontier_test
