// Pipeline schedules as registered types (model/pipeline_schedule.hpp): each one's passes, its two counts for the
// step model (in flight, bubble) against the closed forms and against walking its own passes, its name read and
// written by the layout's spelling, an unknown name refused by field wherever it is given, and every rank's passes
// merged and run by parallel::run_pipeline.
#include <catch2/catch.hpp>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/model/pipeline_schedule.hpp>
#include <trinity/parallel/pipeline_schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "test_cluster.hpp"

namespace model_pipeline_schedule_test {

using namespace trinity;
using namespace trinity::model;

// Rank 0's most chunks kept at once, walking its passes: a forward keeps one, a backward frees one.
std::size_t peak_chunks(std::string_view schedule, std::size_t p, std::size_t m, std::size_t v) {
  std::size_t now = 0, peak = 0;
  for (const auto& x : schedule_passes(schedule, p, 0, m, v)) peak = std::max(peak, x.forward ? ++now : now--);
  return peak;
}

TEST_CASE("pipeline schedules: 1F1B is the default, its counts the closed forms and its own passes'",
          "[model][pipeline]") {
  CHECK(schedule_passes("", 4, 1, 8, 2) == interleaved(4, 1, 8, 2));
  CHECK(schedule_passes("1f1b", 3, 0, 5, 1) == one_f_one_b(3, 0, 5));
  for (std::size_t p = 2; p <= 5; ++p)
    for (std::size_t m = p; m <= 3 * p; m += p) {
      CHECK(pipeline_in_flight("1f1b", p, m, 1) == static_cast<double>(std::min(p, m)));
      CHECK(pipeline_bubble("", p, m, 2) == Approx(static_cast<double>(p - 1) / static_cast<double>(2 * m)));
      // The model's count is what rank 0's passes keep, in micro-batches of v chunks.
      for (const std::size_t v : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
        INFO("p " << p << ", m " << m << ", v " << v);
        CHECK(pipeline_in_flight("1f1b", p, m, v) * static_cast<double>(v) ==
              Approx(static_cast<double>(peak_chunks("1f1b", p, m, v))));
      }
    }
}

TEST_CASE("pipeline schedules: GPipe runs every forward, then every backward, and keeps every micro-batch",
          "[model][pipeline]") {
  CHECK(schedule_passes("gpipe", 2, 1, 3, 1) ==
        std::vector<pipeline_pass>{
            {true, 0, 0}, {true, 0, 1}, {true, 0, 2}, {false, 0, 0}, {false, 0, 1}, {false, 0, 2}});
  for (std::size_t p = 2; p <= 5; ++p)
    for (std::size_t m = 1; m <= 3 * p; ++m) {
      INFO("p " << p << ", m " << m);
      CHECK(pipeline_in_flight("gpipe", p, m, 1) == static_cast<double>(peak_chunks("gpipe", p, m, 1)));
      CHECK(pipeline_in_flight("gpipe", p, m, 1) == static_cast<double>(m));
      CHECK(pipeline_bubble("gpipe", p, m, 1) == pipeline_bubble("1f1b", p, m, 1));
    }
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,schedule=zb"), Catch::Contains("use one of 1f1b, gpipe"));
}

TEST_CASE("pipeline schedules: GPipe is priced as 1F1B's time with every micro-batch's activations kept",
          "[model][pipeline]") {
  training_job j;
  j.shape = {16, 2048, 8192, 16, 16, 51200, false, false};
  j.sequence = 2048;
  j.global_batch = 32;
  const auto c = test::h100_like();
  const auto one_f = io::parse_parallel_layout("pp=4,dp=2"), g = io::parse_parallel_layout("pp=4,dp=2,schedule=gpipe");
  const auto a = price(j, c, one_f), b = price(j, c, g);
  CHECK(b.step.value() == a.step.value());
  CHECK(b.bubble.value() == a.bubble.value());
  // 16 micro-batches a replica: the first stage, the fuller one either way, keeps 16 where 1F1B keeps 4.
  CHECK(b.activations.value() == Approx(4.0 * a.activations.value()).epsilon(1e-12));
  CHECK(b.parameters.value() == a.parameters.value());
  CHECK(b.optimizer_states.value() == a.optimizer_states.value());
  const auto broken = check_layout(j, io::parse_parallel_layout("pp=4,vpp=2,dp=2,schedule=gpipe"));
  REQUIRE(broken);
  CHECK(broken->field == "schedule");
  CHECK(broken->message() ==
        "schedule: gpipe runs one chunk a stage, and vpp=2 gives each 2; give vpp=1, or schedule=1f1b for the "
        "interleaved schedule");
}

TEST_CASE("pipeline schedules: a name no schedule has is refused by field, listing those there are",
          "[model][pipeline]") {
  CHECK(known_schedule("1f1b"));
  CHECK(known_schedule(""));
  CHECK_FALSE(known_schedule("zb-h1"));
  CHECK_THROWS_WITH(schedule_passes("zb-h1", 2, 0, 2, 1), Catch::Contains("schedule") &&
                                                              Catch::Contains("\"zb-h1\" is no pipeline schedule") &&
                                                              Catch::Contains("1f1b"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,schedule=zb-h1"),
                    Catch::Contains("schedule=zb-h1: use one of 1f1b"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,schedule="), Catch::Contains("schedule=: use one of"));
  parallel_layout l;
  l.pp = 2;
  l.schedule = "zb-h1";
  const auto broken = check_schedule(l);
  REQUIRE(broken);
  CHECK(broken->field == "schedule");
  CHECK(broken->value == "zb-h1");
  CHECK(broken->fix.find("1f1b") != std::string::npos);
}

TEST_CASE("pipeline schedules: a named schedule is written back as given, the default not at all",
          "[model][pipeline]") {
  CHECK(to_string(io::parse_parallel_layout("pp=2,dp=2")).find("schedule") == std::string::npos);
  const auto named = io::parse_parallel_layout("pp=2,dp=2,schedule=1f1b");
  CHECK(named.schedule == "1f1b");
  CHECK(to_string(named) == "tp=1,pp=2,vpp=1,cp=1,dp=2,mbs=1,recompute=none,sp=off,zero=0,schedule=1f1b");
  CHECK(io::parse_parallel_layout(to_string(named)) == named);
}

TEST_CASE("pipeline schedules: a pipeline that names none is said to assume the default, by name",
          "[model][pipeline]") {
  const auto has = [](const plan::assumptions& a, const plan::assumption& x) {
    return std::find(a.begin(), a.end(), x) != a.end();
  };
  const auto pipelined = io::parallel_layout_defaults("pp=2,dp=2", io::parse_parallel_layout("pp=2,dp=2"));
  CHECK(has(pipelined, {"schedule", "\"1f1b\""}));
  const auto named =
      io::parallel_layout_defaults("pp=2,schedule=gpipe", io::parse_parallel_layout("pp=2,schedule=gpipe"));
  CHECK_FALSE(std::any_of(named.begin(), named.end(), [](const auto& x) { return x.field == "schedule"; }));
  const auto flat = io::parallel_layout_defaults("tp=2", io::parse_parallel_layout("tp=2"));
  CHECK_FALSE(std::any_of(flat.begin(), flat.end(), [](const auto& x) { return x.field == "schedule"; }));
}

TEST_CASE("pipeline schedules: every schedule's passes merge into one order that runs them all", "[model][pipeline]") {
  std::apply(
      [](auto... s) {
        (
            [&] {
              for (std::size_t p = 1; p <= 4; ++p)
                for (std::size_t m = p; m <= 2 * p; m += p) {
                  const auto order = parallel::global_order(decltype(s)::name, p, m, 1);
                  CHECK(order.size() == 2 * p * m);
                  for (std::size_t r = 0; r < p; ++r) {
                    std::vector<pipeline_pass> mine;
                    for (const auto& x : order)
                      if (x.rank == r) mine.push_back(x.pass);
                    CHECK(mine == schedule_passes(decltype(s)::name, p, r, m, 1));
                  }
                }
            }(),
            ...);
      },
      pipeline_schedules{});
}

}  // namespace model_pipeline_schedule_test
