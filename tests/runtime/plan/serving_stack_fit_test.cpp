// A serving stack fitted to measured serving runs (plan/serving_stack_fit.hpp): runs made with known engine
// constants give them back; two runs pin two constants and name the rest; a stack sets only its constants; a stack
// file reads back to itself and refuses the other kind; bad measured runs are refused by path; the shipped example's
// figures are the published probe rows they cite.

#include <catch2/catch.hpp>

#include "../io/hostile_text.hpp"

#include <trinity/io/json_object.hpp>
#include <trinity/io/serving_runs.hpp>
#include <trinity/io/stack_file.hpp>
#include <trinity/plan/serving_stack_fit.hpp>
#include <trinity/presets.hpp>
#include <trinity/reports/serving_stack_validation.hpp>
#include <trinity/workloads/measured_serving_runs.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace plan_serving_stack_fit_test {

using namespace trinity;

namespace {

// A run of `model` on a DGX H100 at `configuration`, measured as an engine with `truth`'s constants would run it.
plan::measured_serving_run made_with(const plan::serving_stack& truth, const std::string& name,
                                     const std::string& model, const std::string& configuration, double prompt) {
  plan::measured_serving_run r;
  r.name = name;
  r.on = *plan::presets::find("dgx-h100");
  r.workload.name = model;
  r.workload.shape = model::find_named_shape(model)->shape;
  r.workload.prompt_tokens = prompt;
  r.workload.output_tokens = 128;
  r.workload.ttft_slo = seconds{1e9};
  r.workload.tpot_slo = seconds{1e9};
  r.workload.hit_rate = model::power_law{per_byte{1e-30}, 1.0};  // never read: no run has a prefix cache
  r.configuration = configuration;
  const auto p = plan::price_with(r, truth);
  r.tpot_s = p.tpot_s;
  return r;
}

plan::serving_stack stack_of(std::vector<std::pair<std::string, double>> constants) {
  plan::serving_stack s;
  s.name = "truth";
  s.constants = std::move(constants);
  return s;
}

std::string refusal(const std::string& text) {
  try {
    workloads::read_measured_serving_runs(io::parse(text, "m.json"));
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}

const std::string serving_workload =
    R"({"name": "w", "type": "llm-serve", "model": "llama2-7b", "prompt_tokens": 256, "output_tokens": 1})";

std::string run_with(const std::string& workload, const std::string& measured,
                     const std::string& parallelism = "tp=1,batch=1,weights=bf16,kv=bf16") {
  return R"({"runs": [{"name": "a", "system": "dgx-h100", "parallelism": ")" + parallelism + R"(", "workload": )" +
         workload + R"(, "measured": )" + measured + "}]}";
}

}  // namespace

TEST_CASE("serving runs made with known engine constants give them back", "[plan][fit]") {
  // An eager engine: 0.4 ms a layer and 85% of the HBM bandwidth. A batch-1 step weighs the overhead, a batch-128
  // step the bytes: the two runs tell the constants apart.
  const auto truth = stack_of({{"layer_overhead", 4e-4}, {"hbm_share", 0.85}});
  const std::vector runs{made_with(truth, "b1", "llama2-7b", "tp=1,batch=1,weights=bf16,kv=bf16", 256),
                         made_with(truth, "b128", "llama2-13b", "tp=1,batch=128,weights=bf16,kv=bf16", 2048)};
  const auto f = plan::fit_serving_stack(runs, "mine");
  const std::map<std::string, double> fitted(f.stack.constants.begin(), f.stack.constants.end());
  REQUIRE(fitted.size() == 2);
  CHECK(fitted.at("layer_overhead") == Approx(4e-4).epsilon(1e-3));
  CHECK(fitted.at("hbm_share") == Approx(0.85).epsilon(1e-3));
  CHECK(f.stack.not_pinned == std::vector<std::string>{"sequence_overhead", "kv_read_share", "prefill_layer_overhead",
                                                       "fused_attention_share", "fp8_gemm_share",
                                                       "all_reduce_latency"});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK(f.after[i].tpot_s == Approx(*runs[i].tpot_s).epsilon(1e-3));
    CHECK(f.before[i].tpot_s < *runs[i].tpot_s);  // the device's engine is leaner than the truth
  }
  CHECK(f.stack.fitted_on == std::vector<std::string>{"b1", "b128"});
  // Two TPOTs fitted: the published TPOT band's width, widened by sqrt(1 + 1/2), centred on the fit (near 0).
  const double published = plan::detail::serving_tpot_high - plan::detail::serving_tpot_low;
  CHECK(f.stack.tpot.high - f.stack.tpot.low == Approx(published * std::sqrt(1.5)).epsilon(1e-9));
  CHECK(std::abs(f.stack.tpot.high + f.stack.tpot.low) < 2e-3);
  CHECK(f.stack.tpot.runs == 2);
  CHECK_FALSE(f.stack.ttft.known());  // no run measured a TTFT: the published band stands
}

