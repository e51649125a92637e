// libFuzzer target: a Mooncake request trace, JSON lines (io::parse_block_trace). What it accepts holds each
// request's blocks whole: ceil(input_length / 512) ids.
#include "fuzz_reader.hpp"

#include <trinity/io/block_trace.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    for (const auto& q : io::parse_block_trace(fuzz::text_of(data, size), "fuzz.jsonl"))
      TRINITY_FUZZ_REQUIRE(q.hash_ids.size() == (q.input_length + 511) / 512 && !q.hash_ids.empty());
  });
  return 0;
}
