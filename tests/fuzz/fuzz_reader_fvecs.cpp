// libFuzzer target: an .fvecs embeddings file (cache::parse_fvecs). What it accepts holds rows x dim floats.
#include "fuzz_reader.hpp"

#include <trinity/cache/fvecs.hpp>

#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  fuzz::accept_or_refuse([&] {
    const auto m = cache::parse_fvecs(std::as_bytes(std::span(data, size)), "fuzz.fvecs");
    TRINITY_FUZZ_REQUIRE(m.dimension == 0 ? m.values.empty() : m.values.size() % m.dimension == 0);
    TRINITY_FUZZ_REQUIRE(size == m.rows() * (4 + 4 * m.dimension));
  });
  return 0;
}
