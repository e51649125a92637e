// libFuzzer target: the sign decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must have one magnitude per block: plus or minus the block's scale.
#include "fuzz_target.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::sign, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  const std::size_t block = fuzz::param(frame, 0);
  for (std::size_t i = 0; i < out->size(); ++i)
    TRINITY_FUZZ_REQUIRE(std::fabs((*out)[i]) == std::fabs((*out)[i - i % block]));
  return 0;
}
