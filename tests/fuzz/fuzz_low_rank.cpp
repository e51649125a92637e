// libFuzzer target: the low_rank decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must decode to the same bits a second time: no state, no uninitialized memory.
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  return fuzz::fuzz_decoder(compress::codec::low_rank, data, size, fuzz::decodes_the_same_twice);
}
