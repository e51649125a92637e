// libFuzzer target: the low_rank decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must decode to the same bits a second time: no state, no uninitialized memory.
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  const auto [frame, out] = fuzz::decode_as(compress::codec::low_rank, rx, data, size);
  if (!out) return 0;  // refused with a decode_error: the right answer to bad bytes
  TRINITY_FUZZ_REQUIRE(fuzz::decodes_the_same_twice(frame, *out, rx));
  return 0;
}
