#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <trinity/io/dlrm_trace.hpp>

namespace io_dlrm_trace_test {

using namespace trinity;

namespace {

// The refusal's field and problem, as one string.
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const invalid_input& e) {
    return e.field() + " | " + e.problem();
  }
  return "accepted";
}

std::string binary_of(const std::vector<std::uint64_t>& rows) {
  std::string out;
  for (auto v : rows)
    for (int b = 0; b < 8; ++b, v >>= 8) out.push_back(static_cast<char>(v & 0xff));
  return out;
}

struct scratch_dir {
  std::filesystem::path path;
  explicit scratch_dir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() { std::filesystem::remove_all(path); }
  void write(const std::string& file, const std::string& text) const {
    std::ofstream(path / file, std::ios::binary) << text;
  }
};

}  // namespace

TEST_CASE("a DLRM text trace reads as the reference writes it, and its bags from the size trace", "[io][dlrm]") {
  // write_trace_to_file writes str(list)[1:-1]: ", " between rows, no newline.
  const auto rows = io::parse_dlrm_indices("1, 2, 3, 4, 5, 3, 4, 1, 1, 6, 3", "trace.log");
  CHECK(rows == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 3, 4, 1, 1, 6, 3});
  // Newlines and a trailing newline are separators too; the largest uint64 is a row.
  CHECK(io::parse_dlrm_indices("7,\n8 ,9\n", "t") == std::vector<std::uint64_t>{7, 8, 9});
  CHECK(io::parse_dlrm_indices("18446744073709551615", "t").front() == ~std::uint64_t{0});

  const auto t = io::make_dlrm_table_trace(rows, "3, 0, 2, 6", "trace.log", "size_trace.log");
  CHECK(t.offsets == std::vector<std::size_t>{0, 3, 3, 5, 11});
  CHECK(t.bags() == 4);
  CHECK(t.rows == 7);
  CHECK(t.bags_given);
  const auto single = io::make_dlrm_table_trace(rows, "", "trace.log", "size_trace.log");
  CHECK(single.bags() == rows.size());
  CHECK_FALSE(single.bags_given);
}

TEST_CASE("a DLRM binary trace is little-endian uint64, a round trip of the rows", "[io][dlrm]") {
  const std::vector<std::uint64_t> rows{0, 1, 255, 256, 0x0123456789abcdefULL, ~std::uint64_t{0} - 1};
  CHECK(io::parse_dlrm_indices_binary(binary_of(rows), "trace.bin") == rows);
  CHECK_THAT(refusal([] { io::parse_dlrm_indices_binary(std::string(12, '\0'), "trace.bin"); }),
             Catch::Contains("trace.bin | 12 bytes are not whole uint64 rows"));
  CHECK_THAT(refusal([] { io::parse_dlrm_indices_binary("", "trace.bin"); }),
             Catch::Contains("trace.bin | holds no lookup"));
}

TEST_CASE("a hostile DLRM trace is refused with the file and the entry", "[io][dlrm]") {
  const auto rows = [](const char* text) { return refusal([&] { io::parse_dlrm_indices(text, "t.log"); }); };
  CHECK_THAT(rows("1, , 2"), Catch::Contains("t.log: indices[1] | is empty"));
  CHECK_THAT(rows(", 1"), Catch::Contains("t.log: indices[0] | is empty"));
  CHECK_THAT(rows("1 2"), Catch::Contains("t.log: indices[1] | follows the number before it with no comma"));
  CHECK_THAT(rows("1, -2"), Catch::Contains("t.log: indices[1] | is not a whole number: \"-2\""));
  CHECK_THAT(rows("1, 2.5"), Catch::Contains("t.log: indices[1] | is not a whole number"));
  CHECK_THAT(rows("tensor(5)"), Catch::Contains("t.log: indices[0] | is not a whole number"));
  CHECK_THAT(rows("1, 18446744073709551616"), Catch::Contains("t.log: indices[1] | is past the largest row"));
  CHECK_THAT(rows("1, 2,"), Catch::Contains("t.log: indices[2] | is missing after the trace's last comma"));
  CHECK_THAT(rows(" \n"), Catch::Contains("t.log | holds no lookup"));

  const std::vector<std::uint64_t> five{1, 2, 3, 4, 5};
  const auto bags = [&](const char* sizes) {
    return refusal([&] { io::make_dlrm_table_trace(five, sizes, "t.log", "s.log"); });
  };
  CHECK_THAT(bags("2, 4"), Catch::Contains("s.log: sizes[1] | takes the bags past the 5 rows of t.log"));
  CHECK_THAT(bags("2, 2"), Catch::Contains("s.log | pools 4 rows in all, but t.log looks up 5"));
  CHECK_THAT(bags("2, 18446744073709551615"), Catch::Contains("s.log: sizes[1] | takes the bags past"));
  CHECK_THAT(bags("2; 3"), Catch::Contains("s.log: sizes[0] | is not a whole number"));
  CHECK_THAT(refusal([] { io::make_dlrm_table_trace({~std::uint64_t{0}}, "", "t.log", "s.log"); }),
             Catch::Contains("t.log: indices[0] | is row 18446744073709551615, past the most rows"));
}

