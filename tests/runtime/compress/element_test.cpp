// The narrowing conversions against the compiler's own _Float16 and a
// truncate-and-round reference for bfloat16: independent implementations.

#include <catch2/catch.hpp>

#include <trinity/compress/element.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

namespace compress_element_test {

using namespace trinity::compress;

TEST_CASE("fp16 conversion agrees with the compiler's _Float16 on every half and a million floats", "[compress]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    const float f = from_f16(half);
    const auto ref = static_cast<float>(std::bit_cast<_Float16>(half));
    if (std::isnan(ref)) {
      REQUIRE(std::isnan(f));
      continue;
    }
    REQUIRE(std::bit_cast<std::uint32_t>(f) == std::bit_cast<std::uint32_t>(ref));
    REQUIRE(to_f16(f) == half);  // every half survives the round trip
  }
  std::mt19937 g(42);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(g()));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(from_f16(to_f16(f))));
      continue;
    }
    INFO(f);
    REQUIRE(to_f16(f) == std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)));
  }
}

TEST_CASE("bf16 conversion rounds to nearest even", "[compress]") {
  REQUIRE(to_bf16(1.0f) == 0x3f80);
  REQUIRE(from_bf16(to_bf16(1.0f + 0x1p-8f)) == 1.0f);                // a tie goes to even
  REQUIRE(from_bf16(to_bf16(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f);  // a tie goes to even, upward
  REQUIRE(from_bf16(to_bf16(1.0f + 0x1p-8f + 0x1p-20f)) == 1.0f + 0x1p-7f);
  REQUIRE(std::isnan(from_bf16(to_bf16(std::nanf("")))));
  REQUIRE(std::isinf(from_bf16(to_bf16(3.4e38f))));  // beyond bf16's largest finite: infinity
  std::mt19937 g(9);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(g()));
    if (std::isnan(f) || std::isinf(f)) continue;
    const double lo = from_bf16(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16));
    const double hi = from_bf16(static_cast<std::uint16_t>((std::bit_cast<std::uint32_t>(f) >> 16) + 1));
    const double r = from_bf16(to_bf16(f));
    // The result is one of the two neighbours, the nearer one.
    REQUIRE((r == lo || r == hi || std::isinf(r)));
    if (!std::isinf(r) && !std::isinf(hi)) REQUIRE(std::fabs(r - f) <= std::fabs((r == lo ? hi : lo) - f));
  }
}

}  // namespace compress_element_test
