// The kernels picked at run time (detail/isa.hpp) write exactly the bytes, and leave exactly the carried
// error, of the portable code: each instruction set this CPU has is forced in turn and compared with it,
// on every input class, at sizes around the vector widths and the blocks, with and without error feedback.

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>
#include <trinity/detail/isa.hpp>

#include "inputs.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <ratio>
#include <string>
#include <vector>

namespace compress_isa_test {

using namespace trinity;
using namespace trinity::compress;
using trinity::detail::isa;
using trinity::detail::scoped_isa;

namespace {

//! The instruction sets this CPU runs, the portable one first.
std::vector<isa> available() {
  std::vector<isa> v{isa::portable};
  if (trinity::detail::detected_isa() >= isa::avx2) v.push_back(isa::avx2);
  if (trinity::detail::detected_isa() >= isa::avx512) v.push_back(isa::avx512);
  return v;
}

std::vector<std::vector<float>> inputs() {
  std::vector<std::vector<float>> all;
  for (auto& c : test::input_classes()) all.push_back(c.values);
  // Sizes around the vector widths (8, 16), the quantizer's block (128), sign's (256) and QSGD's (512).
  for (const std::size_t n :
       {1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 127u, 128u, 129u, 255u, 257u, 511u, 513u, 1000u, 4099u})
    all.push_back(test::normal_floats(n, static_cast<unsigned>(n)));
  // Ties at the rounding boundary, negative zeros, magnitudes near fp32's bottom (the double path) and top.
  std::vector<float> edge(512);
  for (std::size_t i = 0; i < edge.size(); ++i) edge[i] = static_cast<float>(static_cast<int>(i % 255) - 127) / 127.0f;
  edge[3] = -0.0f;
  all.push_back(edge);
  std::vector<float> tiny(300);
  for (std::size_t i = 0; i < tiny.size(); ++i) tiny[i] = (i % 2 ? -1.0f : 1.0f) * 1e-35f * static_cast<float>(i + 1);
  all.push_back(tiny);
  // Large enough that the sampled top-k samples (at least 4,096 of 1%) instead of taking every element.
  all.push_back(test::normal_floats(600'000, 99));
  std::vector<float> big = test::normal_floats(300, 5);
  for (auto& x : big) x *= 1e37f;
  all.push_back(big);
  return all;
}

std::vector<std::byte> bytes_of(const frame_buffer& f) { return {f.data(), f.data() + f.size()}; }

//! f's bytes after encode(), or the refusal's message: a path must refuse what the others refuse, alike.
template <class Encode>
std::vector<std::byte> outcome(frame_buffer& f, Encode encode) {
  try {
    encode();
    return bytes_of(f);
  } catch (const invalid_input& e) {
    const std::string m = std::string("refused: ") + e.what();
    const auto* p = reinterpret_cast<const std::byte*>(m.data());
    return {p, p + m.size()};
  }
}

//! Encodes every input on `set`: the frames, and the residual each encode leaves, concatenated.
template <class Codec>
std::pair<std::vector<std::byte>, std::vector<float>> run_on(isa set, bool with_residual) {
  scoped_isa cap(set);
  std::vector<std::byte> frames;
  std::vector<float> residuals;
  for (const auto& x : inputs()) {
    Codec c;
    frame_buffer f;
    std::vector<float> r(with_residual ? x.size() : 0);
    const auto b = outcome(f, [&] { c.encode(x, f, r); });
    frames.insert(frames.end(), b.begin(), b.end());
    const bool refused = b.size() > 8 && std::memcmp(b.data(), "refused:", 8) == 0;
    if (!refused) residuals.insert(residuals.end(), r.begin(), r.end());  // a refused call's residual is unspecified
  }
  return {frames, residuals};
}

//! Three steps of error feedback on `set`: each step's frame and the carried error after it.
template <class Codec>
std::pair<std::vector<std::byte>, std::vector<float>> feedback_on(isa set) {
  scoped_isa cap(set);
  std::vector<std::byte> frames;
  std::vector<float> carried;
  for (const auto& x : inputs()) {
    error_feedback<Codec> c;
    for (int step = 0; step < 3; ++step) {
      frame_buffer f;
      auto y = x;
      for (auto& v : y) v *= static_cast<float>(step + 1) * 0.5f;
      const auto b = outcome(f, [&] { c.encode(y, f); });
      frames.insert(frames.end(), b.begin(), b.end());
      const auto e = c.carried_error();
      carried.insert(carried.end(), e.begin(), e.end());
    }
  }
  return {frames, carried};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

//! The same error feedback done by hand, the way error_feedback did it before any codec fused it.
template <class Codec>
std::pair<std::vector<std::byte>, std::vector<float>> feedback_by_hand() {
  scoped_isa cap(isa::portable);
  std::vector<std::byte> frames;
  std::vector<float> carried;
  for (const auto& x : inputs()) {
    Codec c;
    std::vector<float> error(x.size(), 0.0f);
    for (int step = 0; step < 3; ++step) {
      if (error.empty()) error.assign(x.size(), 0.0f);
      std::vector<float> corrected(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) corrected[i] = x[i] * (static_cast<float>(step + 1) * 0.5f) + error[i];
      frame_buffer f;
      const auto b = outcome(f, [&] { c.encode(corrected, f, error); });
      if (b.size() > 8 && std::memcmp(b.data(), "refused:", 8) == 0) error.clear();  // as error_feedback does
      frames.insert(frames.end(), b.begin(), b.end());
      carried.insert(carried.end(), error.begin(), error.end());
    }
  }
  return {frames, carried};
}

}  // namespace

TEMPLATE_TEST_CASE("every instruction set writes the portable code's bytes and residual", "[compress][isa]", int8, int4,
                   (quantize<8, 32>), (quantize<4, 256>), sign<>, sign<8>, sign<24>, sampled_topk<>,
                   (sampled_topk<std::ratio<1, 1000>>), (sampled_topk<std::ratio<1, 2>>), dgc<>, bf16, fp16, qsgd<>,
                   qsgd<127>, (qsgd<3, 24>)) {
  const auto reference = run_on<TestType>(isa::portable, true);
  const auto plain = run_on<TestType>(isa::portable, false);
  CHECK(plain.first == reference.first);  // asking for the residual changes no byte
  for (const auto set : available()) {
    INFO(trinity::detail::to_string(set));
    const auto got = run_on<TestType>(set, true);
    CHECK(got.first == reference.first);
    CHECK(same_bits(got.second, reference.second));
  }
}

TEMPLATE_TEST_CASE("fused error feedback matches the corrected input encoded by hand, on every instruction set",
                   "[compress][isa]", int8, int4, sign<>, sign<24>, sampled_topk<>,
                   (sampled_topk<std::ratio<1, 1000>>)) {
  const auto reference = feedback_by_hand<TestType>();
  for (const auto set : available()) {
    INFO(trinity::detail::to_string(set));
    const auto got = feedback_on<TestType>(set);
    CHECK(got.first == reference.first);
    CHECK(same_bits(got.second, reference.second));
  }
}

TEST_CASE("a refused input leaves no half frame and a cleared carried error", "[compress][isa]") {
  for (const auto set : available()) {
    INFO(trinity::detail::to_string(set));
    scoped_isa cap(set);
    error_feedback<int8> c;
    frame_buffer f;
    const auto x = test::normal_floats(1000);
    c.encode(x, f);
    const std::size_t one = f.size();
    auto bad = x;
    bad[700] = NAN;
    REQUIRE_THROWS_WITH(c.encode(bad, f), Catch::Contains("input[700]: NaN"));
    CHECK(f.size() == one);
    CHECK(c.carried_error().empty());
    auto huge = x;
    huge[5] = FLT_MAX;
    REQUIRE_THROWS_WITH(int8{}.encode(huge, f), Catch::Contains("block scale overflows fp32"));
    CHECK(f.size() == one);
  }
}

TEST_CASE("the casts' vector paths narrow and widen every exponent, NaN payload and rounding tie as the scalar code",
          "[compress][isa]") {
  // Every float whose low 13 bits (fp16's rounding bits) and 16 bits (bf16's) take the tie, the values
  // around them, every exponent and sign, and the NaN payloads: 2^20 patterns. (All 2^32 floats and all
  // 2^16 halves were compared this way once, offline, on AVX2 and AVX-512: no difference.)
  std::vector<float> x;
  for (std::uint32_t hi = 0; hi < (1u << 12); ++hi)
    for (const std::uint32_t low : {0x0000u, 0x0fffu, 0x1000u, 0x1001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x2000u,
                                    0x3000u, 0x5555u, 0xaaaau, 0x0001u, 0xfffeu, 0x4000u, 0xc000u})
      for (const std::uint32_t mid : {0u, 0x5u, 0xau, 0xfu})
        x.push_back(std::bit_cast<float>((hi << 20) | (mid << 16) | low));
  for (const bool bf : {true, false}) {
    std::vector<std::byte> ref(2 * x.size()), got(2 * x.size());
    std::vector<float> rres(x.size()), gres(x.size()), rw(x.size()), gw(x.size());
    std::size_t rstop = 0;
    {
      scoped_isa cap(isa::portable);
      rstop = compress::detail::narrow(bf, x.data(), x.size(), ref.data(), rres.data());
    }
    for (const auto set : available()) {
      INFO(trinity::detail::to_string(set) << (bf ? " bf16" : " fp16"));
      scoped_isa cap(set);
      // fp16 refuses the first finite value past 65504; compare up to it, then past it element by element.
      CHECK(compress::detail::narrow(bf, x.data(), x.size(), got.data(), gres.data()) == rstop);
      CHECK(std::memcmp(ref.data(), got.data(), 2 * rstop) == 0);
      CHECK(std::memcmp(rres.data(), gres.data(), 4 * rstop) == 0);
      compress::detail::widen(bf, ref.data(), rstop, gw.data());
      scoped_isa portable(isa::portable);
      compress::detail::widen(bf, ref.data(), rstop, rw.data());
      CHECK(std::memcmp(rw.data(), gw.data(), 4 * rstop) == 0);
    }
  }
}

}  // namespace compress_isa_test
