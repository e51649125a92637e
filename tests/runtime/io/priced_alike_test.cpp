#include <catch2/catch.hpp>

#include <trinity/io/json_object.hpp>
#include <trinity/io/priced_alike.hpp>

#include <string>
#include <vector>

namespace io_priced_alike_test {

using namespace trinity;

TEST_CASE("one prediction for steps measured apart misses by at least their spread", "[io]") {
  // 10 s and 30 s: 15 s (the harmonic mean) is 50% over the one and 50% under the other.
  CHECK(io::least_worst_error(10, 30) == Approx(0.5));
  CHECK(std::abs(15.0 / 10 - 1) == Approx(io::least_worst_error(10, 30)));
  CHECK(std::abs(15.0 / 30 - 1) == Approx(io::least_worst_error(10, 30)));
  CHECK(io::least_worst_error(7, 7) == 0);
  // The mean: 10 s predicted is exact on the first and 2/3 under the second; 30 s would be 200% over the first.
  const std::vector<double> two{10, 30}, three{10, 20, 30};
  CHECK(io::least_mean_error(two) == Approx(1.0 / 3));
  // Three: at 20 s, 100% + 0 + 1/3 over three; at 10 s, 0 + 1/2 + 2/3; at 30 s, 2 + 1/2 + 0.
  CHECK(io::least_mean_error(three) == Approx((0.5 + 2.0 / 3) / 3));
  // No prediction on a fine grid does better than either floor.
  double worst = 1e9, mean = 1e9;
  for (double p = 5; p <= 40; p += 0.001) {
    double w = 0, m = 0;
    for (const double x : three) w = std::max(w, std::abs(p / x - 1)), m += std::abs(p / x - 1) / 3;
    worst = std::min(worst, w), mean = std::min(mean, m);
  }
  CHECK(worst >= io::least_worst_error(10, 30) - 1e-12);
  CHECK(worst == Approx(io::least_worst_error(10, 30)).epsilon(1e-4));
  CHECK(mean >= io::least_mean_error(three) - 1e-12);
}

TEST_CASE("runs the step model prices alike are grouped, and only those measured apart are named", "[io]") {
  // Four runs: "a" and "b" differ only in what the model does not read (the published step, the name); "c" is
  // priced as they are but measured as "a" was; "d" has another layout.
  const auto run = [](const std::string& name, const std::string& layout, double step) {
    return R"({"name": ")" + name + R"(", "source": "s", "role": "held-out", "system": "dgx-h100", "gpus": 8,
        "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16, "kv_heads": 16,
        "vocabulary": 50304, "gated_mlp": false}, "sequence": 2048, "global_batch": 64, "parallelism": ")" +
           layout + R"(", "published": {"iteration_s": )" + std::to_string(step) + "}}";
  };
  const std::string dp8 = "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off";
  const auto file =
      io::read_published_runs(io::parse(R"({"sources": {"s": "a source"}, "runs": [)" + run("a", dp8, 1.0) + "," +
                                            run("d", "tp=2,pp=1,cp=1,dp=4,mbs=1,recompute=none,sp=off", 1.0) + "," +
                                            run("b", dp8, 1.5) + "," + run("c", dp8, 1.0) + "]}",
                                        "runs.json"));
  io::parallel_calibration cal;
  cal.h100.model = {0.8, 500};
  cal.elementwise_traffic = 1.5;
  const auto rows = io::price_runs(file, cal);
  const auto alike = io::priced_alike(rows);
  REQUIRE(alike.size() == 1);
  REQUIRE(alike[0].runs.size() == 3);
  CHECK(alike[0].runs[0]->run->name == "a");
  CHECK(alike[0].runs[1]->run->name == "b");
  CHECK(alike[0].runs[2]->run->name == "c");
  CHECK(alike[0].least_worst_error == Approx(0.2));  // (1.5 − 1)/(1.5 + 1)
  // At 1 s: 0, 1/3 under b, 0; at 1.5 s: 50% over a and c.
  CHECK(alike[0].least_mean_error == Approx(1.0 / 9));
  // Measured alike too: nothing to name.
  const auto same = io::read_published_runs(
      io::parse(R"({"sources": {"s": "a source"}, "runs": [)" + run("a", dp8, 1.0) + "," + run("b", dp8, 1.0) + "]}",
                "runs.json"));
  CHECK(io::priced_alike(io::price_runs(same, cal)).empty());
}

}  // namespace io_priced_alike_test
