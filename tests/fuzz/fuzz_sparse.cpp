// libFuzzer target: the sparse decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must hold at most k non-zero elements.
#include "fuzz_target.hpp"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::sparse, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  const std::uint64_t k = fuzz::param(frame, 0) | (std::uint64_t{fuzz::param(frame, 1)} << 32);
  TRINITY_FUZZ_REQUIRE(
      static_cast<std::uint64_t>(std::count_if(out->begin(), out->end(), [](float v) { return v != 0.0f; })) <= k);
  return 0;
}
