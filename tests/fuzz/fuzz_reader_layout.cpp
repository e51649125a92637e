// libFuzzer target: a parallel layout as --parallelism and the published runs spell it
// (io::parse_parallel_layout). What it accepts prints as a layout that reads back the same.
#include "fuzz_reader.hpp"

#include <trinity/io/parallel_layout.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto l = io::parse_parallel_layout(fuzz::text_of(data, size));
    TRINITY_FUZZ_REQUIRE(io::parse_parallel_layout(model::to_string(l)) == l);
  });
  return 0;
}
