// libFuzzer target: the qsgd decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must be finite: norms are bounded and levels in range.
#include "fuzz_target.hpp"

#include <algorithm>
#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::qsgd, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  TRINITY_FUZZ_REQUIRE(std::all_of(out->begin(), out->end(), [](float v) { return std::isfinite(v); }));
  return 0;
}
