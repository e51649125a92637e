// libFuzzer target: a transformer probe's result (io::read_transformer_probe, `trinity validate --probe`).
#include "fuzz_reader.hpp"

#include <trinity/io/transformer_probe.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] { (void)io::read_transformer_probe(io::parse(fuzz::text_of(data, size), "fuzz.json")); });
  return 0;
}
