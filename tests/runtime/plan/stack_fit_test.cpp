// A training stack fitted to measured runs (plan/stack_fit.hpp): runs made with known constants give them back;
// runs that cannot tell two constants apart leave one unpinned and say so; held-out runs judge and never shape;
// a stack file reads back to itself; an interval is the band's exact bounds; bad measured runs are refused by path.

#include <catch2/catch.hpp>

#include "../io/hostile_text.hpp"

#include <trinity/io/json_object.hpp>
#include <trinity/io/stack_file.hpp>
#include <trinity/plan/stack_fit.hpp>
#include <trinity/workloads/measured_runs.hpp>
#include <trinity/workloads/training_interval.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace plan_stack_fit_test {

using namespace trinity;

namespace {

// A Llama 2 7B run on a DGX H100 under `layout`, `sequence` tokens a sequence, measured as a stack with constants
// `k` would run it: what the fit is to give back.
plan::measured_training_run made_with(const model::stack_constants& k, const std::string& name, std::size_t sequence,
                                      const std::string& layout) {
  plan::measured_training_run r;
  r.name = name;
  r.on = *plan::presets::find("dgx-h100");
  r.workload = *plan::presets::find_workload("llm-7b-train");
  r.workload.sequence = sequence;
  r.workload.global_batch = 64;
  r.layout = io::parse_parallel_layout(layout);
  const auto truth = plan::price_with(r, k);
  r.step_time_s = truth.step.value();
  r.device_bytes = truth.device_bytes.value();
  return r;
}

std::string refusal(const std::string& text) {
  try {
    workloads::read_measured_runs(io::parse(text, "m.json"), TRINITY_SOURCE_DIR "/bench/published/torchtitan");
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}

const std::string good_run = R"({"name": "a", "system": "dgx-h100", "parallelism": "dp=8,zero=1",
    "workload": {"name": "w", "model": "llama2-7b", "sequence": 4096, "global_batch": 64},
    "measured": {"step_time_s": 10}})";

}  // namespace

TEST_CASE("runs made with known constants give them back", "[plan][fit]") {
  const model::stack_constants truth{
      .matmul_share = 0.7, .layer_overhead = seconds{2e-4}, .memory_factor = 1.1, .memory_overhead = bytes{2e9}};
  // Two sequence lengths: the overhead (a layer's, a pass's) weighs more beside the shorter one's work.
  const std::vector runs{made_with(truth, "short", 2048, "dp=8,zero=1"), made_with(truth, "long", 8192, "tp=2,dp=4")};
  const auto f = plan::fit_stack(runs, "mine");
  const auto& k = f.stack.constants;
  CHECK(k.matmul_share == Approx(0.7).margin(2e-3));
  CHECK(k.layer_overhead.value() == Approx(2e-4).margin(1e-9));
  CHECK(k.memory_factor == Approx(1.1).epsilon(1e-9));
  CHECK(k.memory_overhead.value() == Approx(2e9).epsilon(1e-6));
  CHECK(f.stack.not_pinned.empty());
  for (std::size_t i = 0; i < runs.size(); ++i)
    CHECK(f.after[i].step.value() == Approx(*runs[i].step_time_s).epsilon(2e-3));
  // Before the fit, the default stack: faster than the truth, which runs at 70% of the curves and pays overheads.
  for (std::size_t i = 0; i < runs.size(); ++i) CHECK(f.before[i].step.value() < *runs[i].step_time_s);
  CHECK(f.stack.fitted_on == std::vector<std::string>{"short", "long"});
  // Two runs fitted: their spread says nothing, so the step band is the reference's width, centred on the fit.
  const auto reference = plan::stacks::megatron_core().step_time;
  CHECK(f.stack.step_time.high - f.stack.step_time.low ==
        Approx((reference.high - reference.low) * std::sqrt(1.5)).epsilon(1e-9));
  CHECK_FALSE(f.stack.device_bytes.known());
}

