// libFuzzer target: a measured attention-kernel file (io::read_attention_kernels, bench/published's
// attention-kernels.json as the presets' kernels are read from it).
#include "fuzz_reader.hpp"

#include <trinity/io/attention_kernels.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // Every kernel it accepts has at least one point, each at a positive rate.
    const auto kernels = io::read_attention_kernels(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    for (const auto& k : kernels) {
      TRINITY_FUZZ_REQUIRE(!k.points.empty());
      for (const auto& p : k.points) TRINITY_FUZZ_REQUIRE(p.flops_per_second > 0);
    }
  });
  return 0;
}
