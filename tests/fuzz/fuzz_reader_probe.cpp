// libFuzzer target: a transformer probe's result (io::read_transformer_probe, `trinity validate --probe`).
#include "fuzz_reader.hpp"

#include <trinity/io/transformer_probe.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    // What it accepts has GEMMs and stacks, one stored-bytes figure per stack, each stack a valid shape.
    const auto p = io::read_transformer_probe(io::parse(fuzz::text_of(data, size), "fuzz.json"));
    TRINITY_FUZZ_REQUIRE(!p.gemms.empty() && !p.stacks.empty() && p.stored_bytes.size() == p.stacks.size());
    for (const auto& m : p.stacks)
      TRINITY_FUZZ_REQUIRE(m.job.shape.heads >= 1 && m.job.shape.hidden % m.job.shape.heads == 0);
  });
  return 0;
}
