// libFuzzer target: whole frames as they arrive off a link, hashes checked.
// Exercises the header parser (magic, version, hashes, sizes) and the
// dispatch to every codec; almost every mutation must end in a decode_error.
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{{.max_bytes = std::size_t{64} << 20}};
  // Hashes are on: an accepted frame decodes the same twice.
  const auto frame = std::as_bytes(std::span(data, size));
  if (const auto out = trinity::fuzz::try_decode(rx, frame)) {
    const auto again = trinity::fuzz::try_decode(rx, frame);
    TRINITY_FUZZ_REQUIRE(again && trinity::fuzz::same_bits(*out, *again));
  }
  return 0;
}