TEST_CASE("runs whose steps answer the share and the overhead alike leave the overhead unpinned", "[plan][fit]") {
  const model::stack_constants truth{.matmul_share = 0.6};
  // The same work on every GPU, only more of them: no run weighs the overhead against the work differently.
  const std::vector runs{made_with(truth, "8", 4096, "dp=8,zero=1"), made_with(truth, "again", 4096, "dp=8,zero=1")};
  const auto f = plan::fit_stack(runs, "mine");
  CHECK(f.stack.constants.matmul_share == Approx(0.6).margin(2e-3));
  CHECK(f.stack.constants.layer_overhead.value() == 0);
  CHECK(std::count(f.stack.not_pinned.begin(), f.stack.not_pinned.end(), "layer_overhead") == 1);
  CHECK(std::count(f.stack.not_pinned.begin(), f.stack.not_pinned.end(), "memory_factor") == 1);
}

TEST_CASE("held-out runs judge a fit and never shape it", "[plan][fit]") {
  const model::stack_constants truth{.matmul_share = 0.8};
  std::vector runs{made_with(truth, "a", 2048, "dp=8,zero=1"), made_with(truth, "b", 8192, "tp=2,dp=4")};
  const auto alone = plan::fit_stack(runs, "x");
  auto wild = made_with(truth, "wild", 4096, "tp=4,dp=2");
  wild.step_time_s = *wild.step_time_s * 3, wild.held_out = true;
  runs.push_back(wild);
  const auto judged = plan::fit_stack(runs, "x");
  CHECK(judged.stack.constants == alone.stack.constants);
  CHECK(judged.after.size() == 3);
  CHECK(judged.stack.fitted_on.size() == 2);
  runs.front().held_out = true;
  CHECK_THROWS_WITH(plan::fit_stack(runs, "x"), Catch::Contains("a fit needs at least 2 measured runs not held out"));
}

TEST_CASE("a stack file reads back into the stack written, and refuses what no stack has", "[plan][fit][io]") {
  plan::training_stack s;
  s.name = "mine";
  s.source = "two runs";
  s.constants = {
      .matmul_share = 0.71, .layer_overhead = seconds{3e-4}, .memory_factor = 0.9, .memory_overhead = bytes{1e9}};
  s.step_time = {-0.2, 0.25, 0.8, 2};
  s.fitted_on = {"a", "b"};
  s.not_pinned = {"layer_overhead"};
  const auto back = io::read_stack(io::parse(io::write_stack(s).dump(), "s.json"));
  CHECK(back.name == s.name);
  CHECK(back.constants == s.constants);
  CHECK(back.step_time == s.step_time);
  CHECK_FALSE(back.device_bytes.known());
  CHECK(back.fitted_on == s.fitted_on);
  CHECK(back.not_pinned == s.not_pinned);
  CHECK_THROWS_WITH(
      io::read_stack(io::parse(R"({"trinity_stack": 1, "name": "x", "constants": {"matmul_share": 2}})", "s.json")),
      Catch::StartsWith("constants.matmul_share: must lie in (0, 1.5]"));
  CHECK_THROWS_WITH(
      io::read_stack(io::parse(R"({"trinity_stack": 1, "name": "x", "constants": {"matmul_shar": 1}})", "s.json")),
      Catch::StartsWith("constants.matmul_shar: unknown key"));
}

TEST_CASE("an interval is the prediction times the band, a tenth wider each way for each unmeasured curve",
          "[plan][fit]") {
  const plan::residual_band b{-0.1, 0.2, 0.8, 5};
  const auto i = plan::interval_of(100, b, 0);
  REQUIRE(i);
  CHECK(i->low == Approx(100 * std::exp(-0.1)));
  CHECK(i->high == Approx(100 * std::exp(0.2)));
  const auto wider = plan::interval_of(100, b, 2);
  CHECK(wider->low == Approx(100 * std::exp(-0.1) / 1.21));
  CHECK(wider->high == Approx(100 * std::exp(0.2) * 1.21));
  CHECK_FALSE(plan::interval_of(100, {}, 0));
  // The GB200's curves are the H100's or none: a plan there says so and widens.
  auto w = *plan::presets::find_workload("llm-7b-train");
  CHECK(workloads::unmeasured_curves(*plan::presets::find("gb200-nvl72-cxl"), w) ==
        std::vector<std::string>{"gemm", "attention"});
  CHECK(workloads::unmeasured_curves(*plan::presets::find("dgx-h100"), w).empty());
}

