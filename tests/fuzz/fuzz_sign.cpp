// libFuzzer target: the sign decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must have one magnitude per block: plus or minus the block's scale.
#include "fuzz_target.hpp"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  return fuzz::fuzz_decoder(compress::codec::sign, data, size, [](const auto& frame, const std::vector<float>& out, auto&) {
    const std::size_t block = fuzz::param(frame, 0);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (std::fabs(out[i]) != std::fabs(out[i - i % block])) return false;
    return true;
  });
}
