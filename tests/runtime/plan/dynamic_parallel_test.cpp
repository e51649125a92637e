// Dynamic parallelism: a layout per sequence-length bucket within one frame of weights, against the best
// single layout; checked against the layout search and the step model called directly.
#include <catch2/catch.hpp>

#include <trinity/workloads/registry.hpp>
#include <trinity/plan/dynamic_parallel.hpp>
#include <trinity/plan/parallel_planner.hpp>

#include <algorithm>
#include <fstream>
#include <string>

namespace plan_dynamic_parallel_test {

using namespace trinity;

namespace {

plan::training_workload video() {
  std::ifstream in(std::string(TRINITY_SOURCE_DIR) + "/docs/examples/video-dit-train.json");
  const auto s = plan::presets::dgx_h100();
  auto any = workloads::read_workload(nlohmann::json::parse(in), s);
  return any.as<plan::training_workload>();
}

}  // namespace

TEST_CASE(
    "dynamic parallelism: each bucket runs the fastest choice its frame allows, and the plan beats the best "
    "static layout",
    "[plan][parallel][dynamic]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = video();
  REQUIRE(w.sequence_mix.size() == 3);
  const auto r = plan::plan_dynamic(s, w, {.gpus = 64});
  REQUIRE(r.buckets.size() == 3);
  CHECK(r.buckets[0].sequences + r.buckets[1].sequences + r.buckets[2].sequences == 160);
  // The step is the buckets' own times plus the frame's reduction and update, once.
  seconds sum = r.shared;
  for (const auto& b : r.buckets) sum += b.time;
  CHECK(r.step.value() == Approx(sum.value()).epsilon(1e-12));
  // Every bucket keeps the frame's weights: same tp, pp, vpp, ZeRO, and the same ranks holding the weights.
  for (const auto& b : r.buckets) {
    CHECK(b.layout.tp == r.frame.tp);
    CHECK(b.layout.pp == r.frame.pp);
    CHECK(b.layout.zero_stage == r.frame.zero_stage);
    CHECK(b.layout.offload == r.frame.offload);
    CHECK(b.layout.codec == r.frame.codec);
    CHECK(b.layout.dp * b.layout.cp == r.frame.dp * r.frame.cp);
    CHECK(b.cost.device_bytes <= s.tiers[0].capacity);
  }
  // No choice within the frame runs a bucket faster (brute force over the step model).
  const auto c = plan::cluster_of(s, w);
  const auto job = plan::job_of(w, 64);
  const auto codecs = plan::default_codecs_for(s);
  for (const auto& b : r.buckets) {
    auto j = job;
    j.sequence = b.bucket.sequence;
    j.global_batch = b.sequences;
    model::parallel_layout l = r.frame;
    const std::size_t weights = r.frame.dp * r.frame.cp;
    for (l.cp = 1; l.cp <= weights; ++l.cp) {
      if (weights % l.cp) continue;
      l.dp = weights / l.cp;
      for (l.micro_batch = 1; l.micro_batch <= 8; l.micro_batch *= 2)
        for (const auto rc : {model::recomputation::none, model::recomputation::full})
          for (const bool sp : {false, true}) {
            l.recompute = rc;
            l.sequence_parallel = sp;
            if (model::check_layout(j, l)) continue;
            const auto x = plan::price(j, c, l, codecs);
            if (x.device_bytes > c.memory || x.offloaded > c.host_memory) continue;
            CHECK((x.step - x.dp_comm - x.codec - x.optimizer - x.offload).value() >= b.time.value() * (1 - 1e-12));
          }
    }
  }
  // The static layout is one of the dynamic plan's choices: never faster. Here the long clips need a
  // context ring of 4 to fit and the short ones are faster with 2.
  CHECK(r.static_step >= r.step);
  CHECK(r.gain() > 1.0);
  CHECK(r.buckets.front().layout.cp < r.buckets.back().layout.cp);
  CHECK(r.static_layout.cp == r.buckets.back().layout.cp);
}

TEST_CASE("dynamic parallelism with one bucket is the layout search's best, static and dynamic alike",
          "[plan][parallel][dynamic]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_7b();
  w.sequence_mix = {{"all", w.sequence, 1.0}};
  const auto r = plan::plan_dynamic(s, w, {.gpus = 16});
  CHECK(r.gain() == 1.0);
  CHECK(r.static_step == r.step);
  // The search prices ZeRO-3 too, which the dynamic planner leaves out: compare with the best of the rest, codecs
  // and offload included.
  const auto search = plan::plan_parallel(s, w, {.gpus = 16});
  double best = 1e300;
  for (const auto& e : search.candidates)
    if (e.fits() && e.plan.layout.zero_stage <= 2) best = std::min(best, e.cost.total.time.value());
  CHECK(r.step.value() == Approx(best).epsilon(1e-12));
  CHECK(r.frame.codec == search.chosen().plan.layout.codec);
  CHECK(r.frame.offload == search.chosen().plan.layout.offload);
}

TEST_CASE("dynamic parallelism prices the frame's codec and offload once a step, within the error budget",
          "[plan][parallel][dynamic]") {
  const auto s = plan::presets::dgx_h100();
  auto w = video();
  const auto r = plan::plan_dynamic(s, w, {.gpus = 64});
  // The shared part is the frame's reduction, coding, update and offload, from any bucket's cost.
  const auto& b = r.buckets.front().cost;
  CHECK(r.shared.value() ==
        Approx((b.dp_comm + b.codec + b.embedding_sync + b.optimizer + b.offload).value()).epsilon(1e-12));
  // With no room for a codec's error the frame reduces uncoded, and the plan is no faster than with one.
  w.error_budget = 0;
  const auto exact = plan::plan_dynamic(s, w, {.gpus = 64});
  CHECK(exact.frame.codec.empty());
  for (const auto& x : exact.buckets) CHECK(x.layout.codec.empty());
  CHECK(exact.step >= r.step);
  // Only the identity codec on offer: the same as an error budget of zero.
  auto only = plan::default_codecs_for(s);
  only.erase(std::remove_if(only.begin(), only.end(), [](const auto& k) { return !model::is_uncoded(k); }), only.end());
  w.error_budget = video().error_budget;
  const auto plain = plan::plan_dynamic(s, w, {.gpus = 64, .codecs = only});
  CHECK(plain.step.value() == Approx(exact.step.value()).epsilon(1e-12));
}

// Weights kept in fp8 alone need the distributed optimizer: every frame it tries shards at ZeRO-1 or more.
TEST_CASE("dynamic parallelism with fp8_params plans frames of ZeRO-1 or more", "[plan][parallel][dynamic]") {
  const auto s = plan::presets::dgx_h100();
  auto w = video();
  w.compute_precision = "fp8";
  w.fp8_params = true;
  const auto r = plan::plan_dynamic(s, w, {.gpus = 64});
  CHECK(r.frame.zero_stage >= 1);
  for (const auto& b : r.buckets) CHECK(b.layout.zero_stage >= 1);
}

TEST_CASE("dynamic parallelism refuses what it cannot plan, naming the field", "[plan][parallel][dynamic]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_7b();
  CHECK_THROWS_WITH(plan::plan_dynamic(s, w, {.gpus = 8}),
                    Catch::Contains("workload.sequence_mix") && Catch::Contains("Fix"));
  w.sequence_mix = {{"a", 4096, 0.3}, {"b", 2048, 0.7}};  // 0.3 of 1,024 is not whole
  CHECK_THROWS_WITH(plan::plan_dynamic(s, w, {.gpus = 8}), Catch::Contains("not a whole number"));
  const auto bad = [&](const char* mix) {
    auto j = nlohmann::json::parse(R"({"name": "x", "type": "training", "layers": 4, "hidden": 1024, "sequence": 1024,
        "heads": 8, "ffn_hidden": 4096, "vocabulary": 1000})");
    j["sequence_mix"] = nlohmann::json::parse(mix);
    try {
      workloads::read_workload(j, s);
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(bad(R"([{"sequence": 1024, "share": 0.5}])").find("sequence_mix: the shares add up to 0.5") == 0);
  CHECK(bad(R"([{"sequence": 1024, "share": 1, "lenght": 2}])").find("sequence_mix[0].lenght") == 0);
  CHECK(bad(R"([{"sequence": 1024, "share": 0}])").find("sequence_mix[0].share") == 0);
}

}  // namespace plan_dynamic_parallel_test
