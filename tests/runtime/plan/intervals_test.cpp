// The intervals every training and serving plan prints: their bands are those of the held-out published runs
// (the generated constants agree with the run files), a prediction lies inside its own interval, and a device whose
// curves were borrowed gets a wider one.

#include <catch2/catch.hpp>

#include <trinity/io/parallel_calibration.hpp>
#include <trinity/io/serving_bands.hpp>
#include <trinity/io/transformer_probe.hpp>
#include <trinity/plan/serving_interval.hpp>
#include <trinity/plan/training_stack.hpp>
#include <trinity/workloads/registry.hpp>

#include <cmath>
#include <sstream>
#include <string>

namespace plan_intervals_test {

using namespace trinity;

namespace {
const std::string root = TRINITY_SOURCE_DIR;
}  // namespace

TEST_CASE("the megatron-core band is that of the held-out training runs, as the files give them today",
          "[plan][interval][published]") {
  const auto runs = io::read_published_runs(io::load(root + "/bench/published/training-runs.json"));
  const auto probe = io::read_transformer_probe(io::load(root + "/bench/results/transformer-probe-h100.json"));
  const auto rows = io::price_runs(runs, io::calibrate(probe, runs));
  const auto band = io::held_out_band(rows, plan::detail::held_out_coverage);
  const auto built_in = plan::stacks::megatron_core().step_time;
  CHECK(band.low == Approx(built_in.low).epsilon(1e-12));
  CHECK(band.high == Approx(built_in.high).epsilon(1e-12));
  CHECK(band.runs == built_in.runs);
  CHECK(band.low < 0);
  CHECK(band.high > 0);
  // Each run judged by the others' band: near the coverage asked for, neither all nor few.
  const auto check = io::check_intervals(rows, plan::detail::held_out_coverage);
  CHECK(check.runs == built_in.runs);
  CHECK(static_cast<double>(check.inside) / static_cast<double>(check.runs) > 0.6);
  CHECK(check.inside < check.runs);
}

TEST_CASE("the serving bands are those of the held-out serving runs", "[plan][interval][published]") {
  const auto file = io::read_serving_runs(io::load(root + "/bench/published/serving-runs.json"));
  const auto b = io::held_out_serving_bands(file, plan::detail::held_out_coverage);
  CHECK(b.ttft.low == Approx(plan::detail::serving_ttft_low).epsilon(1e-12));
  CHECK(b.ttft.high == Approx(plan::detail::serving_ttft_high).epsilon(1e-12));
  CHECK(b.tpot.runs == plan::detail::serving_tpot_runs);
  CHECK(b.throughput.high == Approx(plan::detail::serving_throughput_high).epsilon(1e-12));
  CHECK(b.ttft.runs + b.tpot.runs + b.throughput.runs > 0);
}

TEST_CASE("a serving plan's interval brackets its prediction, wider on a device whose constants are borrowed",
          "[plan][interval]") {
  const auto h100 = *plan::presets::find("dgx-h100");
  const auto i = plan::serving_intervals_of(h100, plan::serving_stacks::tensorrt_llm(), 0.2, 0.02, 1000);
  CHECK(i.unmeasured == 0);
  if (i.ttft) {
    CHECK(i.ttft->low == Approx(0.2 * std::exp(plan::detail::serving_ttft_low)));
    CHECK(i.ttft->high == Approx(0.2 * std::exp(plan::detail::serving_ttft_high)));
  }
  auto borrowed = h100;
  borrowed.device.unmeasured = {"serving"};
  const auto wide = plan::serving_intervals_of(borrowed, plan::serving_stacks::tensorrt_llm(), 0.2, 0.02, 1000);
  CHECK(wide.unmeasured == 1);
  if (i.tpot) CHECK(wide.tpot->high == Approx(i.tpot->high * 1.1));

  // The plan's JSON carries it under the choice's figures.
  auto w = workloads::find_preset("llama3-70b-serve", h100);
  REQUIRE(w);
  workloads::request a;
  a.json = true;
  std::ostringstream out;
  workloads::plan(a, h100, *w, out);
  const auto j = nlohmann::json::parse(out.str());
  const auto& interval = j.at("predicted").at("interval");
  CHECK(interval.at("coverage") == plan::detail::held_out_coverage);
  if (!interval.at("ttft_s").is_null()) {
    const double ttft = j.at("predicted").at("ttft_s");
    CHECK(interval.at("ttft_s")[0].get<double>() <= ttft * std::exp(std::max(0.0, plan::detail::serving_ttft_low)));
    CHECK(interval.at("ttft_s")[1].get<double>() >= ttft * std::exp(std::min(0.0, plan::detail::serving_ttft_high)));
  }
}

}  // namespace plan_intervals_test
