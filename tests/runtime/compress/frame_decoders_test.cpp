// Frame decoding is open: a codec the library does not ship writes frames under an id of its own, registers
// their decoder, and compress::decode reads them, alone and nested in a built-in chain, beside the built-in
// codecs; taken ids and unknown ones are refused by name.

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "inputs.hpp"

namespace compress_frame_decoders_test {

using namespace trinity;
using namespace trinity::compress;

namespace {

// A codec of a user's: each float as its two halves' bytes split into two planes (high halves, then low), so a
// lossless stage after it sees the exponents together. Lossless; its frame id is 220.
constexpr codec split_halves_id{220};

void decode_split_halves(const frame_view& f, std::span<float> out, element want) {
  if (f.header.element != want) throw decode_error("header.element", "split-halves frames hold what they were given");
  if (f.body.size() != out.size() * 4)
    throw decode_error("split_halves.body",
                       std::to_string(f.body.size()) + " bytes where " + std::to_string(out.size() * 4) + " belong");
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t hi = 0, lo = 0;
    std::memcpy(&hi, f.body.data() + 2 * i, 2);
    std::memcpy(&lo, f.body.data() + 2 * n + 2 * i, 2);
    const std::uint32_t word = std::uint32_t{hi} << 16 | lo;
    std::memcpy(&out[i], &word, 4);
  }
}

struct split_halves {
  using compressor_concept = compressor_tag;
  static constexpr compressor_traits traits{.name = "split-halves",
                                            .wire_codec = split_halves_id,
                                            .role = role::values,
                                            .error = {error_kind::exact, 0.0},
                                            .summable = false,
                                            .expected_ratio = 1.0};

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) const {
    const std::size_t at = begin_frame(out, split_halves_id, element::f32, in.size());
    std::byte* body = out.grow(in.size() * 4);
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::uint32_t word = 0;
      std::memcpy(&word, &in[i], 4);
      const auto hi = static_cast<std::uint16_t>(word >> 16), lo = static_cast<std::uint16_t>(word);
      std::memcpy(body + 2 * i, &hi, 2);
      std::memcpy(body + 2 * in.size() + 2 * i, &lo, 2);
    }
    finish_frame(out, at);
    for (float& r : residual) r = 0.0f;
  }
};
static_assert(Compressor<split_halves>);

inline constexpr frame_decoder split_halves_frames{"split-halves",
                                                   &compress::detail::decode_with<&decode_split_halves>};
inline const bool split_halves_registered = register_frame_decoder(split_halves_id, split_halves_frames);

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

std::string refusal(std::span<const std::byte> frame) {
  try {
    (void)decode(frame);
  } catch (const decode_error& e) {
    return e.field() + ": " + e.problem();
  }
  return "(decoded)";
}

}  // namespace

TEST_CASE("a codec the library does not ship decodes through compress::decode under the frame id it registered",
          "[compress]") {
  REQUIRE(split_halves_registered);
  REQUIRE(registered_frame_decoder(split_halves_id) == &split_halves_frames);
  const auto x = test::normal_floats(1001);
  frame_buffer f;
  split_halves{}.encode(x, f);
  CHECK(std::to_integer<unsigned>(f.data()[5]) == 220u);
  CHECK(same_bits(decode(f.bytes()), x));

  // Nested: a built-in lossless stage around it, then a built-in sparsifier before it, decode the same way.
  chain<split_halves, zstd<3>> packed;
  frame_buffer g;
  packed.encode(x, g);
  CHECK(same_bits(decode(g.bytes()), x));
  chain<topk<std::ratio<1, 10>>, split_halves, lz4<>> sparse;
  frame_buffer h;
  sparse.encode(x, h);
  const auto y = decode(h.bytes());
  REQUIRE(y.size() == x.size());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    kept += y[i] == 0.0f ? std::size_t{0} : y[i] == x[i] ? std::size_t{1} : std::size_t{1000000};
  CHECK(kept == compress::detail::keep_count(x.size(), 1, 10));  // each kept element exact
  CHECK(kept >= 100);
}

TEST_CASE(
    "frame ids: a taken id is refused naming its codec, the same decoder again is no change, and an id no "
    "codec registered is refused by decode",
    "[compress]") {
  static constexpr frame_decoder impostor{"impostor", &compress::detail::decode_with<&decode_split_halves>};
  try {
    (void)register_frame_decoder(codec::zstd, impostor);
    FAIL("a second decoder took zstd's id");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()) ==
          "trinity: frame id 3 is taken by \"zstd\"; \"impostor\" cannot register under it. Fix: give the codec "
          "a free id from 128 to 255");
  }
  CHECK_THROWS_AS(register_frame_decoder(split_halves_id, impostor), std::logic_error);
  CHECK_THROWS_AS(register_frame_decoder(codec{0}, impostor), std::logic_error);
  CHECK(register_frame_decoder(split_halves_id, split_halves_frames));  // the same object: no change
  CHECK(registered_frame_decoder(split_halves_id) == &split_halves_frames);
  CHECK(registered_frame_decoder(codec::zstd)->name == "zstd");
  CHECK(registered_frame_decoder(codec{250}) == nullptr);

  frame_buffer f;
  split_halves{}.encode(test::normal_floats(16), f);
  f.data()[5] = std::byte{250};
  const std::uint64_t h = compress::detail::hash({f.data(), 48});
  std::memcpy(f.data() + 48, &h, 8);
  CHECK(refusal(f.bytes()) == "header.codec: 250 is not a codec this decoder knows");
}

TEST_CASE("the catalog takes a user's compressor after the built-in ones and refuses a name twice", "[compress]") {
  const auto before = catalog().size();
  // Registered by this test once per process (a catalog is registered into before any thread reads it).
  static const bool added = register_compressor(named<split_halves>("split-halves", "a user's codec"));
  REQUIRE(added);
  REQUIRE(catalog().size() == before + 1);
  CHECK(catalog().back().name == "split-halves");
  CHECK(catalog().front().name == "identity");
  auto c = make_compressor("split-halves");
  frame_buffer f;
  const auto x = test::normal_floats(64);
  c.encode(x, f);
  CHECK(same_bits(decode(f.bytes()), x));
  CHECK_THROWS_AS(register_compressor(named<identity>("zstd", "again")), std::logic_error);
}

}  // namespace compress_frame_decoders_test
