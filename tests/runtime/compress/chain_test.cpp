// Compile-time composition: what a chain declares and what it sends.

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>

#include <cmath>
#include <ratio>

#include "inputs.hpp"

namespace compress_chain_test {

using namespace trinity;
using namespace trinity::compress;

using sparse_int8_zstd = chain<topk<std::ratio<1, 100>>, int8, zstd<3>>;

static_assert(Compressor<sparse_int8_zstd>);
static_assert(Compressor<error_feedback<sparse_int8_zstd>>);
static_assert(Compressor<delta<>>);
static_assert(sparse_int8_zstd::traits.wire_codec == codec::zstd);
static_assert(sparse_int8_zstd::traits.error.kind == error_kind::dropped_below);
static_assert(!sparse_int8_zstd::traits.summable && identity::traits.summable && !powersgd<>::traits.summable);
static_assert(chain<identity>::traits.summable && !chain<int8>::traits.summable);
static_assert(dgc<>::traits.own_error_feedback && !error_feedback<int8>::traits.own_error_feedback == false);
static_assert(chain<int8, lz4<>>::traits.expected_ratio == int8::traits.expected_ratio * lz4<>::traits.expected_ratio);

TEST_CASE("a chain's expected ratio counts indices, quantized values and the lossless stage", "[compress]") {
  // 1% kept: per kept element 4 bytes of index + 1 + 4/128 bytes of int8 value and scale.
  const double per_kept = 4.0 + 4.0 / int8::traits.expected_ratio;
  REQUIRE(sparse_int8_zstd::traits.expected_ratio == Approx(zstd<3>::traits.expected_ratio * 400.0 / per_kept));
}

TEST_CASE("chain<topk, int8, zstd> nests three frames and decodes within both bounds", "[compress]") {
  const auto x = test::normal_floats(20000);
  sparse_int8_zstd c;
  frame_buffer f;
  c.encode(x, f);
  REQUIRE(std::to_integer<int>(f.data()[5]) == static_cast<int>(codec::zstd));
  const auto y = decode(f.bytes());
  // Kept: the 200 largest, each within int8's bound of the kept values' block max.
  double max_kept = 0, max_dropped = 0, worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y[i] != 0.0f) {
      max_kept = std::max(max_kept, std::fabs(static_cast<double>(x[i])));
      worst = std::max(worst, std::fabs(static_cast<double>(x[i]) - y[i]));
    } else {
      max_dropped = std::max(max_dropped, std::fabs(static_cast<double>(x[i])));
    }
  }
  REQUIRE(std::count_if(y.begin(), y.end(), [](float v) { return v != 0.0f; }) == 200);
  REQUIRE(worst <= max_kept * int8::traits.error.bound * (1 + 1e-5));
  REQUIRE(max_dropped < max_kept);
  REQUIRE(f.size() * 40 < x.size() * 4);
}

TEST_CASE("make_compressor finds built-ins by name and lists them when it cannot", "[compress]") {
  REQUIRE(make_compressor("int8-ef").traits().name == std::string_view("int8"));
  REQUIRE_THROWS_WITH(make_compressor("int9"), Catch::Contains("compressor: \"int9\" is not a built-in") &&
                                                   Catch::Contains("int8-ef") && Catch::Contains("powersgd-4"));
}

}  // namespace compress_chain_test
