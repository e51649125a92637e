// Compressors with memory: error feedback delivers everything eventually,
// DGC's accumulation loses nothing, PowerSGD feeds back its residual, and a
// delta stream decodes bit-exactly only in order.

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>

#include <cmath>
#include <cstring>
#include <ratio>

#include "inputs.hpp"

namespace compress_stateful_test {

using namespace trinity;
using namespace trinity::compress;

using ef_topk = error_feedback<topk<std::ratio<1, 100>>>;
using ef_chain = error_feedback<chain<sampled_topk<std::ratio<1, 100>>, int8, zstd<1>>>;

namespace {
//! Σ inputs − Σ decodes − carried error, in double: zero for a correct feedback loop.
template <class C, class Carried>
double feedback_leak(C& c, Carried carried, int steps) {
  const std::size_t n = 4096;
  std::vector<double> sent(n, 0.0), received(n, 0.0);
  for (int t = 0; t < steps; ++t) {
    const auto g = test::normal_floats(n, static_cast<unsigned>(100 + t));
    frame_buffer f;
    c.encode(g, f);
    const auto y = decode(f.bytes());
    for (std::size_t i = 0; i < n; ++i) {
      sent[i] += g[i];
      received[i] += y[i];
    }
  }
  const auto e = carried(c);
  double leak = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    leak = std::max(leak, std::fabs(sent[i] - received[i] - e[i]));
    scale = std::max(scale, std::fabs(sent[i]));
  }
  return leak / scale;
}
}  // namespace

TEMPLATE_TEST_CASE("error feedback delivers everything: sent = received + carried", "[compress]", error_feedback<int4>,
                   error_feedback<sign<>>, ef_topk, ef_chain, error_feedback<qsgd<7>>) {
  TestType c;
  REQUIRE(feedback_leak(
              c, [](auto& x) { return x.carried_error(); }, 20) < 1e-5);
}

TEST_CASE("without error feedback the same sums would not balance", "[compress]") {
  // The control for the test above: a plain top-k drops 99% every step.
  topk<std::ratio<1, 100>> t;
  std::vector<float> none(4096, 0.0f);
  REQUIRE(feedback_leak(
              t, [&](auto&) { return std::span<const float>(none); }, 5) > 0.5);
}

TEST_CASE("dgc with zero momentum loses nothing: sent = received + accumulated", "[compress]") {
  dgc<std::ratio<1, 100>> d(0.0);
  REQUIRE(feedback_leak(
              d, [](auto& x) { return x.accumulated(); }, 20) < 1e-5);
}

TEST_CASE("dgc applies momentum correction and masks what it sent", "[compress]") {
  dgc<std::ratio<1, 2>> d(0.5);
  const std::vector<float> g{4.0f, 1.0f};
  frame_buffer f;
  d.encode(g, f);  // u = g, v = g: sends element 0 (4), keeps v = {0, 1}, u = {0, 1}
  REQUIRE(decode(f.bytes()) == std::vector<float>{4.0f, 0.0f});
  REQUIRE(d.accumulated()[1] == 1.0f);
  f.clear();
  d.encode(g, f);  // u = {4, 1.5}, v = {4, 2.5}: sends element 0 again
  REQUIRE(decode(f.bytes()) == std::vector<float>{4.0f, 0.0f});
  REQUIRE(d.accumulated()[1] == 2.5f);
}

TEST_CASE("powersgd feeds back what rank r misses: sent = received + carried", "[compress]") {
  powersgd<2> p;
  REQUIRE(feedback_leak(
              p, [](auto& x) { return x.carried_error(); }, 10) < 1e-4);
}

TEST_CASE("powersgd's warm start improves a fixed matrix step by step", "[compress]") {
  // The same rank-3 matrix every step: rank 4 with a warm start converges on it.
  std::vector<float> x(2500);
  for (std::size_t i = 0; i < 50; ++i)
    for (std::size_t j = 0; j < 50; ++j)
      x[i * 50 + j] = std::sin(0.3f * i) * std::cos(0.1f * j) + 0.5f * std::cos(0.7f * i) * std::sin(0.9f * j) +
                      0.25f * std::sin(1.3f * i + 0.2f) * std::sin(0.4f * j + 1.0f);
  powersgd<4> p;
  frame_buffer f;
  p.encode(x, f);
  const auto y = decode(f.bytes());
  double err = 0, nx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    err += (x[i] - y[i]) * (x[i] - y[i]);
    nx += x[i] * x[i];
  }
  REQUIRE(std::sqrt(err / nx) < 1e-3);
}

TEST_CASE("a delta stream decodes bit-exactly in order and refuses a gap", "[compress]") {
  delta<zstd<1>, 4> tx;
  decoder rx;
  std::vector<float> frame = test::normal_floats(2000);
  std::vector<frame_buffer> sent;
  for (int t = 0; t < 6; ++t) {
    for (auto i = static_cast<std::size_t>(t); i < frame.size(); i += 7) frame[i] += 0.01f;  // features drift a little
    frame_buffer f;
    tx.encode(frame, f);
    REQUIRE(std::memcmp(rx.decode(f.bytes()).data(), frame.data(), frame.size() * 4) == 0);
    sent.push_back(std::move(f));
  }
  SECTION("small changes compress well against the previous frame") { REQUIRE(sent[1].size() * 3 < sent[0].size()); }
  SECTION("a delta frame needs the frame before it") {
    decoder late;
    REQUIRE_THROWS_WITH(late.decode(sent[1].bytes()), Catch::Contains("no key frame yet"));
    REQUIRE_THROWS_WITH(decode(sent[1].bytes()), Catch::Contains("compress::decoder"));
    (void)late.decode(sent[0].bytes());
    REQUIRE_THROWS_WITH(late.decode(sent[2].bytes()), Catch::Contains("delta.frame: frame 2 does not follow frame 0"));
    REQUIRE_NOTHROW(late.decode(sent[1].bytes()));                 // the failed frame left the stream as it was
    REQUIRE(late.decode(sent[4].bytes()).size() == frame.size());  // frame 4 is a key frame (every 4)
  }
}

}  // namespace compress_stateful_test
