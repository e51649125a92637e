// libFuzzer target: a stream frame off the wire (stream::detail::decode, and a batch's samples). It never
// throws; what it accepts encodes back to the same 40 bytes, and a batch's samples tile its body in order.
#include "fuzz_reader.hpp"

#include <trinity/stream/detail/frame.hpp>

#include <array>
#include <cstring>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity::stream::detail;
  const auto bytes = std::as_bytes(std::span(data, size));
  const auto h = decode(bytes);
  if (!h) return 0;
  std::array<std::byte, header_bytes> again{};
  encode(*h, again);
  TRINITY_FUZZ_REQUIRE(std::memcmp(again.data(), data, header_bytes) == 0);
  if (h->kind != frame_kind::batch) return 0;
  const auto at = batch_samples(bytes, *h);
  if (!at) return 0;
  TRINITY_FUZZ_REQUIRE(at->size() == h->field[1]);
  std::size_t pos = header_bytes;
  for (const auto& [start, n] : *at) {
    TRINITY_FUZZ_REQUIRE(start == pos + length_bytes && load_u32(bytes.data() + pos) == n);
    pos = start + n;
  }
  TRINITY_FUZZ_REQUIRE(pos == size);
  return 0;
}