TEST_CASE("one serving run pins at most one constant", "[plan][fit]") {
  const auto truth = stack_of({{"layer_overhead", 4e-4}});
  std::vector runs{made_with(truth, "b1", "llama2-7b", "tp=1,batch=1,weights=bf16,kv=bf16", 256),
                   made_with(truth, "b1-13b", "llama2-13b", "tp=1,batch=1,weights=bf16,kv=bf16", 256)};
  runs[1].held_out = true;
  CHECK_THROWS_WITH(plan::fit_serving_stack(runs, "x"), Catch::Contains("at least 2 measured runs not held out"));
  runs[1].held_out = false;
  runs[1].on = *plan::presets::find("dgx-a100");
  CHECK_THROWS_WITH(plan::fit_serving_stack(runs, "x"), Catch::Contains("a stack is fitted on one kind of device"));
}

TEST_CASE("a serving stack sets its constants and leaves the rest the device's", "[plan][fit]") {
  const auto device = plan::presets::find("dgx-h100")->device.serving;
  const auto c = plan::with_stack(device, stack_of({{"layer_overhead", 1e-3}, {"kv_read_share", 0.5}}));
  CHECK(c.layer_overhead.value() == 1e-3);
  CHECK(c.kv_read_share == 0.5);
  auto expected = device;
  expected.layer_overhead = seconds{1e-3};
  expected.kv_read_share = 0.5;
  CHECK(c == expected);
  CHECK(plan::with_stack(device, plan::serving_stacks::tensorrt_llm()) == device);
  CHECK_THROWS_WITH(plan::validate(stack_of({{"layer_overhed", 1e-4}})),
                    Catch::Contains("constants.layer_overhed") && Catch::Contains("layer_overhead"));
  CHECK_THROWS_WITH(plan::validate(stack_of({{"hbm_share", 1.5}})), Catch::Contains("constants.hbm_share"));
}

TEST_CASE("a serving stack file reads back to itself and refuses the other kind", "[plan][fit]") {
  auto s = stack_of({{"layer_overhead", 2.5e-4}, {"hbm_share", 0.9}});
  s.source = "two runs";
  s.tpot = {-0.1, 0.12, 0.8, 2};
  s.fitted_on = {"a", "b"};
  s.not_pinned = {"kv_read_share"};
  const auto back = io::read_serving_stack(io::parse(io::write_serving_stack(s).dump(), "s.json"));
  CHECK(back.name == s.name);
  CHECK(std::map<std::string, double>(back.constants.begin(), back.constants.end()) ==
        std::map<std::string, double>(s.constants.begin(), s.constants.end()));
  CHECK(back.tpot == s.tpot);
  CHECK_FALSE(back.ttft.known());
  CHECK(back.fitted_on == s.fitted_on);
  CHECK(back.not_pinned == s.not_pinned);
  // Quantities with units, as a user writes them by hand.
  const auto by_hand = io::read_serving_stack(io::parse(
      R"({"trinity_stack": 1, "kind": "serving", "name": "h", "constants": {"layer_overhead": "0.3ms"}})", "h.json"));
  CHECK(by_hand.constants.at(0).second == Approx(3e-4).epsilon(1e-12));
  const auto refused = [](const std::string& text, bool serving) {
    try {
      if (serving)
        (void)io::read_serving_stack(io::parse(text, "s.json"));
      else
        (void)io::read_stack(io::parse(text, "s.json"));
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused(io::write_serving_stack(s).dump(), false), Catch::Contains("kind: is \"serving\""));
  CHECK_THAT(refused(R"({"trinity_stack": 1, "name": "t", "constants": {}})", true),
             Catch::Contains("kind: is \"training\""));
  CHECK_THAT(
      refused(R"({"trinity_stack": 1, "kind": "serving", "name": "t", "constants": {"hbm_share": "fast"}})", true),
      Catch::Contains("constants.hbm_share"));
  CHECK_THAT(refused(R"({"trinity_stack": 1, "kind": "inference", "name": "t", "constants": {}})", true),
             Catch::Contains("kind") && Catch::Contains("serving"));
}

TEST_CASE("a mutated serving stack file reads to a stack or a refusal by field", "[plan][fit][hostile]") {
  const std::string valid = io::write_serving_stack(stack_of({{"layer_overhead", 2.5e-4}, {"hbm_share", 0.9}})).dump();
  std::mt19937 rng(7);
  for (int i = 0; i < 600; ++i) {
    const auto text = test::mutated(valid, rng, 1 + i % 4);
    try {
      const auto s = io::read_serving_stack(io::parse(text, "s.json"));
      CHECK_NOTHROW(plan::validate(s));
    } catch (const invalid_input& e) {
      CHECK_FALSE(e.field().empty());
    }
  }
}

TEST_CASE("measured serving runs are refused by path", "[plan][fit]") {
  CHECK(refusal(run_with(serving_workload, R"({"tpot_s": 0.006})")).empty());
  CHECK_THAT(refusal(run_with(serving_workload, R"({})")), Catch::Contains("runs[0].measured"));
  CHECK_THAT(refusal(run_with(serving_workload, R"({"tpot": 0.006})")), Catch::Contains("runs[0].measured.tpot"));
  CHECK_THAT(refusal(run_with(serving_workload, R"({"tpot_s": -1})")), Catch::Contains("runs[0].measured.tpot_s"));
  CHECK_THAT(refusal(run_with(R"({"name": "w", "type": "llm-serve", "model": "llama2-7b", "prompt_tokens": 256,
                                  "output_tokens": 1, "stack": "tensorrt-llm"})",
                              R"({"tpot_s": 0.006})")),
             Catch::Contains("runs[0].workload.stack"));
  CHECK_THAT(refusal(run_with(R"({"name": "w", "type": "llm-serve", "model": "llama2-7x", "prompt_tokens": 256,
                                  "output_tokens": 1})",
                              R"({"tpot_s": 0.006})")),
             Catch::Contains("runs[0].workload.model"));
  CHECK_THAT(refusal(run_with(serving_workload, R"({"tpot_s": 0.006})", "tp=3,batch=1")),
             Catch::Contains("runs[0]") && Catch::Contains("cannot be priced"));
  CHECK_THAT(refusal(run_with(serving_workload, R"({"tpot_s": 0.006})",
                              "tp=1,batch=1,weights=bf16,kv=bf16,prefix=host-ddr5:10GB")),
             Catch::Contains("runs[0].workload.hit_rate"));
  // A training run in a file of serving runs: one kind a file.
  const auto mixed = R"({"runs": [{"name": "a", "system": "dgx-h100", "parallelism": "tp=1,batch=1",
      "workload": )" +
                     serving_workload + R"(, "measured": {"tpot_s": 0.006}},
      {"name": "b", "system": "dgx-h100", "parallelism": "dp=8",
      "workload": {"name": "t", "model": "llama2-7b", "sequence": 4096, "global_batch": 64},
      "measured": {"step_time_s": 10}}]})";
  CHECK_THAT(refusal(mixed), Catch::Contains("runs[1].workload") && Catch::Contains("one kind"));
  CHECK(workloads::holds_serving_runs(io::parse(mixed, "m.json")));
}

