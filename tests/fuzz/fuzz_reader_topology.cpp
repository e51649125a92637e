// libFuzzer target: a fabric topology file (io::read_topology) on hostile bytes (see fuzz_reader.hpp).
#include "fuzz_reader.hpp"

#include <trinity/io/topology.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // What it accepts reads the same twice (no state, no uninitialised memory), every link between its nodes.
    const auto j = io::parse(fuzz::text_of(data, size), "fuzz.json");
    const auto a = io::read_topology(j), b = io::read_topology(j);
    TRINITY_FUZZ_REQUIRE(a.nodes() == b.nodes() && a.edges() == b.edges());
    TRINITY_FUZZ_REQUIRE(a.edges() == 0 || a.nodes() >= 2);
  });
  return 0;
}
