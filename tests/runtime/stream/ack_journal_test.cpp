// The consumer's acknowledgement journal: a round trip, a torn last record cut off, corruption anywhere else
// refused naming the record.
#include <catch2/catch.hpp>

#include <trinity/stream/ack_journal.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace stream_ack_journal_test {

using namespace trinity;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const char* name) {
  auto p = fs::temp_directory_path() / ("trinity-journal-" + std::to_string(::getpid()) + "-" + name);
  fs::remove(p);
  return p;
}
void overwrite(const fs::path& p, std::uintmax_t at, char byte) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(byte);
}
}  // namespace

TEST_CASE("an ack journal reads back what was flushed, per producer", "[stream]") {
  const auto p = scratch("roundtrip");
  {
    stream::ack_journal j(p);
    for (std::uint64_t i = 0; i < 5; ++i) j.append(1, i, 100 + i);
    for (std::uint64_t i = 0; i < 3; ++i) j.append(7, i, 700 + i);
    CHECK(j.next(1) == 5);
    CHECK_THROWS_WITH(j.append(1, 7, 0), Catch::Contains("5 is its next unacknowledged one"));
    j.flush();
  }
  stream::ack_journal again(p);
  CHECK(again.next(1) == 5);
  CHECK(again.next(7) == 3);
  CHECK(again.next(2) == 0);
  CHECK(again.torn_records_dropped() == 0);
  const auto records = stream::ack_journal::read(p);
  REQUIRE(records.size() == 8);
  CHECK(records[4] == stream::ack_record{1, 4, 104});
  CHECK(records[7] == stream::ack_record{7, 2, 702});
  CHECK(fs::file_size(p) == 8 + 8 * 32);
  fs::remove(p);
}

TEST_CASE("a torn last record is cut off, and appending goes on after it", "[stream]") {
  const auto p = scratch("torn");
  {
    stream::ack_journal j(p);
    for (std::uint64_t i = 0; i < 4; ++i) j.append(3, i, i);
    j.flush();
  }
  fs::resize_file(p, fs::file_size(p) - 5);  // the crash tore the fourth record
  {
    stream::ack_journal j(p);
    CHECK(j.torn_records_dropped() == 1);
    CHECK(j.next(3) == 3);
    j.append(3, 3, 33);
    j.flush();
  }
  const auto records = stream::ack_journal::read(p);
  REQUIRE(records.size() == 4);
  CHECK(records[3] == stream::ack_record{3, 3, 33});

  // A whole last record with a bad check is torn too (a partly written sector).
  overwrite(p, 8 + 3 * 32 + 20, 'x');
  stream::ack_journal j(p);
  CHECK(j.torn_records_dropped() == 1);
  CHECK(j.next(3) == 3);
  fs::remove(p);
}

TEST_CASE("corruption before the last record, a wrong head or a gap is refused naming it", "[stream]") {
  const auto p = scratch("corrupt");
  {
    stream::ack_journal j(p);
    for (std::uint64_t i = 0; i < 4; ++i) j.append(2, i, i);
    j.flush();
  }
  overwrite(p, 8 + 1 * 32 + 9, 'x');  // record 1's offset
  CHECK_THROWS_AS(stream::ack_journal(p), stream::journal_error);
  CHECK_THROWS_WITH(stream::ack_journal(p), Catch::Contains("record 1 is corrupt"));
  fs::remove(p);

  std::ofstream(p, std::ios::binary) << "NOTAJOURNAL-AT-ALL-----";
  CHECK_THROWS_WITH(stream::ack_journal(p), Catch::Contains("not an ack journal"));
  fs::remove(p);

  // Well-formed records whose offsets skip one: 0, then 2.
  std::vector<std::byte> bytes = {std::byte{'T'}, std::byte{'R'}, std::byte{'N'}, std::byte{'J'},
                                  std::byte{1},   std::byte{0},   std::byte{0},   std::byte{0}};
  for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{2}, std::uint64_t{3}}) {
    std::byte r[32];
    stream::detail::store_u32(r, 5);
    stream::detail::store_u32(r + 4, stream::detail::journal_record_magic);
    stream::detail::store_u64(r + 8, offset);
    stream::detail::store_u64(r + 16, 0);
    stream::detail::store_u64(r + 24, stream::detail::journal_check(5, offset, 0));
    bytes.insert(bytes.end(), r, r + 32);
  }
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  CHECK_THROWS_WITH(stream::ack_journal(p),
                    Catch::Contains("record 1 acknowledges producer 5 offset 2 where 1 was next"));
  fs::remove(p);
}

}  // namespace stream_ack_journal_test
