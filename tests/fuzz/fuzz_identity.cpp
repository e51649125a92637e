// libFuzzer target: the identity decoder on hostile bytes (see fuzz_target.hpp).
// Every output it accepts must be the body's bytes, unchanged.
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  return fuzz::fuzz_decoder(compress::codec::identity, data, size, [](const auto& frame, const std::vector<float>& out, auto&) {
    return out.empty() || std::memcmp(out.data(), frame.data() + compress::header_size, out.size() * 4) == 0;
  });
}
