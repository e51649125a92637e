// A value given is the value used (issue 78): a count written as an integral float is taken, a fraction or a
// negative refused with the range, 0 refused where it would read as "the default", a NUL byte refused where it
// stands, a control character in a name refused by position.
#include <catch2/catch.hpp>

#include <trinity/cache/trace.hpp>
#include <trinity/io/json_object.hpp>

#include <string>

namespace io_given_values_test {

using namespace trinity;
using io::json;

namespace {
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "(taken)";
}
constexpr io::key keys[] = {{"n"}};
io::object one(const json& j) { return io::object(j, "", keys, "a test object"); }
}  // namespace

TEST_CASE("a count takes 128, 128.0 and 1.28e2 alike and refuses a fraction, a sign or a string", "[io]") {
  for (const char* text : {R"({"n": 128})", R"({"n": 128.0})", R"({"n": 1.28e2})"}) {
    const json j = io::parse(text, "t.json");
    INFO(text);
    CHECK(one(j).count("n", 4096) == 128);
  }
  const auto refused = [](const char* text, std::uint64_t most = 4096, std::uint64_t least = 0) {
    const json j = io::parse(text, "t.json");
    return refusal([&] { (void)one(j).count("n", most, least); });
  };
  CHECK(refused(R"({"n": 127.5})") == "n: expected a whole number from 0 to 4096, not the number 127.5");
  CHECK(refused(R"({"n": -1})") == "n: expected a whole number from 0 to 4096, not the number -1");
  CHECK(refused(R"({"n": "128"})") == "n: expected a whole number from 0 to 4096, not the string \"128\"");
  CHECK(refused(R"({"n": 1000000000.0})") == "n: 1000000000.0 is out of range: expected a whole number from 0 to 4096");
  CHECK(refused(R"({"n": 5000})") == "n: 5000 is out of range: expected a whole number from 0 to 4096");
  CHECK(refused(R"({"n": 1e300})") == "n: 1e+300 is out of range: expected a whole number from 0 to 4096");
  // Where 0 would mean "the default", it is refused: the key left out is how a default is asked for.
  CHECK(refused(R"({"n": 0})", 4096, 1) ==
        "n: 0 is out of range: expected a whole number from 1 to 4096 (leave the key out for its default)");
  CHECK(refused(R"({"n": 0.0})", 4096, 1).find("from 1 to 4096") != std::string::npos);
}

TEST_CASE("a count kept as a double refuses a fraction, and a share refuses 0", "[io]") {
  const json whole = io::parse(R"({"n": 1e12})", "t.json");
  CHECK(one(whole).whole_number("n", 1, 1e13) == 1e12);
  const json half = io::parse(R"({"n": 1000.5})", "t.json");
  CHECK(refusal([&] { (void)one(half).whole_number("n", 1, 1e13); }) ==
        "n: expected a whole number (a count), not the number 1000.5");
  const json big = io::parse(R"({"n": 1e14})", "t.json");
  CHECK_THAT(refusal([&] { (void)one(big).whole_number("n", 1, 1e13); }),
             Catch::Contains("is out of range: expected a whole number from 1 to"));
  const json zero = io::parse(R"({"n": 0})", "t.json");
  CHECK_THAT(refusal([&] { (void)one(zero).positive_number("n", 1); }),
             Catch::Contains("n: the number 0 is out of range: expected a number above 0 and at most 1 (leave the key "
                             "out for its default)"));
  const json share = io::parse(R"({"n": 0.4})", "t.json");
  CHECK(one(share).positive_number("n", 1) == 0.4);
}

TEST_CASE("JSON text with a NUL byte is refused at its offset, not read up to it", "[io]") {
  const std::string text("{\"n\": 1}\0{\"evil\": 1}", 21);
  CHECK(refusal([&] { io::parse(text, "f.json"); }) ==
        "f.json: holds a NUL byte at offset 8; JSON is text. Fix: remove it (is this the right file?)");
  const std::string inside("{\"n\": \"a\0b\"}", 12);
  CHECK_THAT(refusal([&] { io::parse(inside, "f.json"); }), Catch::Contains("NUL byte at offset 8"));
}

TEST_CASE("a name holding a control character is refused by position, and printable text is kept", "[io]") {
  const json esc = io::parse(R"({"n": "box\u001b[31m"})", "t.json");
  CHECK(refusal([&] { (void)one(esc).text("n"); }) ==
        "n: holds a control character (0x1b) at 3; a name or a word is printable text. Fix: remove it");
  const json utf8 = io::parse(R"({"n": "Grace–Hopper ✓"})", "t.json");
  CHECK(one(utf8).text("n") == "Grace–Hopper ✓");
}

TEST_CASE("a NUL byte in a trace is refused where it stands, and one echoed back cuts no message short", "[io]") {
  using namespace std::string_literals;
  CHECK(refusal([] {
          (void)cache::parse_trace(
              "timestamp,row\n0.5,1\n2.\0"
              "9,1\n"s,
              4, "t.csv");
        }) == "t.csv: holds a NUL byte at offset 22; a trace is text. Fix: remove it (is this the right file?)");
  // what() is a C string: the byte is written as \x00, and what follows it is still there.
  const invalid_input e("cell"s,
                        "'2.\0"
                        "9' is not a number; give digits"s);
  CHECK(std::string(e.what()) == "cell: '2.\\x009' is not a number; give digits");
  CHECK(e.problem() == "'2.\\x009' is not a number; give digits");
  CHECK(invalid_input("a\0b"s, "c"s).field() == "a\\x00b");
}

}  // namespace io_given_values_test
