// libFuzzer target: a system file (io::read_system) on hostile bytes (see fuzz_reader.hpp).
#include "fuzz_reader.hpp"

#include <trinity/io/system.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto s = io::read_system(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    // What the reader accepts is a system the planner takes: valid, with a device memory and a device.
    bool valid = true;
    try {
      plan::validate(s);
    } catch (const invalid_input&) {
      valid = false;
    }
    TRINITY_FUZZ_REQUIRE(valid && !s.tiers.empty() && s.device.count >= 1);
  });
  return 0;
}
