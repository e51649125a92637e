#include <catch2/catch.hpp>

#include <trinity/units.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <string>

namespace units_quantity_test {

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("a transfer time is bytes over bandwidth", "[units]") {
  const seconds t = 100_GB / 400_Gbps;
  CHECK(t.value() == Approx(2.0));
  CHECK((1_GiB / 64_GBps).value() == Approx(1073741824.0 / 64e9));
  CHECK((2_s * 50_GBps) == 100_GB);
}

TEST_CASE("compound assignment and scaling keep the dimension", "[units]") {
  bytes b = 1_GB;
  b += 500_MB;
  b -= 250_MB;
  b *= 4.0;
  b /= 5.0;
  CHECK(b.value() == Approx(1.0e9));
  CHECK((-b).value() == Approx(-1.0e9));
  CHECK((3 * 2_ns) == 6_ns);
}

TEST_CASE("quantities print with a readable prefix", "[units][format]") {
  CHECK(to_string(200_GB) == "200 GB");
  CHECK(to_string(150_ns) == "150 ns");
  CHECK(to_string(2.5_us) == "2.5 us");
  CHECK(to_string(1.2e10_FLOP) == "12 GFLOP");
  CHECK(to_string(64_GBps) == "64 GB/s");
  CHECK(to_string(400_Gbps) == "50 GB/s");
  CHECK(to_string(2.5_TFLOPs) == "2.5 TFLOP/s");
  CHECK(to_string(700_W) == "700 W");
  CHECK(to_string(3.5_kJ) == "3.5 kJ");
  CHECK(to_string(0.075_bpp) == "0.075 bpp");
  CHECK(to_string(0_B) == "0 B");
  CHECK(to_string(512_B) == "512 B");
  CHECK(to_string(8_pJ_per_bit) == "64 pJ/B");
  CHECK(to_string_iec(1_GiB) == "1 GiB");
  CHECK(to_string_iec(1536_MiB) == "1.5 GiB");
  // Rounding up into the next prefix prints the next prefix.
  CHECK(to_string(bytes{999.99999e9}) == "1 TB");
  std::ostringstream os;
  os << 1_ms;
  CHECK(os.str() == "1 ms");
}

TEST_CASE("text parses into quantities with their units", "[units][parse]") {
  CHECK(parse<bytes>("2GB", "entry_size") == 2_GB);
  CHECK(parse<bytes>(" 10 GiB", "capacity") == 10_GiB);
  CHECK(parse<bytes>("1.5e3MB", "x") == 1.5_GB);
  CHECK(parse<bytes_per_second>("400Gbps", "link") == 50_GBps);
  CHECK(parse<bytes_per_second>("64GB/s", "link") == 64_GBps);
  CHECK(parse<seconds>("150ns", "latency") == 150_ns);
  CHECK(parse<flops>("1e9", "step_flops") == 1e9_FLOP);
  CHECK(parse<flops>("2 TFLOP", "step_flops") == 2_TFLOP);
  CHECK(parse<flops_per_second>("2.5PFLOPs", "peak") == flops_per_second{2.5e15});
  CHECK(parse<joules_per_byte>("5pJ/bit", "energy") == 5_pJ_per_bit);
  CHECK(parse<bits_per_pixel>("0.15", "bandwidth") == 0.15_bpp);
}

TEST_CASE("bad text is refused with the field, the value and the units accepted", "[units][parse]") {
  try {
    (void)parse<bytes>("2GX", "entry_size");
    FAIL("2GX parsed");
  } catch (const invalid_input& e) {
    CHECK(e.field() == "entry_size");
    CHECK_THAT(e.what(), Catch::Contains("unknown unit 'GX' in '2GX'") && Catch::Contains("GiB"));
  }
  try {
    (void)parse<bytes>("10", "capacity");
    FAIL("a size without unit parsed");
  } catch (const invalid_input& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("capacity: '10' has no unit"));
  }
  CHECK_THROWS_AS(parse<seconds>("fast", "latency"), invalid_input);
  CHECK_THROWS_AS(parse<seconds>("nan s", "latency"), invalid_input);
  CHECK_THROWS_AS(parse<bytes>("", "capacity"), invalid_input);
  CHECK_THROWS_WITH(parse<bytes>("1e300PB", "capacity"), "capacity: '1e300PB' is too large");
  CHECK_THROWS_WITH(parse<flops>("1e308e", "work"), Catch::StartsWith("work: unknown unit 'e'"));
}

TEST_CASE("seconds convert to and from std::chrono without loss", "[units][chrono]") {
  using namespace std::chrono_literals;
  CHECK(from_chrono(1500ms) == 1.5_s);
  CHECK(from_chrono(250ns).value() == Approx(250e-9).epsilon(1e-15));
  CHECK(to_chrono(2_ms).count() == Approx(2e-3));
  CHECK(std::chrono::duration_cast<std::chrono::microseconds>(to_chrono(1.5_ms)).count() == 1500);
}

TEST_CASE("the parser treats every byte as hostile: it returns a finite value or says why", "[units][parse][hostile]") {
  // Random strings over an alphabet that reaches every branch: digits, signs,
  // exponents, spaces, every unit letter, slashes, and bytes outside ASCII.
  const std::string alphabet = "0123456789+-.eE /sBkKMGTPiFLOPpnumhbWJxX\xff\x80\t";
  std::mt19937 rng(20261121);
  std::uniform_int_distribution<std::size_t> length(0, 12), pick(0, alphabet.size() - 1);
  std::size_t parsed = 0, refused = 0;
  for (int i = 0; i < 100000; ++i) {
    std::string s(length(rng), ' ');
    for (char& c : s) c = alphabet[pick(rng)];
    try {
      const bytes b = parse<bytes>(s, "size");
      CHECK(std::isfinite(b.value()));
      ++parsed;
    } catch (const invalid_input& e) {
      CHECK(e.field() == "size");
      ++refused;
    }
    try {
      (void)parse<bytes_per_second>(s, "rate");
      (void)parse<flops>(s, "work");
    } catch (const invalid_input&) {
    }
  }
  // Both outcomes occur, so the test explores more than one branch.
  CHECK(parsed > 0);
  CHECK(refused > 0);
}

}  // namespace units_quantity_test
