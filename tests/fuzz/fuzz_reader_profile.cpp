// libFuzzer target: a machine profile (io::read_profile, what `trinity calibrate --out` writes) on hostile bytes.
#include "fuzz_reader.hpp"

#include <trinity/io/profile.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] { (void)io::read_profile(io::parse(fuzz::text_of(data, size), "fuzz.json")); });
  return 0;
}
