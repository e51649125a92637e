// The wire format on hostile bytes: every truncation, every corrupted byte,
// oversized counts, nesting bombs and inconsistent fields end in a
// decode_error that names the field; nothing crashes (the asan build checks
// the "nothing reads out of bounds" half).

#include <catch2/catch.hpp>

#include <trinity/compress.hpp>

#include <cstring>
#include <ratio>

#include "inputs.hpp"

namespace compress_wire_test {

using namespace trinity;
using namespace trinity::compress;

namespace {
frame_buffer sample_frame() {
  chain<topk<std::ratio<1, 10>>, int8, zstd<1>> c;
  frame_buffer f;
  c.encode(test::normal_floats(300), f);
  return f;
}

std::string field_of(std::span<const std::byte> bytes, decode_limits limits = {}) {
  try {
    (void)decode(bytes, limits);
  } catch (const decode_error& e) {
    return e.field();
  }
  return "(decoded)";
}

void patch(frame_buffer& f, std::size_t offset, const void* v, std::size_t n, bool rehash = true) {
  std::memcpy(f.data() + offset, v, n);
  if (rehash) {
    const std::uint64_t h = compress::detail::hash({f.data(), 48});
    std::memcpy(f.data() + 48, &h, 8);
  }
}
}  // namespace

TEST_CASE("the header is laid out as documented", "[compress][wire]") {
  identity id;
  frame_buffer f;
  id.encode(std::vector<float>{1.0f, 2.0f}, f);
  REQUIRE(f.size() == header_size + 8);
  REQUIRE(std::memcmp(f.data(), "TRNC", 4) == 0);
  REQUIRE(std::to_integer<int>(f.data()[4]) == 1);
  REQUIRE(std::to_integer<int>(f.data()[5]) == static_cast<int>(codec::identity));
  REQUIRE(std::to_integer<int>(f.data()[6]) == static_cast<int>(element::f32));
  REQUIRE(compress::detail::load<std::uint64_t>(f.data() + 8) == 2);
  REQUIRE(compress::detail::load<std::uint64_t>(f.data() + 32) == 8);
  REQUIRE(compress::detail::load<std::uint64_t>(f.data() + 40) == XXH3_64bits(f.data() + header_size, 8));
  REQUIRE(compress::detail::load<float>(f.data() + header_size + 4) == 2.0f);
}

TEST_CASE("every truncation of a frame is refused", "[compress][wire]") {
  const auto f = sample_frame();
  for (std::size_t n = 0; n < f.size(); ++n) {
    INFO("truncated to " << n << " of " << f.size() << " bytes");
    REQUIRE_THROWS_AS(decode(f.bytes().first(n)), decode_error);
  }
  REQUIRE_NOTHROW(decode(f.bytes()));
}

TEST_CASE("every single corrupted byte is caught by a hash or a field check", "[compress][wire]") {
  const auto good = sample_frame();
  for (std::size_t i = 0; i < good.size(); ++i) {
    auto f = good;
    f.data()[i] ^= std::byte{0x5a};
    INFO("byte " << i);
    REQUIRE_THROWS_AS(decode(f.bytes()), decode_error);
  }
}

TEST_CASE("without hashes, corrupted bodies still decode safely or fail by name", "[compress][wire]") {
  const auto good = sample_frame();
  const decode_limits no_hash{.max_bytes = 1 << 24, .verify_hashes = false};
  std::size_t refused = 0;
  for (std::size_t i = header_size; i < good.size(); ++i) {
    for (std::uint8_t v : {0x00, 0xff, 0x80}) {
      auto f = good;
      f.data()[i] = std::byte{v};
      if (field_of(f.bytes(), no_hash) != "(decoded)") ++refused;
    }
  }
  REQUIRE(refused > 0);
}

TEST_CASE("header fields are checked one by one, each error naming its field", "[compress][wire]") {
  identity id;
  frame_buffer base;
  id.encode(test::normal_floats(16), base);
  auto f = base;
  SECTION("magic") {
    f.data()[0] = std::byte{'X'};
    REQUIRE(field_of(f.bytes()) == "header.magic");
  }
  SECTION("version") {
    const std::uint8_t v = 2;
    patch(f, 4, &v, 1);
    REQUIRE_THROWS_WITH(decode(f.bytes()), Catch::Contains("header.version: 2 is not a version"));
  }
  SECTION("header hash") {
    const std::uint8_t v = 9;
    patch(f, 5, &v, 1, false);
    REQUIRE(field_of(f.bytes()) == "header.header_hash");
  }
  SECTION("codec") {
    const std::uint8_t v = 200;
    patch(f, 5, &v, 1);
    REQUIRE_THROWS_WITH(decode(f.bytes()), Catch::Contains("header.codec: 200 is not a codec"));
  }
  SECTION("element") {
    const std::uint8_t v = 0;
    patch(f, 6, &v, 1);
    REQUIRE(field_of(f.bytes()) == "header.element");
  }
  SECTION("flags") {
    const std::uint8_t v = 1;
    patch(f, 7, &v, 1);
    REQUIRE(field_of(f.bytes()) == "header.flags");
  }
  SECTION("count beyond the caller's allocation limit") {
    const std::uint64_t huge = std::uint64_t{1} << 60;
    patch(f, 8, &huge, 8);
    REQUIRE_THROWS_WITH(decode(f.bytes()),
                        Catch::Contains("header.count") && Catch::Contains("decode_limits.max_bytes"));
  }
  SECTION("count inconsistent with the body") {
    const std::uint64_t n = 17;
    patch(f, 8, &n, 8);
    REQUIRE(field_of(f.bytes()) == "identity.body");
  }
  SECTION("body size beyond the bytes") {
    const std::uint64_t n = 1 << 20;
    patch(f, 32, &n, 8);
    REQUIRE_THROWS_WITH(decode(f.bytes()), Catch::Contains("header.body_size") && Catch::Contains("truncated"));
  }
  SECTION("body hash") {
    f.data()[header_size + 3] ^= std::byte{1};
    REQUIRE(field_of(f.bytes()) == "header.body_hash");
  }
  SECTION("trailing bytes") {
    f.append(std::as_bytes(std::span("xx", 2)));
    REQUIRE_THROWS_WITH(decode(f.bytes()), Catch::Contains("follow the frame's body"));
  }
}

TEST_CASE("the caller's limit bounds what a decode allocates, output included", "[compress][wire]") {
  int8 q;
  frame_buffer f;
  q.encode(test::normal_floats(1 << 16), f);  // 256 KiB of output
  REQUIRE_THROWS_WITH(decode(f.bytes(), {.max_bytes = 100000}), Catch::Contains("decode_limits.max_bytes"));
  REQUIRE(decode(f.bytes(), {.max_bytes = 1 << 18}).size() == 1 << 16);
}

TEST_CASE("a frame nested deeper than the caller allows is refused", "[compress][wire]") {
  // Hand-build zstd(zstd(zstd(... identity))) deeper than max_depth.
  frame_buffer inner;
  identity{}.encode(std::vector<float>{1.0f, 2.0f}, inner);
  for (int level = 0; level < 6; ++level) {
    frame_buffer outer;
    zstd<1>{}.wrap(inner.bytes(), outer, element::frame, 2);
    inner = outer;
  }
  REQUIRE_THROWS_WITH(decode(inner.bytes(), {.max_depth = 4}), Catch::Contains("max_depth"));
  REQUIRE(decode(inner.bytes(), {.max_depth = 8}) == std::vector<float>{1.0f, 2.0f});
}

TEST_CASE("a decompression bomb is refused before it inflates", "[compress][wire]") {
  // 256 MiB of zeros compress to a few KiB; the declared raw size is charged first.
  std::vector<float> zeros(std::size_t{1} << 26, 0.0f);
  zstd<1> z;
  frame_buffer f;
  z.encode(zeros, f);
  REQUIRE(f.size() < 100000);
  REQUIRE_THROWS_WITH(decode(f.bytes(), {.max_bytes = 1 << 20}), Catch::Contains("header.count"));
}

TEST_CASE("sparse indices must rise and stay in range", "[compress][wire]") {
  topk<std::ratio<1, 4>> t;
  frame_buffer f;
  t.encode(std::vector<float>{1, 9, 2, 8, 3, 7, 4, 6}, f);
  auto bad = f;
  std::uint32_t idx = 100;
  std::memcpy(bad.data() + header_size, &idx, 4);
  REQUIRE_THROWS_WITH(decode(bad.bytes(), {.verify_hashes = false}), Catch::Contains("sparse.indices[0]"));
  bad = f;
  const std::uint32_t same = compress::detail::load<std::uint32_t>(f.data() + header_size);
  std::memcpy(bad.data() + header_size + 4, &same, 4);
  REQUIRE_THROWS_WITH(decode(bad.bytes(), {.verify_hashes = false}), Catch::Contains("sparse.indices[1]"));
}

TEST_CASE("block_quant refuses a level outside the symmetric range and a NaN scale", "[compress][wire]") {
  int8 q;
  frame_buffer f;
  q.encode(std::vector<float>{1, -1, 0.5f, 0.25f}, f);
  auto bad = f;
  bad.data()[header_size + 4] = std::byte{0x80};  // -128
  REQUIRE_THROWS_WITH(decode(bad.bytes(), {.verify_hashes = false}), Catch::Contains("block_quant.values"));
  bad = f;
  const float nan = std::nanf("");
  std::memcpy(bad.data() + header_size, &nan, 4);
  REQUIRE_THROWS_WITH(decode(bad.bytes(), {.verify_hashes = false}), Catch::Contains("block_quant.scales[0]"));
}

}  // namespace compress_wire_test
