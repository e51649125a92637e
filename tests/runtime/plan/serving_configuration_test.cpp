// One serving configuration priced as `trinity plan --parallelism` prices it: the same figures the planner's
// search gives that plan, every key checked, every bad value refused naming the key and the fix.
#include <catch2/catch.hpp>

#include <trinity/plan/serving_configuration.hpp>
#include <trinity/presets.hpp>

namespace plan_serving_configuration_test {

using namespace trinity;

TEST_CASE("a configuration is priced as the planner prices the same plan", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto c = plan::price_configuration(s, w, "tp=8,batch=16,kv=int8,prefix=host-ddr5:512GB");
  const auto codecs = plan::kv_codecs(s);
  const plan::serving_plan p{8, 16, 1, bytes{512e9}, 1};
  REQUIRE(codecs[1].name == "int8");
  CHECK(c.configuration.plan == p);
  const auto same = plan::price(s, w, p, codecs);
  CHECK(c.cost.ttft == same.ttft);
  CHECK(c.cost.ttft_batch == same.ttft_batch);
  CHECK(c.cost.tpot == same.tpot);
  CHECK(c.cost.tokens_per_second == same.tokens_per_second);
  CHECK(c.cost.replica_tokens_per_second == same.replica_tokens_per_second);
  CHECK(c.cost.tier_bytes == same.tier_bytes);
  CHECK(c.violation.empty());
  // The defaults: TP 1, batch 1, the workload's weights, 16-bit KV, no prefix cache.
  const auto d = plan::price_configuration(s, w, "tp=2");
  CHECK(d.configuration.plan == plan::serving_plan{2, 1, 0, bytes{}, 0});
  CHECK(d.configuration.weights == "bf16");
  CHECK(d.configuration.kv == "bf16");
}

TEST_CASE("a configuration's weights and KV precisions: fp8 halves the bytes, fp8 KV breaks a tight error budget",
          "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto bf16 = plan::price_configuration(s, w, "tp=4,batch=16");
  const auto fp8 = plan::price_configuration(s, w, "tp=4,batch=16,weights=fp8,kv=fp8");
  CHECK(fp8.workload.precision == "fp8");
  CHECK(fp8.cost.tpot < bf16.cost.tpot);
  CHECK(fp8.cost.tier_bytes[0] < bf16.cost.tier_bytes[0]);
  // KV as fp8 is what the engines serve: within the default budget, its error the bound the plan states.
  CHECK(fp8.violation.empty());
  CHECK(fp8.cost.error == plan::fp8_kv_error_bound);
  CHECK(w.error_budget == plan::fp8_kv_error_bound);
  // e4m3's rounding bound, 2^-4, is more than a budget of 1%: priced, and said not to fit.
  auto tight = w;
  tight.error_budget = 0.01;
  CHECK(plan::price_configuration(s, tight, "tp=4,batch=16,weights=fp8,kv=fp8").violation ==
        "error budget: KV as fp8 adds relative error 0.0625, more than 0.01");
  // A batch whose KV outgrows the device's memory is priced and said not to fit, naming the tier.
  const auto big = plan::price_configuration(s, w, "tp=8,batch=1000");
  CHECK_THAT(big.violation, Catch::StartsWith("h100-hbm3 capacity: needs"));
}

TEST_CASE("every bad configuration is refused, naming the key and what would do", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto refused = [&](const char* text, const std::string& why) {
    INFO(text);
    CHECK_THROWS_WITH(plan::price_configuration(s, w, text), "parallelism: " + why);
  };
  refused("tq=4", "\"tq\" is not a key of an llm-serve configuration; did you mean \"tp\"?");
  refused("speed=4",
          "\"speed\" is not a key of an llm-serve configuration; expected one of tp, batch, weights, kv, "
          "prefix");
  refused("tp=4,tp=2", "\"tp\" is given twice");
  refused("tp=0", "tp=0: must be a whole number from 1 to 10000000");
  refused("batch=x", "batch=x: must be a whole number from 1");
  refused("tp=3", "tp=3: must divide the heads (64) and the KV heads (8), so each device holds whole heads");
  refused("tp=16", "tp=16: dgx-h100 has 8 devices in its scale-up domain");
  refused("weights=fp4", "weights=fp4: use bf16, fp16, fp8, int8 or int4");
  refused("kv=int4", "kv=int4: use bf16, fp16 (2 bytes a value), int8 or fp8 (1 byte)");
  refused("prefix=host-ddr5", "prefix=host-ddr5: write TIER:SIZE, e.g. prefix=host-ddr5:512GB");
  refused("prefix=hots-ddr5:1TB",
          "prefix=hots-ddr5:1TB: \"hots-ddr5\" is not a tier of dgx-h100; did you mean "
          "\"host-ddr5\"?");
  refused("prefix=host-ddr5:0GB", "prefix=host-ddr5:0GB: the cache's size must be positive");
  refused("tp=4,", "an empty item; write key=value pairs separated by commas, e.g. tp=4,batch=64");
  refused("tp", "\"tp\" has no '='; write key=value, e.g. tp=4");
  // fp8 weights on a device without fp8 tensor cores: refused as the workload's precision is, under its key.
  CHECK_THROWS_WITH(plan::price_configuration(plan::presets::dgx_a100(), w, "weights=fp8"),
                    Catch::StartsWith("parallelism: weights=fp8: fp8 needs fp8 tensor cores"));
}

}  // namespace plan_serving_configuration_test
