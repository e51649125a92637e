// libFuzzer target: encode the fuzzer's floats with every built-in
// compressor, decode, and check the promise: bit-exact for lossless codecs,
// the right count and finite values for lossy ones, and non-finite input
// either carried bit-exactly (lossless, casts) or refused by name (lossy).
#include "fuzz_target.hpp"

#include <trinity/compress/lossless/catalog.hpp>

#include <cmath>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  if (size < 1) return 0;
  const auto& all = compress::catalog();
  const auto& entry = all[data[0] % all.size()];
  std::vector<float> in((size - 1) / 4);
  if (!in.empty()) std::memcpy(in.data(), data + 1, in.size() * 4);
  auto c = entry.make();
  compress::frame_buffer frame;
  try {
    c.encode(in, frame);
  } catch (const invalid_input& e) {
    // Only lossy codecs refuse: non-finite input, fp16 overflow, or magnitudes
    // whose block statistics leave fp32 (documented in detail/finite.hpp).
    TRINITY_FUZZ_REQUIRE(!c.traits().error.lossless());
    bool refusable = false;
    for (float x : in)
      refusable |= !std::isfinite(x) || (entry.name == "fp16" && std::fabs(x) >= 65520.0f) || std::fabs(x) > 1e30f;
    TRINITY_FUZZ_REQUIRE(refusable);
    return 0;
  }
  compress::decoder rx;
  const std::vector<float> out = rx.decode(frame.bytes());
  TRINITY_FUZZ_REQUIRE(out.size() == in.size());
  if (c.traits().error.lossless()) {
    TRINITY_FUZZ_REQUIRE(in.empty() || std::memcmp(out.data(), in.data(), in.size() * 4) == 0);
  } else if (c.traits().error.kind != compress::error_kind::relative) {
    for (float y : out) TRINITY_FUZZ_REQUIRE(std::isfinite(y));
  }
  return 0;
}
