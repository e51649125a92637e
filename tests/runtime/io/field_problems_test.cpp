// trinity::field_problems: every refused field of a reading in one message, none lost.
#include <catch2/catch.hpp>

#include <trinity/field_problems.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/registry.hpp>

#include <array>
#include <string>
#include <utility>

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

TEST_CASE("a training workload's wrong values come in one message, by the file's keys", "[io]") {
  const auto j = io::parse(R"({"name": "t", "type": "training", "parameters": 7e9, "layers": 32, "hidden": 4096,
                                "sequence": "long", "batch": -1, "error_budget": "x"})",
                           "w.json");
  try {
    (void)workloads::read_workload(j, plan::presets::dgx_h100());
    FAIL("refused");
  } catch (const invalid_fields& e) {
    REQUIRE(e.problems().size() == 3);
    CHECK(e.problems()[0].field == "sequence");
    CHECK(e.problems()[1].field == "batch");
    CHECK(e.problems()[2].field == "error_budget");
  }
}

TEST_CASE("every kind's reader gives its wrong values in one message", "[io]") {
  // Each docs example with two of its values spoilt: both are named, in the order the file is read.
  const std::pair<const char*, std::array<const char*, 2>> spoilt[] = {
      {"doorbell-detector.json", {"frames_per_second", "error_budget"}},
      {"my-diffusion.json", {"steps", "error_budget"}},
      {"t2v-curation.json", {"cpu_workers", "model_efficiency"}},
      {"dlrm-three-tables.json", {"batch", "samples_per_second"}},
      {"wan22-t2v-hetero.json", {"encode_high", "encode_low"}},
  };
  for (const auto& [file, fields] : spoilt) {
    INFO(file);
    auto j = io::load(std::string(TRINITY_SOURCE_DIR) + "/docs/examples/" + file);
    for (const auto* f : fields) j[f] = "spoilt";
    try {
      (void)workloads::read_workload(j, plan::presets::dgx_h100());
      FAIL("refused");
    } catch (const invalid_fields& e) {
      REQUIRE(e.problems().size() == 2);
      CHECK(e.problems()[0].field == fields[0]);
      CHECK(e.problems()[1].field == fields[1]);
    }
  }
}

}  // namespace io_field_problems_test
