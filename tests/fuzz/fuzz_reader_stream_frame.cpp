// libFuzzer target: a stream frame's header off the wire (stream::detail::decode). It never throws; what it
// accepts encodes back to the same 40 bytes.
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
  return 0;
}