TEST_CASE("a DLRM row id that would wrap its table's row count is refused where it stands", "[io][dlrm]") {
  const auto table = [](std::string_view text) {
    return io::make_dlrm_table_trace(io::parse_dlrm_indices(text, "trace_0.log"), "", "trace_0.log", "s.log");
  };
  const auto refused = [&](std::string_view text) { return refusal([&] { table(text); }); };
  // The fuzzer's input (issue 86): 2^64 - 1 beside smaller ids, whose count once sized the table at 986 rows.
  CHECK_THAT(refused("00,  7,  8,  7,  8, 985, 018446744073709551615"),
             Catch::Contains("trace_0.log: indices[6] | is row 18446744073709551615, past the most rows a table "
                             "may have, 2^48"));
  // Its neighbours: 2^64 - 2, the bound itself, and the bound with the id first.
  CHECK_THAT(refused("1, 18446744073709551614"), Catch::Contains("indices[1] | is row 18446744073709551614"));
  CHECK_THAT(refused("3, 281474976710656"), Catch::Contains("indices[1] | is row 281474976710656"));
  CHECK_THAT(refused("281474976710656, 3"), Catch::Contains("indices[0] | is row 281474976710656"));
  // One below the bound is a table of 2^48 rows, every id inside it.
  const auto largest = table("5, 281474976710655");
  CHECK(largest.rows == io::max_dlrm_rows);
  for (const auto i : largest.indices) CHECK(i < largest.rows);
  // The binary form is read to the same rule.
  std::string bytes(8, '\xff');
  const auto rows = io::parse_dlrm_indices_binary(bytes, "trace_0.bin");
  CHECK_THAT(refusal([&] { io::make_dlrm_table_trace(rows, "", "trace_0.bin", "s.log"); }),
             Catch::Contains("trace_0.bin: indices[0] | is row 18446744073709551615"));
}

TEST_CASE("DLRM tables whose sample counts differ are refused, with or without size traces", "[io][dlrm]") {
  scratch_dir d("trinity-dlrm-samples");
  d.write("trace_0.log", "1, 2, 3");     // three samples, one row each
  d.write("trace_1.log", "4, 5, 6, 7");  // four
  CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }),
             Catch::Contains("trace_1.log | has 4 samples where") && Catch::Contains("trace_0.log has 3"));
  d.write("size_trace_1.log", "2, 2");  // two bags of two: two samples, still not three
  CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }), Catch::Contains("has 2 samples where"));
  d.write("size_trace_1.log", "2, 1, 1");  // three bags: the tables agree
  CHECK(io::read_dlrm_trace(d.path.string()).size() == 2);
}

TEST_CASE("a DLRM trace directory reads table by table, text or binary, until the first missing", "[io][dlrm]") {
  SECTION("the shipped SYNTHETIC excerpt: three tables, the first binary, 2,048 samples each") {
    const auto trace = io::read_dlrm_trace(std::string(TRINITY_SOURCE_DIR) + "/docs/examples/dlrm-trace");
    REQUIRE(trace.size() == 3);
    for (const auto& t : trace) {
      CHECK(t.bags() == 2048);
      CHECK(t.offsets.back() == t.indices.size());
    }
    CHECK(trace[0].file.ends_with("trace_0.bin"));
    CHECK(trace[1].file.ends_with("trace_1.log"));
    CHECK(trace[0].rows <= 40'000'000);
    CHECK(trace[1].rows <= 39'060);
    CHECK(trace[2].indices.size() == 2048);  // pooling 1: one row a sample
  }
  SECTION("tables past a gap are not read; a size trace is optional") {
    scratch_dir d("trinity-dlrm-gap");
    d.write("trace_0.log", "1, 2, 3");
    d.write("trace_2.log", "4");
    const auto trace = io::read_dlrm_trace(d.path.string());
    REQUIRE(trace.size() == 1);
    CHECK(trace[0].bags() == 3);
  }
  SECTION("refusals name the file") {
    scratch_dir d("trinity-dlrm-bad");
    CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }), Catch::Contains("holds no trace_0.log"));
    CHECK_THAT(refusal([&] { io::read_dlrm_trace((d.path / "nothing").string()); }),
               Catch::Contains("is not a directory"));
    d.write("trace_0.log", "1, 2, 3");
    d.write("trace_0.bin", binary_of({1, 2, 3}));
    CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }), Catch::Contains("both trace_0.log and .bin"));
    std::filesystem::remove(d.path / "trace_0.bin");
    d.write("size_trace_0.log", "1, 2");
    d.write("trace_1.log", "5, 6, 7");
    d.write("size_trace_1.log", "1, 1, 1");
    CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }),
               Catch::Contains("has 3 samples where") && Catch::Contains("has 2"));
    d.write("size_trace_1.log", "\n");
    CHECK_THAT(refusal([&] { io::read_dlrm_trace(d.path.string()); }), Catch::Contains("holds no bag size"));
  }
}

}  // namespace io_dlrm_trace_test
