// Every compressor round-trips every input class within the bound its traits
// declare, checked in the bound's own terms (compress/traits.hpp).

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <ratio>

#include "inputs.hpp"

namespace compress_round_trip_test {

using namespace trinity;
using namespace trinity::compress;

using top1 = topk<std::ratio<1, 100>>;
using top33 = topk<std::ratio<1, 3>>;
using sampled1 = sampled_topk<std::ratio<1, 100>>;
using sampled01 = sampled_topk<std::ratio<1, 1000>>;

namespace {

double norm2(std::span<const float> v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

template <class C>
std::vector<float> round_trip(C& c, const std::vector<float>& x) {
  frame_buffer f;
  c.encode(x, f);
  auto y = decode(f.bytes());
  REQUIRE(y.size() == x.size());
  return y;
}

//! |x - y| <= bound · max|x| of the element's block, plus the float rounding of scale·q.
void check_block_absmax(const std::vector<float>& x, const std::vector<float>& y, std::size_t block, double bound) {
  for (std::size_t lo = 0; lo < x.size(); lo += block) {
    const std::size_t hi = std::min(x.size(), lo + block);
    double amax = 0;
    for (std::size_t i = lo; i < hi; ++i) amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
    for (std::size_t i = lo; i < hi; ++i) {
      INFO("element " << i << ": " << x[i] << " -> " << y[i]);
      REQUIRE(std::fabs(static_cast<double>(x[i]) - y[i]) <= bound * amax * (1 + 1e-5) + 128 * FLT_TRUE_MIN);
    }
  }
}

//! Kept elements exact; nothing dropped is larger than anything kept.
void check_dropped_below(const std::vector<float>& x, const std::vector<float>& y, std::size_t k_max) {
  double smallest_kept = INFINITY, largest_dropped = 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y[i] != 0.0f) {
      REQUIRE(std::bit_cast<std::uint32_t>(y[i]) == std::bit_cast<std::uint32_t>(x[i]));
      smallest_kept = std::min(smallest_kept, std::fabs(static_cast<double>(x[i])));
      ++kept;
    } else {
      largest_dropped = std::max(largest_dropped, std::fabs(static_cast<double>(x[i])));
    }
  }
  REQUIRE(kept <= k_max);
  if (kept > 0) REQUIRE(largest_dropped <= smallest_kept);
}

}  // namespace

TEMPLATE_TEST_CASE("lossless codecs are bit-exact on every input class", "[compress]", identity, zstd<1>, zstd<9>,
                   lz4<>, lz4<8>, (chain<zstd<3>>), (delta<zstd<1>>), (delta<lz4<>>)) {
  for (const auto& in : test::input_classes()) {
    SECTION(in.name) {
      TestType c;
      const auto y = round_trip(c, in.values);
      if (!y.empty()) REQUIRE(std::memcmp(y.data(), in.values.data(), in.values.size() * 4) == 0);
    }
  }
}

TEST_CASE("bf16 and fp16 stay within half an ulp", "[compress]") {
  for (const auto& in : test::input_classes()) {
    SECTION(in.name) {
      bf16 b;
      fp16 h;
      const auto yb = round_trip(b, in.values);
      const bool in_range =
          std::all_of(in.values.begin(), in.values.end(), [](float v) { return std::fabs(v) < 65504.0f; });
      std::vector<float> yh;
      if (in_range)
        yh = round_trip(h, in.values);
      else
        REQUIRE_THROWS_AS(round_trip(h, in.values), invalid_input);  // beyond fp16: refused, not infinity
      for (std::size_t i = 0; i < in.values.size(); ++i) {
        const double x = in.values[i];
        // bf16 keeps binary32's exponent range, so the bound is relative everywhere but in
        // binary32's own subnormals (absolute: half of bf16's subnormal step, 2^-134).
        REQUIRE(std::fabs(x - yb[i]) <= bf16::traits.error.bound * std::fabs(x) + 0x1p-134);
        if (!yh.empty())  // fp16's subnormal step is 2^-24: half of it absolute
          REQUIRE(std::fabs(x - yh[i]) <= fp16::traits.error.bound * std::fabs(x) + 0x1p-25);
      }
    }
  }
}