TEST_CASE("the shipped serving runs are the published probe rows they cite", "[plan][fit]") {
  const auto published = io::read_serving_runs(io::load(TRINITY_SOURCE_DIR "/bench/published/serving-runs.json"));
  const auto example = io::load(TRINITY_SOURCE_DIR "/docs/examples/measured-serving.json");
  const auto runs = workloads::read_measured_serving_runs(example);
  REQUIRE(runs.size() == example.at("runs").size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string source = example.at("runs")[i].at("source");
    const auto row = std::find_if(published.runs.begin(), published.runs.end(),
                                  [&](const io::serving_run& r) { return source.ends_with(", run " + r.name); });
    REQUIRE(row != published.runs.end());
    CHECK(row->system == "dgx-h100");
    CHECK(runs[i].configuration == row->configuration());
    CHECK(runs[i].workload.prompt_tokens == row->prompt_tokens);
    const auto measured = row->metric == "tpot_s" ? runs[i].tpot_s : runs[i].ttft_s;
    REQUIRE(measured);
    CHECK(*measured == row->value);
  }
  // Fitted on its two 7B runs, the stack brings the held-out 13B figures closer than the device's engine does.
  const auto f = plan::fit_serving_stack(runs, "probe-h100");
  double before = 0, after = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].held_out) continue;
    const double m = runs[i].tpot_s ? *runs[i].tpot_s : *runs[i].ttft_s;
    before += std::abs((runs[i].tpot_s ? f.before[i].tpot_s : f.before[i].ttft_s) / m - 1);
    after += std::abs((runs[i].tpot_s ? f.after[i].tpot_s : f.after[i].ttft_s) / m - 1);
  }
  CHECK(after < before);
}

TEST_CASE("validate fits two runs of each engine the presets were not fitted on, by rule", "[plan][fit]") {
  const auto file = io::read_serving_runs(io::load(TRINITY_SOURCE_DIR "/bench/published/serving-runs.json"));
  const auto fits = reports::judge_two_run_fits(file);
  // The probe's engine on each device it ran on; tensorrt-llm, the presets' own, is never refitted.
  REQUIRE(fits.size() == 2);
  for (const auto& f : fits) {
    CHECK(f.family == "torch-cuda-graphs");
    std::size_t held = 0;
    const io::serving_run* first = nullptr;
    for (const auto& r : file.runs)
      if (r.engine_family == f.family && r.system == f.system) {
        held += r.role == "held-out";
        if (!first && r.role == "fit") first = &r;
      }
    CHECK(f.held_out == held);
    REQUIRE(f.stack.fitted_on.size() == 2);
    CHECK(f.stack.fitted_on[0] == first->name);  // the group's first run marked fit, and its largest batch
    CHECK(f.stack.constants.size() <= 2);
    CHECK(f.with < f.without);  // two runs of the engine's own bring its held-out runs closer
  }
  CHECK(fits[0].system == "dgx-h100");
  CHECK(fits[1].system == "dgx-h200");
}

}  // namespace plan_serving_stack_fit_test
