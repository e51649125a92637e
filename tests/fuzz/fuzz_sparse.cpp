// libFuzzer target: the sparse decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must hold at most k non-zero elements.
#include "fuzz_target.hpp"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  return fuzz::fuzz_decoder(compress::codec::sparse, data, size, [](const auto& frame, const std::vector<float>& out, auto&) {
    const std::uint64_t k = fuzz::param(frame, 0) | (std::uint64_t{fuzz::param(frame, 1)} << 32);
    return static_cast<std::uint64_t>(std::count_if(out.begin(), out.end(), [](float v) { return v != 0.0f; })) <= k;
  });
}
