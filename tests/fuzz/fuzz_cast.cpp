// libFuzzer target: the cast decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must be representable in the frame's 16-bit type: narrowing it again changes nothing.
#include "fuzz_target.hpp"

#include <bit>
#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::cast, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  const auto e = static_cast<compress::element>(std::to_integer<int>(frame.data()[6]));
  for (const float y : *out) {
    if (std::isnan(y)) continue;
    const float again = e == compress::element::bf16 ? compress::from_bf16(compress::to_bf16(y))
                                                     : compress::from_f16(compress::to_f16(y));
    TRINITY_FUZZ_REQUIRE(std::bit_cast<std::uint32_t>(again) == std::bit_cast<std::uint32_t>(y));
  }
  return 0;
}
