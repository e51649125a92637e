// libFuzzer target: the identity decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must be the body's bytes, unchanged.
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::identity, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  TRINITY_FUZZ_REQUIRE(out->empty() ||
                       std::memcmp(out->data(), frame.data() + compress::header_size, out->size() * 4) == 0);
  return 0;
}
