// The wire header (stream/detail/frame.hpp): a round trip, and every malformed frame refused, since frames
// come off the network.
#include <catch2/catch.hpp>

#include <trinity/stream/detail/frame.hpp>

#include <random>
#include <vector>

namespace stream_frame_test {

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
  for (std::uint8_t kind : {0, 5, 255}) {
    bad = good;
    bad[0] = std::byte{kind};
    CHECK_FALSE(decode(bad));
  }
  bad = good;
  for (std::uint8_t version : {1, 3}) {  // version 1 had no batches: refused, not misread
    bad[1] = std::byte{version};
    CHECK_FALSE(decode(bad));
  }
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
    b[0] = static_cast<std::byte>(1 + rng() % 3);  // a valid kind often, so acceptance is exercised (batches below)
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

namespace {
// A batch frame of these payloads (byte values 1, 2, ...), from offset `first`.
std::vector<std::byte> batch(std::uint64_t first, const std::vector<std::size_t>& sizes) {
  frame_header h;
  h.kind = frame_kind::batch;
  h.producer = 3;
  h.field = {first, sizes.size(), 0, 0};
  auto b = encoded(h);
  std::uint8_t value = 1;
  for (const auto n : sizes) {
    b.resize(b.size() + length_bytes);
    store_u32(b.data() + b.size() - length_bytes, static_cast<std::uint32_t>(n));
    for (std::size_t i = 0; i < n; ++i) b.push_back(std::byte{value});
    ++value;
  }
  return b;
}
}  // namespace

TEST_CASE("a batch frame carries samples of consecutive offsets, each where its length says", "[stream]") {
  const auto b = batch(40, {3, 0, 5});
  const auto h = decode(b);
  REQUIRE(h);
  CHECK(h->kind == frame_kind::batch);
  CHECK(h->field[0] == 40);
  CHECK(h->field[1] == 3);
  const auto at = batch_samples(b, *h);
  REQUIRE(at);
  REQUIRE(at->size() == 3);
  CHECK((*at)[0] == std::pair<std::size_t, std::size_t>{header_bytes + 4, 3});
  CHECK((*at)[1] == std::pair<std::size_t, std::size_t>{header_bytes + 11, 0});
  CHECK((*at)[2] == std::pair<std::size_t, std::size_t>{header_bytes + 15, 5});
  for (std::size_t i = 0; i < 5; ++i) CHECK(b[(*at)[2].first + i] == std::byte{3});
  CHECK((*at)[2].first + 5 == b.size());
}

TEST_CASE("a batch whose lengths do not fill its body exactly, or that counts fewer than two, decodes to nothing",
          "[stream]") {
  const auto good = batch(0, {4, 4});
  REQUIRE(decode(good));
  REQUIRE(batch_samples(good, *decode(good)));
  // Every truncation: the header refuses short frames, the lengths what is left.
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::span<const std::byte> cut(good.data(), n);
    const auto h = decode(cut);
    CHECK_FALSE((h && batch_samples(cut, *h)));
  }
  auto longer = good;
  longer.push_back(std::byte{0});  // a byte past the last sample
  CHECK_FALSE(batch_samples(longer, *decode(longer)));
  auto lying = good;
  store_u32(lying.data() + header_bytes, 0xffffffffu);  // a length past the frame
  CHECK_FALSE(batch_samples(lying, *decode(lying)));
  for (const std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, max_batch_count + 1, ~std::uint64_t{0}}) {
    auto b = good;
    store_u64(b.data() + 16, count);
    CHECK_FALSE(decode(b));
  }
  auto wraps = good;
  store_u64(wraps.data() + 8, ~std::uint64_t{0});  // offsets past 2^64
  CHECK_FALSE(decode(wraps));
  auto reserved = good;
  store_u64(reserved.data() + 24, 1);
  CHECK_FALSE(decode(reserved));
  // A data frame is not a batch.
  frame_header d;
  d.kind = frame_kind::data;
  const auto data = encoded(d, 8);
  CHECK_FALSE(batch_samples(data, *decode(data)));
}

}  // namespace stream_frame_test
