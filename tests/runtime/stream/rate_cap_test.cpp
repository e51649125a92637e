// The token bucket that stands for one sending thread's limit, on a clock of the test's own.
#include <catch2/catch.hpp>

#include <trinity/stream/rate_cap.hpp>

namespace stream_rate_cap_test {

using namespace trinity;
using clock_type = stream::rate_cap::clock;

TEST_CASE("a rate cap lets through at most burst + rate * t + one message, and reaches its rate", "[stream]") {
  const double rate = 1e6, burst = 20000;
  const clock_type::time_point t0{};
  stream::rate_cap cap(bytes_per_second(rate), bytes(burst), t0);
  REQUIRE(cap.capped());
  auto now = t0;
  double sent = 0;
  const std::size_t message = 30000;  // larger than the burst: it still goes, and the bucket goes into debt
  while (now - t0 < std::chrono::seconds(2)) {
    const auto wait = cap.wait(now);
    if (wait == clock_type::duration::zero()) {
      cap.take(message, now);
      sent += message;
      const double t = std::chrono::duration<double>(now - t0).count();
      REQUIRE(sent <= burst + rate * t + message);
    } else {
      now += wait;  // a sender that sleeps exactly as long as it is told
    }
  }
  const double t = std::chrono::duration<double>(now - t0).count();
  CHECK(sent / t == Approx(rate).epsilon(0.03));
}

TEST_CASE("an uncapped rate never waits, a bad rate is refused naming the field", "[stream]") {
  stream::rate_cap none;
  CHECK_FALSE(none.capped());
  none.take(1 << 30, clock_type::now());
  CHECK(none.wait(clock_type::now()) == clock_type::duration::zero());
  CHECK_THROWS_WITH(stream::rate_cap(bytes_per_second(-1), bytes(1)), Catch::Contains("stream_cap"));
}

}  // namespace stream_rate_cap_test
