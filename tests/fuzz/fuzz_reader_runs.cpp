// libFuzzer target: a published-runs file (io::read_published_runs, what `trinity validate --runs` reads).
#include "fuzz_reader.hpp"

#include <trinity/io/published_runs.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // Every run it accepts cites one of the file's sources.
    const auto f = io::read_published_runs(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    for (const auto& r : f.runs) TRINITY_FUZZ_REQUIRE(f.sources.contains(r.source));
  });
  return 0;
}
