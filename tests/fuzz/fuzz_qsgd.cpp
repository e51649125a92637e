// libFuzzer target: the qsgd decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must be finite: scales are bounded and levels in range.
#include "fuzz_target.hpp"

#include <algorithm>
#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  return fuzz::fuzz_decoder(compress::codec::qsgd, data, size, [](const auto&, const std::vector<float>& out, auto&) {
    return std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); });
  });
}
