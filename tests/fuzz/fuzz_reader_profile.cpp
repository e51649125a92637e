// libFuzzer target: a machine profile (io::read_profile, what `trinity calibrate --out` writes) on hostile bytes.
#include "fuzz_reader.hpp"

#include <trinity/io/profile.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // What it accepts reads the same twice: the same codecs, by name, in order.
    const auto j = io::parse(fuzz::text_of(data, size), "fuzz.json");
    const auto a = io::read_profile(j), b = io::read_profile(j);
    TRINITY_FUZZ_REQUIRE(a.compressors.size() == b.compressors.size());
    for (std::size_t i = 0; i < a.compressors.size(); ++i)
      TRINITY_FUZZ_REQUIRE(a.compressors[i].name == b.compressors[i].name);
  });
  return 0;
}
