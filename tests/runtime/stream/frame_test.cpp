// The wire header (stream/detail/frame.hpp): a round trip, and every malformed frame refused, since frames
// come off the network.
#include <catch2/catch.hpp>

#include <trinity/stream/detail/frame.hpp>

#include <random>
#include <vector>

using namespace trinity::stream::detail;

namespace {
std::vector<std::byte> encoded(const frame_header& h, std::size_t payload = 0) {
  std::vector<std::byte> b(header_bytes + payload, std::byte{0x5a});
  encode(h, std::span<std::byte, header_bytes>(b.data(), header_bytes));
  return b;
}
}  // namespace

TEST_CASE("a frame header round-trips, little-endian whatever the host", "[stream]") {
  frame_header h;
  h.kind = frame_kind::state;
  h.flags = flag_reply_to_hello;
  h.producer = 0x01020304;
  h.field = {0x1122334455667788ULL, 2, 3, 0xffffffffffffffffULL};
  const auto b = encoded(h);
  CHECK(b[4] == std::byte{0x04});  // the producer id's low byte first
  CHECK(b[8] == std::byte{0x88});
  const auto back = decode(b);
  REQUIRE(back);
  CHECK(back->kind == frame_kind::state);
  CHECK(back->flags == flag_reply_to_hello);
  CHECK(back->producer == h.producer);
  CHECK(back->field == h.field);

  frame_header d;
  d.kind = frame_kind::data;
  d.producer = 9;
  d.field = {77, 0, 0, 0};
  const auto with_payload = encoded(d, 1000);
  REQUIRE(decode(with_payload));
  CHECK(decode(with_payload)->field[0] == 77);
}

TEST_CASE("a malformed frame decodes to nothing", "[stream]") {
  frame_header h;
  h.kind = frame_kind::hello;
  const auto good = encoded(h);
  REQUIRE(decode(good));
  for (std::size_t n = 0; n < header_bytes; ++n)
    CHECK_FALSE(decode(std::span<const std::byte>(good.data(), n)));  // every truncation
  auto bad = good;
  for (std::uint8_t kind : {0, 4, 255}) {
    bad = good;
    bad[0] = std::byte{kind};
    CHECK_FALSE(decode(bad));
  }
  bad = good;
  bad[1] = std::byte{2};  // a version this one does not read
  CHECK_FALSE(decode(bad));
  bad = good;
  bad[3] = std::byte{1};  // reserved
  CHECK_FALSE(decode(bad));
  bad = good;
  bad[2] = std::byte{flag_reply_to_hello};  // only a state has flags
  CHECK_FALSE(decode(bad));
  auto longer = good;
  longer.push_back(std::byte{0});  // a hello carries no payload
  CHECK_FALSE(decode(longer));
  frame_header s;
  s.kind = frame_kind::state;
  auto state = encoded(s);
  state[2] = std::byte{2};  // an unknown flag
  CHECK_FALSE(decode(state));
}

TEST_CASE("random bytes never decode to a frame that does not re-encode to them", "[stream]") {
  std::mt19937_64 rng(7);
  std::size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::byte> b(header_bytes + rng() % 3);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    b[0] = static_cast<std::byte>(1 + rng() % 3);  // a valid kind often, so acceptance is exercised
    b[1] = std::byte{wire_version};
    b[3] = std::byte{0};
    b[2] = static_cast<std::byte>(rng() % 2);
    const auto h = decode(b);
    if (!h) continue;
    ++accepted;
    const auto again = encoded(*h, b.size() - header_bytes);
    CHECK(std::equal(again.begin(), again.begin() + header_bytes, b.begin()));
  }
  CHECK(accepted > 1000);
}
