// libFuzzer target: a request trace, CSV of timestamp,row (cache::parse_trace) over 1,000 embeddings. What it
// accepts names rows that exist, in time order.
#include "fuzz_reader.hpp"

#include <trinity/cache/trace.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto t = cache::parse_trace(fuzz::text_of(data, size), 1000, "fuzz.csv");
    for (std::size_t i = 0; i < t.size(); ++i) {
      TRINITY_FUZZ_REQUIRE(t[i].row < 1000);
      TRINITY_FUZZ_REQUIRE(i == 0 || t[i - 1].timestamp <= t[i].timestamp);
    }
  });
  return 0;
}