TEMPLATE_TEST_CASE_SIG("absmax block quantization stays within max|x| / 2L of its block", "[compress]",
                       ((unsigned Bits, std::uint32_t Block), Bits, Block), (8, 128), (4, 128), (8, 2), (4, 64)) {
  using Q = quantize<Bits, Block>;
  for (const auto& in : test::input_classes()) {
    SECTION(in.name) {
      Q q;
      const auto y = round_trip(q, in.values);
      check_block_absmax(in.values, y, Block, Q::traits.error.bound);
      // Zero stays exactly zero, and a block's largest element is exact up to rounding of the scale.
      for (std::size_t i = 0; i < y.size(); ++i)
        if (in.values[i] == 0.0f) REQUIRE(y[i] == 0.0f);
    }
  }
}

TEST_CASE("a wrong block bound would be caught", "[compress]") {
  // int4's error is up to max|x|/14; a claimed bound of int8's would fail on the same data.
  int4 q;
  const auto x = test::normal_floats(4096);
  const auto y = round_trip(q, x);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(x[i]) - y[i]));
  REQUIRE(worst > int8::traits.error.bound * 2.0);
}

TEMPLATE_TEST_CASE("sparsifiers keep at most k and never drop a larger element than one they keep", "[compress]", top1,
                   top33, sampled1, sampled01) {
  for (const auto& in : test::input_classes()) {
    SECTION(in.name) {
      TestType s;
      const auto y = round_trip(s, in.values);
      check_dropped_below(
          in.values, y,
          std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(in.values.size() * TestType::density))));
    }
  }
  SECTION("on a large tensor, exact top-k keeps exactly k and sampled keeps nearly k") {
    const auto x = test::normal_floats(1 << 20, 3);
    TestType s;
    const auto y = round_trip(s, x);
    const auto kept = static_cast<std::size_t>(std::count_if(y.begin(), y.end(), [](float v) { return v != 0.0f; }));
    const auto k = static_cast<std::size_t>(std::ceil(x.size() * TestType::density));
    if (TestType::traits.name == std::string_view("topk"))
      REQUIRE(kept == k);
    else
      REQUIRE(kept >= k * 9 / 10);
    REQUIRE(kept <= k);
    check_dropped_below(x, y, k);
  }
}

TEST_CASE("exact top-k matches a sort-based reference", "[compress]") {
  const auto x = test::normal_floats(10007, 5);
  topk<std::ratio<1, 50>> s;
  const auto y = round_trip(s, x);
  std::vector<std::size_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return std::fabs(x[a]) > std::fabs(x[b]); });
  const std::size_t k = (x.size() + 49) / 50;
  std::vector<float> expect(x.size(), 0.0f);
  for (std::size_t j = 0; j < k; ++j) expect[order[j]] = x[order[j]];
  REQUIRE(y == expect);
}

TEMPLATE_TEST_CASE("contractions never return more error than the input holds", "[compress]", sign<>, sign<8>,
                   powersgd<1>, powersgd<4>) {
  for (const auto& in : test::input_classes()) {
    SECTION(in.name) {
      TestType c;
      const auto y = round_trip(c, in.values);
      std::vector<float> diff(y.size());
      for (std::size_t i = 0; i < y.size(); ++i) diff[i] = in.values[i] - y[i];
      REQUIRE(norm2(diff) <= TestType::traits.error.bound * norm2(in.values) * (1 + 1e-5) + 1e-38);
    }
  }
}

TEST_CASE("sign sends the sign and the block's mean magnitude", "[compress]") {
  sign<8> s;
  const std::vector<float> x{1, -2, 3, -4, 5, -6, 7, -8, 0.5f, 0.5f};
  const auto y = round_trip(s, x);
  REQUIRE(y == std::vector<float>{4.5f, -4.5f, 4.5f, -4.5f, 4.5f, -4.5f, 4.5f, -4.5f, 0.5f, 0.5f});
}

TEST_CASE("powersgd recovers a rank-one matrix in one step", "[compress]") {
  const std::size_t rows = 64, cols = 64;  // 4,096 elements: cols = sqrt(n), no padding
  std::vector<float> x(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) x[i * cols + j] = std::sin(0.1f * i + 1.0f) * std::cos(0.2f * j);
  powersgd<2> p;
  const auto y = round_trip(p, x);
  std::vector<float> diff(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) diff[i] = x[i] - y[i];
  REQUIRE(norm2(diff) <= 1e-5 * norm2(x));
}

