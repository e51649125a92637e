// The llm-serve workload on the planning engine: its prices are the serving model's, its choice fits the
// memory and the latency objectives and is the best that does, and looser constraints never serve fewer
// tokens per device-second.
#include <catch2/catch.hpp>

#include <trinity/io/block_trace.hpp>
#include <trinity/plan/serving.hpp>

#include <algorithm>
#include <bit>
#include <vector>

namespace plan_serving_test {

using namespace trinity;

namespace {
std::vector<plan::system> systems() {
  return {plan::presets::dgx_h100(), plan::presets::dgx_a100(), plan::presets::gb200_nvl72_cxl()};
}
}  // namespace

TEST_CASE("a serving plan is priced by the serving model", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  const plan::serving_plan p{8, 16, 0, bytes{1024e9}, 1};
  REQUIRE(codecs[0].name == "identity");
  const auto c = plan::price(s, w, p, codecs);
  const auto r = plan::replica_of(s, w, p, codecs[0]);
  const double h = std::min(w.hit_rate(bytes{1024e9}), w.hit_rate_bound);
  CHECK(c.hit_rate == h);
  CHECK(c.prefill.value() == model::prefill_time(r, 12035, h * 12035).value());
  CHECK(c.load.value() ==
        Approx((s.tiers[1].latency + model::kv_bytes_per_device(r, h * 12035) / s.tiers[1].bandwidth).value()));
  CHECK(c.tpot.value() == model::time_per_output_token(r, 16, 12035, 343).value());
  CHECK(c.tier_bytes[0].value() ==
        Approx(model::weight_bytes_per_device(r).value() + model::kv_bytes_per_device(r, 16 * (12035 + 343)).value()));
  CHECK(c.tier_bytes[1].value() == Approx(1024e9 / 8));
  // Static batches of 16: their prompts prefilled together in one pass, then 342 decode steps.
  const double batch = (model::prefill_time(r, 12035, h * 12035, 16) + 342.0 * c.tpot).value();
  CHECK(c.total.time.value() == Approx(8 * batch / (16 * 343)));
  CHECK(c.replica_tokens_per_second == Approx(16 * 343 / batch));
  CHECK(c.tokens_per_second == Approx(c.replica_tokens_per_second / 8));
}

TEST_CASE("the serving search prices whole batches beyond the powers of two: the most that fit, the most within TPOT",
          "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llama3_70b_serve();
  w.tpot_slo = seconds{0.05};
  const auto r = plan::plan_serving(s, w);
  // For TP 8, 16-bit KV and no prefix cache: the largest batch whose KV fits beside the weights, and the
  // largest of those within 50 ms a token, are both candidates, and one more would break each bound.
  const auto codecs = plan::kv_codecs(s);
  const auto replica = plan::replica_of(s, w, {8, 1, 0, bytes{}, 0}, codecs[0]);
  const bytes free = s.tiers[0].capacity - model::weight_bytes_per_device(replica);
  const bytes per_sequence = model::kv_bytes_per_device(replica, 12035 + 343);
  const auto most = static_cast<std::size_t>(free / per_sequence);
  const auto within = [&](std::size_t b) {
    return model::time_per_output_token(replica, static_cast<double>(b), 12035, 343) <= w.tpot_slo;
  };
  std::size_t fastest = 0;
  while (fastest < most && within(fastest + 1)) ++fastest;
  REQUIRE(!std::has_single_bit(most));
  const auto priced = [&](std::size_t b) {
    return std::any_of(r.candidates.begin(), r.candidates.end(), [&](const auto& e) {
      return e.plan == plan::serving_plan{8, b, 0, bytes{}, 0};
    });
  };
  CHECK(priced(most));
  CHECK(priced(fastest));
  CHECK(!priced(most + 1));
  for (const auto& e : r.candidates)
    if (e.plan == plan::serving_plan{8, most, 0, bytes{}, 0}) CHECK(e.cost.tier_bytes[0] <= s.tiers[0].capacity);
}

TEST_CASE("every chosen serving plan fits, meets its objectives and is the best that does", "[plan][serving]") {
  const auto w = plan::presets::llama3_70b_serve();
  for (const auto& s : systems())
    for (const auto o : {plan::objective::time, plan::objective::energy, plan::objective::cost}) {
      if (o == plan::objective::cost && s.device.price_per_hour == 0) {  // dgx-a100 carries no price
        CHECK_THROWS_WITH(plan::plan_serving(s, w, {.objective = o}), Catch::Contains("cost needs prices"));
        continue;
      }
      const auto r = plan::plan_serving(s, w, {.objective = o});
      const auto& c = r.chosen();
      INFO(s.name << " / " << plan::to_string(o) << ": " << plan::describe(c.plan, s, r.codecs));
      CHECK(c.fits());
      CHECK(c.cost.ttft <= w.ttft_slo);
      CHECK(c.cost.tpot <= w.tpot_slo);
      for (std::size_t t = 0; t < s.tiers.size(); ++t) CHECK(c.cost.tier_bytes[t] <= s.tiers[t].capacity);
      CHECK(std::find(r.pareto.begin(), r.pareto.end(), r.choice) != r.pareto.end());
      for (const auto& e : r.candidates)
        if (e.fits()) CHECK(plan::detail::score(e.cost, o) >= plan::detail::score(c.cost, o) * (1 - 1e-12));
      CHECK(!r.explanation.trades.empty());
      CHECK(!r.explanation.rejected.empty());
    }
}

// Up to the tie tolerance: a plan within 0.1% of the best that uses less is chosen over it, so more room may give
// a leaner plan 0.1% slower than the best before it, never more.
TEST_CASE("looser objectives and more memory never serve fewer tokens per device-second", "[plan][serving][laws]") {
  const auto base = plan::presets::llama3_70b_serve();
  const double tie = 1 / (1 + plan::tie_tolerance);
  for (const auto& s0 : systems()) {
    double previous = 0;
    for (const double tpot : {0.03, 0.05, 0.1, 0.2, 0.5}) {
      auto w = base;
      w.tpot_slo = seconds{tpot};
      try {
        const double rate = plan::plan_serving(s0, w).chosen().cost.tokens_per_second;
        CHECK(rate >= previous * tie * (1 - 1e-12));
        previous = rate;
      } catch (const invalid_input&) {
        CHECK(previous == 0);  // nothing fits yet
      }
    }
    previous = 0;
    for (const double scale : {1.0, 1.5, 2.0, 4.0}) {
      auto s = s0;
      s.tiers[0].capacity = s0.tiers[0].capacity * scale;
      const double rate = plan::plan_serving(s, base).chosen().cost.tokens_per_second;
      INFO(s.name << " with " << to_string(s.tiers[0].capacity) << " per device");
      CHECK(rate >= previous * tie * (1 - 1e-12));
      previous = rate;
    }
  }
}

TEST_CASE("no prefix cache hits more than the trace's infinite-capacity bound", "[plan][serving]") {
  const auto s = plan::presets::gb200_nvl72_cxl();
  const auto w = plan::presets::llama3_70b_serve();
  REQUIRE(w.hit_rate_bound > 0.3);
  REQUIRE(w.hit_rate_bound < 0.4);
  const auto r = plan::plan_serving(s, w);
  for (const auto& e : r.candidates) CHECK(e.cost.hit_rate <= w.hit_rate_bound);
  // Past the bound a bigger cache buys nothing, so the smallest that reaches it wins the tie.
  const auto& p = r.chosen().plan;
  if (r.chosen().cost.hit_rate == w.hit_rate_bound)
    for (const auto& e : r.candidates)
      if (e.plan.cache_tier == p.cache_tier && e.plan.tensor_parallel == p.tensor_parallel && e.plan.batch == p.batch &&
          e.plan.codec == p.codec && e.plan.cache < p.cache && e.plan.cache > bytes{})
        CHECK(e.cost.hit_rate < w.hit_rate_bound);
}

TEST_CASE("a serving workload that cannot meet its objectives is refused with the fix", "[plan][serving]") {
  auto w = plan::presets::llama3_70b_serve();
  w.ttft_slo = seconds{1e-6};
  CHECK_THROWS_WITH(plan::plan_serving(plan::presets::dgx_h100(), w),
                    Catch::Contains("no serving plan fits") && Catch::Contains("TTFT"));
  w = plan::presets::llama3_70b_serve();
  w.output_tokens = 0;
  CHECK_THROWS_WITH(plan::plan_serving(plan::presets::dgx_h100(), w), Catch::Contains("workload.output_tokens"));
}

#ifdef TRINITY_SHARED_TRACE
TEST_CASE("the serving preset's mean prompt and answer are the whole trace's", "[plan][serving][shared]") {
  const auto t = io::read_block_trace(TRINITY_SHARED_TRACE);
  double in = 0, out = 0;
  for (const auto& q : t) in += static_cast<double>(q.input_length), out += static_cast<double>(q.output_length);
  const auto w = plan::presets::llama3_70b_serve();
  CHECK(std::round(in / static_cast<double>(t.size())) == w.prompt_tokens);
  CHECK(std::round(out / static_cast<double>(t.size())) == w.output_tokens);
}
#endif

TEST_CASE("the serving planner lays replicas that tile the devices: no TP leaves some idle", "[plan][serving]") {
  // Six GPUs: TP 4 would make one replica and idle two, yet price six devices' throughput and host memory.
  auto s = plan::presets::dgx_h100();
  s.device.count = 6;
  s.scale_up_domain = 6;
  const auto w = plan::presets::llama3_70b_serve();
  const auto r = plan::plan_serving(s, w);
  std::vector<std::size_t> degrees;
  for (const auto& e : r.candidates) {
    CHECK(s.device.count % e.plan.tensor_parallel == 0);
    degrees.push_back(e.plan.tensor_parallel);
  }
  std::sort(degrees.begin(), degrees.end());
  degrees.erase(std::unique(degrees.begin(), degrees.end()), degrees.end());
  CHECK(degrees == std::vector<std::size_t>{1, 2});
  CHECK(s.device.count % r.chosen().plan.tensor_parallel == 0);
  // Eight GPUs still try every power of two that divides them.
  const auto eight = plan::plan_serving(plan::presets::dgx_h100(), w);
  std::size_t widest = 0;
  for (const auto& e : eight.candidates) widest = std::max(widest, e.plan.tensor_parallel);
  CHECK(widest == 8);
}

TEST_CASE(
    "a replica's precision: fp8 weights and matrix multiplies, int8 and int4 weight-only, fp8 refused on a "
    "device without fp8 tensor cores",
    "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  const plan::serving_plan p{4, 16, 0, bytes{}, 0};
  const auto replica = [&](const char* precision) {
    w.precision = precision;
    return plan::replica_of(s, w, p, codecs[0]);
  };
  const auto bf16 = replica("bf16"), fp8 = replica("fp8"), int8 = replica("int8"), int4 = replica("int4");
  // Weights read at their width: 2, 1, 1 and half a byte each, a quarter of the 70B model's on each of 4 devices.
  const double params = model::parameters(w.shape);
  CHECK(model::weight_bytes_per_device(bf16) == bytes{params * 2.0 / 4});
  CHECK(model::weight_bytes_per_device(fp8) == bytes{params * 1.0 / 4});
  CHECK(model::weight_bytes_per_device(int8) == bytes{params * 1.0 / 4});
  CHECK(model::weight_bytes_per_device(int4) == bytes{params * 0.5 / 4});
  // fp8 multiplies at the H100's fp8 rate (1,979 TFLOP/s dense); weight-only int8 and int4 in 16 bits.
  CHECK(fp8.device_rate == flops_per_second{1979e12});
  CHECK(bf16.device_rate == flops_per_second{989e12});
  CHECK(int8.device_rate == bf16.device_rate);
  CHECK(int4.device_rate == bf16.device_rate);
  // So a decode step, which streams the weights, is faster at every narrower width, and prefill only with fp8.
  CHECK(model::decode_step_time(int4, 16, 2048) < model::decode_step_time(int8, 16, 2048));
  CHECK(model::decode_step_time(int8, 16, 2048) < model::decode_step_time(bf16, 16, 2048));
  CHECK(model::prefill_time(int8, 2048, 0) == model::prefill_time(bf16, 2048, 0));
  CHECK(model::prefill_time(fp8, 2048, 0) < model::prefill_time(bf16, 2048, 0));
  // The search prices the precision too: fp8 weights leave room for a larger batch, or a lower degree.
  w.precision = "fp8";
  const auto r = plan::plan_serving(s, w);
  w.precision = "bf16";
  const auto b = plan::plan_serving(s, w);
  CHECK(r.chosen().cost.tokens_per_second > b.chosen().cost.tokens_per_second);

  // An A100 lists no fp8 rate: fp8 would run at 16 bits unnoticed, so it is refused, as fp32 is.
  const auto a100 = plan::presets::dgx_a100();
  w.precision = "fp8";
  CHECK_THROWS_WITH(
      plan::plan_serving(a100, w),
      "workload.precision: fp8 needs fp8 tensor cores, and dgx-a100's a100-sxm-80gb lists no fp8 rate. Fix: "
      "bf16 or fp16, weight-only int8 or int4, or a system whose device.compute lists one "
      "({\"bf16\": ..., \"fp8\": ...})");
  w.precision = "fp32";
  CHECK_THROWS_WITH(plan::plan_serving(s, w), Catch::Contains("workload.precision: \"fp32\" is not a precision a "
                                                              "replica serves at. Fix: bf16, fp16, fp8"));
}

}  // namespace plan_serving_test
