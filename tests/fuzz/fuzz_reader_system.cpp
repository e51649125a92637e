// libFuzzer target: a system file (io::read_system) on hostile bytes (see fuzz_reader.hpp).
#include "fuzz_reader.hpp"

#include <trinity/io/system.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto s = io::read_system(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    plan::validate(s);  // what the reader accepts is a valid system
  });
  return 0;
}
