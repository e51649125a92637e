// compress::measure reports the model's terms: the ratio exactly from the
// frame size, the error from the decode, and rates that are positive.

#include <catch2/catch.hpp>

#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/lossless/catalog.hpp>

namespace compress_calibrate_test {

using namespace trinity;
using namespace trinity::compress;

TEST_CASE("measure: the ratio is input bytes over body bytes, the error is the decode's", "[compress]") {
  const auto samples = normal_tensors(2, 16384, 3);
  const auto id = measure(make_compressor("identity"), samples, {.repeats = 1});
  REQUIRE(id.name == "identity");
  REQUIRE(id.ratio == 1.0);
  REQUIRE(id.relative_error == 0.0);
  REQUIRE(id.lossless);
  REQUIRE(id.encode_rate > bytes_per_second{});
  // int8 per 128: one byte per element plus a 4-byte scale per block.
  const auto q = measure(make_compressor("int8-ef"), samples, {.repeats = 2});
  REQUIRE(q.ratio == Approx(16384.0 * 4 / (16384 + 4 * 128)));
  REQUIRE(q.relative_error > 0.0);
  REQUIRE(q.relative_error < 0.02);
  REQUIRE_FALSE(q.lossless);
  REQUIRE_THROWS_WITH(measure(make_compressor("identity"), std::span(samples).first(1)), Catch::Contains("samples"));
}

}  // namespace compress_calibrate_test