TEMPLATE_TEST_CASE("qsgd is unbiased: the mean of many decodes converges to the input", "[compress]", qsgd<7>,
                   (qsgd<2, 16>), (qsgd<127, 64>)) {
  // Values that sit between levels, where deterministic rounding would be biased by
  // up to half a step; the test would catch that at 5 sigma with N draws.
  std::vector<float> x(64);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = (i % 2 ? -1.0f : 1.0f) * (0.05f + 0.9f * static_cast<float>(i) / 64.0f);
  double sq = 0;
  for (float v : x) sq += static_cast<double>(v) * v;
  // The largest step of any bucket: the whole vector's norm over s bounds every bucket's.
  const double step = std::sqrt(sq) * TestType::traits.error.bound;
  const int draws = 4000;
  std::vector<double> mean(x.size(), 0.0);
  TestType q(1234);
  for (int t = 0; t < draws; ++t) {
    frame_buffer f;
    q.encode(x, f);
    const auto y = decode(f.bytes());
    for (std::size_t i = 0; i < x.size(); ++i) {
      REQUIRE(std::fabs(static_cast<double>(x[i]) - y[i]) <= step * (1 + 1e-5));
      mean[i] += y[i] / draws;
    }
  }
  // Each draw's error is within one step, so its standard deviation is at most step / 2.
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(std::fabs(mean[i] - x[i]) <= 5.0 * (step / 2) / std::sqrt(draws));
}

TEST_CASE("every catalog compressor decodes to the input's size on every input class", "[compress]") {
  for (const auto& entry : catalog()) {
    for (const auto& in : test::input_classes()) {
      INFO(entry.name << " on " << in.name);
      auto c = entry.make();
      frame_buffer f;
      if (entry.name == "fp16" && in.name == "random, wide range") {
        REQUIRE_THROWS_AS(c.encode(in.values, f), invalid_input);
        continue;
      }
      c.encode(in.values, f);
      const auto y = decode(f.bytes());
      REQUIRE(y.size() == in.values.size());
      for (float v : y) REQUIRE(std::isfinite(v));
    }
  }
}

TEST_CASE("NaN and infinity: lossless codecs carry them, lossy ones refuse them by index", "[compress]") {
  std::vector<float> x = test::normal_floats(1000);
  x[417] = std::nanf("0x123");
  x[600] = -INFINITY;
  for (const auto& entry : catalog()) {
    INFO(entry.name);
    auto c = entry.make();
    frame_buffer f;
    if (c.traits().error.lossless()) {
      c.encode(x, f);
      const auto y = decode(f.bytes());
      REQUIRE(std::memcmp(y.data(), x.data(), x.size() * 4) == 0);  // the NaN payload included
    } else if (c.traits().error.kind == error_kind::relative) {
      c.encode(x, f);  // a narrowing cast keeps NaN a NaN and infinity infinite
      const auto y = decode(f.bytes());
      REQUIRE(std::isnan(y[417]));
      REQUIRE(y[600] == -INFINITY);
    } else {
      REQUIRE_THROWS_MATCHES(
          c.encode(x, f), invalid_input,
          Catch::Matchers::Predicate<invalid_input>(
              [](const invalid_input& e) { return e.field() == "input[417]" || e.field() == "input[600]"; },
              "names the first non-finite element"));
    }
  }
}

TEST_CASE("fp16 refuses finite values beyond its range instead of turning them into infinity", "[compress]") {
  fp16 h;
  frame_buffer f;
  REQUIRE_THROWS_WITH(h.encode(std::vector<float>{1.0f, 70000.0f}, f),
                      Catch::Contains("input[1]") && Catch::Contains("bf16"));
}

TEST_CASE("qsgd on a bucket whose norm is subnormal sends zeros, not undefined behaviour", "[compress]") {
  // The round-trip fuzzer's first finding: s / norm overflowed fp32, and 0 · inf is NaN.
  std::vector<float> x(4, 0.0f);
  x[0] = std::bit_cast<float>(0x00070007u);  // 6.3e-40
  qsgd<7> q;
  const auto y = round_trip(q, x);
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(std::fabs(static_cast<double>(x[i]) - y[i]) <= 1e-38);
}

TEST_CASE("int8 refuses a block whose scale times a level would round past FLT_MAX", "[compress]") {
  // The round-trip fuzzer's second finding: 127 · (3.4e38 / 127) rounded to infinity.
  int8 q;
  frame_buffer f;
  REQUIRE_THROWS_WITH(q.encode(std::vector<float>{1.0f, 3.4e38f}, f), Catch::Contains("block scale overflows fp32"));
  REQUIRE_NOTHROW(q.encode(std::vector<float>{1.0f, 1.0e38f}, f));
}

}  // namespace compress_round_trip_test
