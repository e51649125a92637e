// libFuzzer target: an ack journal's bytes (stream::ack_journal::records_of). What it accepts acknowledges each
// producer's samples in order from 0, each once.
#include "fuzz_reader.hpp"

#include <trinity/stream/ack_journal.hpp>

#include <map>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  const auto b = std::as_bytes(std::span(data, size));
  const std::vector<std::byte> bytes(b.begin(), b.end());
  fuzz::accept_or_refuse<stream::journal_error>([&] {
    std::map<std::uint32_t, std::uint64_t> next;
    for (const auto& r : stream::ack_journal::records_of(bytes, "fuzz.journal"))
      TRINITY_FUZZ_REQUIRE(r.offset == next[r.producer]++);
  });
  return 0;
}
