// libFuzzer target: a checkpoint's manifest (shard::parse_checkpoint_manifest, what every load reads first).
// What it accepts is canonical: written back, it is the same bytes, its every piece path plain and relative.
#include "fuzz_reader.hpp"

#include <trinity/shard/checkpoint_manifest.hpp>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  const std::string text(fuzz::text_of(data, size));
  fuzz::accept_or_refuse([&] {
    const auto m = shard::parse_checkpoint_manifest(text, "checkpoint.manifest");
    TRINITY_FUZZ_REQUIRE(shard::to_text(m) == text);
    TRINITY_FUZZ_REQUIRE(m.world_size >= 1 && !m.pieces.empty());
    for (const auto& p : m.pieces) TRINITY_FUZZ_REQUIRE(shard::detail::safe_piece_path(p.path));
  });
  return 0;
}
