// libFuzzer target: a published-runs file (io::read_published_runs, what `trinity validate --runs` reads).
#include "fuzz_reader.hpp"

#include <trinity/io/published_runs.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] { (void)io::read_published_runs(io::parse(fuzz::text_of(data, size), "fuzz.json")); });
  return 0;
}
