// libFuzzer target: the delta decoder on hostile bytes, in a stream that has
// already seen a key frame, so the delta path (XOR against the previous
// frame, frame order, size checks) is reached too.
#include "fuzz_target.hpp"

#include <trinity/compress/lossless/delta.hpp>

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  compress::decoder rx{fuzz::fuzz_limits};
  // Prime the stream with a key frame of the size the fuzzed header claims (at most 4,096).
  std::uint64_t count = 0;
  if (size >= 9) std::memcpy(&count, data + 1, 8);
  std::vector<float> key(static_cast<std::size_t>(count % 4097), 1.5f);
  compress::delta<> tx;
  compress::frame_buffer first;
  tx.encode(key, first);
  (void)rx.decode(first.bytes());
  // A key frame is the same to any receiver; a delta frame, to one that saw the same key frame.
  const auto frame = fuzz::frame_of(compress::codec::delta, data, size);
  const auto out = fuzz::try_decode(rx, frame.bytes());
  if (out && fuzz::param(frame, 2) == 1) {
    compress::decoder fresh{fuzz::fuzz_limits};
    const auto again = fuzz::try_decode(fresh, frame.bytes());
    TRINITY_FUZZ_REQUIRE(again && fuzz::same_bits(*out, *again));
  }
  return 0;
}
