// libFuzzer target: a fabric topology file (io::read_topology) on hostile bytes (see fuzz_reader.hpp).
#include "fuzz_reader.hpp"

#include <trinity/io/topology.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] { (void)io::read_topology(io::parse(fuzz::text_of(data, size), "fuzz.json")); });
  return 0;
}
