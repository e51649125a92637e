// trinity::field_problems: every refused field of a reading in one message, none lost.
#include <catch2/catch.hpp>

#include <trinity/field_problems.hpp>

#include <string>

namespace io_field_problems_test {

using namespace trinity;

TEST_CASE("field_problems gathers every refusal, flattens gathered ones and loses none", "[io]") {
  int read = 0;
  try {
    field_problems each;
    each([&] { ++read; });
    each([&] { throw invalid_input("a", "bad"); });
    each([&] { ++read; });
    each([&] { fail_together({{"b", "worse"}, {"c", "worst"}}); });  // gathered elsewhere: kept as three, not nested
    CHECK_FALSE(each.empty());
    each.raise();
    FAIL("raise() returned with problems");
  } catch (const invalid_fields& e) {
    CHECK(read == 2);  // the reading went on past each refusal
    CHECK(std::string(e.what()) == "a: bad (and b: worse; c: worst)");
    REQUIRE(e.problems().size() == 3);
    CHECK(e.problems()[2].field == "c");
  }
  // Problems never raised are raised when the reading's scope ends: a default never silently stands.
  CHECK_THROWS_WITH(
      [] {
        field_problems each;
        each([] { throw invalid_input("d", "lost?"); });
      }(),
      "d: lost?");
  // Nothing refused: raise() returns.
  field_problems none;
  none([] {});
  CHECK_NOTHROW(none.raise());
  // A lone refusal reads as invalid_input always did.
  CHECK(problems_of(invalid_input("e", "one")).size() == 1);
}

}  // namespace io_field_problems_test