TEST_CASE("measured runs the step model cannot price are refused by path and name", "[plan][fit][io]") {
  const auto ok = workloads::read_measured_runs(io::parse(R"({"runs": [)" + good_run + "]}", "m.json"));
  REQUIRE(ok.size() == 1);
  CHECK(*ok[0].step_time_s == 10);
  CHECK_FALSE(ok[0].held_out);
  const auto with = [](const std::string& from, const std::string& to) {
    std::string r = good_run;
    r.replace(r.find(from), from.size(), to);
    return R"({"runs": [)" + r + "]}";
  };
  CHECK(refusal(with(R"("dgx-h100", "parallelism": "dp=8,zero=1")",
                     R"("gb200-nvl72-cxl", "parallelism": "dp=128,zero=1")")) ==
        "runs[0].parallelism: uses 128 GPUs, and gb200-nvl72-cxl has 72 with no scale-out link");
  CHECK(refusal(with(R"("global_batch": 64})", R"("global_batch": 64, "stack": "megatron-core"})")) ==
        "runs[0].workload.stack: names a stack; the fit finds the run's stack. Fix: leave \"stack\" out");
  CHECK(refusal(with(R"({"step_time_s": 10})", "{}")) == "runs[0].measured: give step_time_s, device_bytes or both");
  CHECK(refusal(with(R"("dgx-h100")", R"("dgx-h10")"))
            .starts_with(R"(runs[0].system: "dgx-h10" is neither a system preset; did you mean "dgx-h100"?)"));
  CHECK(refusal(R"({"runs": [)" + good_run + "," + good_run + "]}") ==
        R"(runs[1].name: "a" names another run too; name each once)");
  CHECK(refusal(with(R"("name": "w", "model")", R"("name": "w", "type": "edge", "model")"))
            .starts_with("runs[0].workload.global_batch: unknown key"));
}

TEST_CASE("hostile bytes in a stack file or a measured-runs file give an error to name, never a crash",
          "[plan][fit][io]") {
  plan::training_stack s;
  s.name = "mine";
  s.step_time = {-0.2, 0.2, 0.8, 2};
  s.fitted_on = {"a"};
  const std::string seeds[] = {io::write_stack(s).dump(), R"({"runs": [)" + good_run + "]}"};
  std::mt19937 rng(11);
  int read = 0, refused = 0;
  for (int round = 0; round < 600; ++round) {
    const auto text = test::mutated(seeds[round % 2], rng, 1 + round % 4);
    try {
      if (round % 2)
        workloads::read_measured_runs(io::parse(text, "m.json"));
      else
        io::read_stack(io::parse(text, "s.json"));
      ++read;
    } catch (const invalid_input&) {
      ++refused;
    }
  }
  CHECK(read + refused == 600);
  CHECK(refused > 0);
}

TEST_CASE("torchtitan's published Float8 runs: a fit on two brings the held-out steps closer and inside their band",
          "[plan][fit][published]") {
  const std::string dir = TRINITY_SOURCE_DIR "/bench/published/torchtitan";
  const auto runs = workloads::read_measured_runs(io::load(dir + "/fsdp-float8.json"), dir);
  const auto f = plan::fit_stack(runs, "torchtitan-float8");
  double before = 0, after = 0;
  std::size_t held = 0, inside_before = 0, inside_after = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double m = *runs[i].step_time_s;
    if (!runs[i].held_out) {
      CHECK(f.after[i].step.value() == Approx(m).epsilon(0.02));  // two constants, two runs: met closely
      continue;
    }
    ++held;
    before += std::abs(f.before[i].step.value() / m - 1), after += std::abs(f.after[i].step.value() / m - 1);
    const auto in = [&](const std::optional<plan::interval>& x) { return x && m >= x->low && m <= x->high; };
    const auto unmeasured = workloads::unmeasured_curves(runs[i].on, runs[i].workload).size();
    inside_before += in(plan::interval_of(f.before[i].step.value(), runs[i].workload.stack.step_time, unmeasured));
    inside_after += in(plan::interval_of(f.after[i].step.value(), f.stack.step_time, unmeasured));
  }
  REQUIRE(held == 6);
  CHECK(after < before / 2);
  CHECK(inside_after > inside_before);
}

}  // namespace plan_stack_fit_test
