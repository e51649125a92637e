// libFuzzer target: a DLRM lookup trace (io/dlrm_trace.hpp): the input's first line as a text trace of rows, the
// rest as its size trace; the whole input as a binary trace. What it accepts pools every row in exactly one bag.
#include "fuzz_reader.hpp"

#include <trinity/io/dlrm_trace.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  const std::string text(fuzz::text_of(data, size));
  const auto line = text.find('\n');
  fuzz::accept_or_refuse([&] {
    auto rows = io::parse_dlrm_indices(text.substr(0, line), "trace_0.log");
    const std::string sizes = line == std::string::npos ? std::string() : text.substr(line + 1);
    const auto t = io::make_dlrm_table_trace(std::move(rows), sizes, "trace_0.log", "size_trace_0.log");
    TRINITY_FUZZ_REQUIRE(t.offsets.front() == 0 && t.offsets.back() == t.indices.size());
    for (std::size_t b = 0; b < t.bags(); ++b) TRINITY_FUZZ_REQUIRE(t.offsets[b] <= t.offsets[b + 1]);
    for (const auto i : t.indices) TRINITY_FUZZ_REQUIRE(i < t.rows);
  });
  fuzz::accept_or_refuse([&] {
    const auto rows = io::parse_dlrm_indices_binary(text, "trace_0.bin");
    TRINITY_FUZZ_REQUIRE(rows.size() * 8 == size);
  });
  return 0;
}
