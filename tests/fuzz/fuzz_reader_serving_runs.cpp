// libFuzzer target: a serving-runs file (io::read_serving_runs, what `trinity validate --serving --runs` reads).
#include "fuzz_reader.hpp"

#include <trinity/io/serving_runs.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // Every run it accepts has a positive measured value and cites one of the file's sources.
    const auto f = io::read_serving_runs(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    for (const auto& r : f.runs) {
      TRINITY_FUZZ_REQUIRE(r.value > 0);
      TRINITY_FUZZ_REQUIRE(f.sources.contains(r.source));
    }
  });
  return 0;
}
