// The CPU side of the GPU codec parity tests, compiled by the host compiler.
#include "codec_reference.hpp"

#include <catch2/catch.hpp>

#include <trinity/compress/cast.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/quantize.hpp>
#include <trinity/compress/wire.hpp>

#include <algorithm>
#include <cmath>

namespace trinity::testing {

std::vector<std::byte> cpu_frame(cpu_codec c, const std::vector<float>& x) {
  compress::frame_buffer f;
  if (c == cpu_codec::bf16)
    compress::bf16{}.encode(x, f);
  else
    compress::int8{}.encode(x, f);
  return {f.bytes().begin(), f.bytes().end()};
}

std::vector<std::byte> body_of(const std::vector<std::byte>& frame) {
  return {frame.begin() + static_cast<std::ptrdiff_t>(compress::header_size), frame.end()};
}

std::vector<float> cpu_decode(const std::vector<std::byte>& frame) { return compress::decode(frame); }

}  // namespace trinity::testing

// The reference itself, checked before the GPU is held to it: a body is exactly what follows the header
// (2 bytes an element for bf16; ceil(n/128) scales then n levels for int8), and decoding the frame stays
// within each codec's bound.
TEST_CASE("the CPU reference's bodies have the layout the GPU kernels write, and decode within bounds",
          "[cuda][codecs]") {
  using trinity::testing::cpu_codec;
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{127}, std::size_t{128}, std::size_t{129}, std::size_t{1000}}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * static_cast<float>(i % 13 + 1);
    const auto bf16 = trinity::testing::cpu_frame(cpu_codec::bf16, x);
    const auto int8 = trinity::testing::cpu_frame(cpu_codec::int8, x);
    CHECK(trinity::testing::body_of(bf16).size() == 2 * n);
    CHECK(trinity::testing::body_of(int8).size() == (n + 127) / 128 * 4 + n);
    const auto yb = trinity::testing::cpu_decode(bf16), yi = trinity::testing::cpu_decode(int8);
    REQUIRE(yb.size() == n);
    REQUIRE(yi.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(std::fabs(yb[i] - x[i]) <= std::fabs(x[i]) * 0x1p-8f);
      float amax = 0;
      for (std::size_t j = i / 128 * 128; j < std::min(n, i / 128 * 128 + 128); ++j)
        amax = std::max(amax, std::fabs(x[j]));
      CHECK(std::fabs(yi[i] - x[i]) <= amax / 254.0f * 1.0001f);
    }
  }
}
