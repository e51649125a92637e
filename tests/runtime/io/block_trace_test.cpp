// Mooncake's block-hashed trace format, read strictly: the shipped excerpt reads, and every malformed line is
// refused with its line number and field.
#include <catch2/catch.hpp>

#include <trinity/io/block_trace.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace io_block_trace_test {

using namespace trinity;

namespace {
std::string write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("trinity-block-trace-" + name + ".jsonl");
  std::ofstream(p) << text;
  return p.string();
}
void refused(const std::string& text, const std::string& field_part, const std::string& problem_part) {
  const auto f = write("bad", text);
  INFO(text);
  try {
    (void)io::read_block_trace(f);
    FAIL("accepted");
  } catch (const invalid_input& e) {
    CHECK_THAT(e.field(), Catch::Contains(field_part));
    CHECK_THAT(e.problem(), Catch::Contains(problem_part));
  }
}
const std::string good = R"({"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]})"
                         "\n";
}  // namespace

TEST_CASE("the shipped Mooncake excerpt reads whole", "[io][trace]") {
  const auto t = io::read_block_trace(TRINITY_SOURCE_DIR "/docs/examples/mooncake_conversation_excerpt.jsonl");
  REQUIRE(t.size() == 800);
  std::uint64_t blocks = 0;
  for (const auto& q : t) {
    blocks += q.hash_ids.size();
    CHECK(q.hash_ids.size() == (q.input_length + 511) / 512);
  }
  CHECK(blocks == 17749);
}

TEST_CASE("a malformed block trace is refused by line and field", "[io][trace]") {
  const auto r = io::read_block_trace(write("good", good + "\n" + good));
  CHECK(r.size() == 2);
  refused(good + R"({"timestamp": 0, "input_length": 1000, "output_lenght": 5, "hash_ids": [0, 1]})",
          ":2: output_lenght", "did you mean \"output_length\"");
  refused(R"({"timestamp": 0, "input_length": 1000, "hash_ids": [0, 1]})", ":1: output_length", "missing");
  refused(R"({"timestamp": -1, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]})", ":1: timestamp",
          "whole number");
  refused(R"({"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 4294967296]})", "hash_ids[1]",
          "4294967296 is out of range: expected a whole number from 0 to 4294967295");
  refused(R"({"timestamp": 0, "input_length": 1500, "output_length": 5, "hash_ids": [0, 1]})", "hash_ids",
          "3 expected");
  refused(R"({"timestamp": 0, "input_length": 0, "output_length": 5, "hash_ids": []})", "hash_ids", "0 blocks");
  refused(good + R"({"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [2, 1]})", ":2: hash_ids[1]",
          "follows 2 here but 0 earlier");
  refused(R"({"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 0]})", "hash_ids[1]",
          "one parent");
  refused(R"({"timestamp": 0, "input_length": 1000, "timestamp": 1, "output_length": 5, "hash_ids": [0, 1]})",
          "timestamp", "twice");
  refused("{\"timestamp\": 0, \"input_length\": 10", ":1", "not JSON");
  refused("[1, 2]", ":1", "a JSON object");
  refused("\n\n", "", "no request");
}

}  // namespace io_block_trace_test
