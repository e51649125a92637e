// libFuzzer target: a checkpoint file's bytes (shard::detail::parse_checkpoint), as rank 0 of 2 would read
// them. What it accepts holds exactly the payload its header names.
#include "fuzz_reader.hpp"

#include <trinity/shard/checkpoint.hpp>

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto d = shard::detail::parse_checkpoint(std::vector<char>(data, data + size), "rank-0-of-2.ckpt", 2, 0);
    std::size_t floats = 0;
    for (const auto n : d.header.layer_sizes)
      floats += comm::partition(static_cast<std::size_t>(n), 2).size(0) * (1 + d.header.states_per);
    TRINITY_FUZZ_REQUIRE(d.bytes.size() == floats * sizeof(float) + 8);
  });
  return 0;
}
