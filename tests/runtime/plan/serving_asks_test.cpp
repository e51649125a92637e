// An llm-serve workload asks only what it uses and plans only what pays (issue 81): without prefix reuse it needs
// no hit_rate and plans no cache; objectives left out are none; a refusal names the key as the file spells it; a
// prefix cache that finds next to nothing is not chosen however it ties; and the plan prices the TTFT of a request
// inside its batch beside the idle replica's.
#include <catch2/catch.hpp>

#include <trinity/plan/serving.hpp>
#include <trinity/workloads/registry.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace plan_serving_asks_test {

using namespace trinity;

namespace {
const std::string chat = R"({"name": "chat", "type": "llm-serve", "model": "llama3-8b", "prompt_tokens": 2000,
                             "output_tokens": 300)";

plan::serving_workload read(const std::string& rest) {
  return workloads::read_workload(io::parse(chat + rest, "w.json"), plan::presets::dgx_h100())
      .as<plan::serving_workload>();
}
std::string refusal(const std::string& rest) {
  try {
    (void)read(rest);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("an llm-serve workload without prefix reuse needs no hit_rate and plans no cache", "[plan][serving]") {
  const auto w = read("}");
  CHECK_FALSE(plan::prefix_reuse(w));
  CHECK(std::isinf(w.ttft_slo.value()));
  CHECK(std::isinf(w.tpot_slo.value()));
  const std::string slos = R"x(ttft_slo "none (no objective)", tpot_slo "none (no objective)")x";
  CHECK(plan::describe(w.assumed).find(slos) != std::string::npos);
  CHECK(plan::describe(w.assumed).find(R"x(hit_rate "none (no prefix reuse)")x") != std::string::npos);
  const auto s = plan::presets::dgx_h100();
  const auto r = plan::plan_serving(s, w);
  for (const auto& e : r.candidates) CHECK(e.plan.cache == bytes{});
  CHECK(plan::objective_text(w.ttft_slo) == "none");
  // A curve of zero is the same question: no reuse.
  CHECK_FALSE(plan::prefix_reuse(read(R"(, "hit_rate": {"kappa_per_gb": 0, "gamma": 1}})")));
  CHECK(refusal(R"(, "hit_rate": {"kappa_per_gb": -1, "gamma": 1}})").starts_with("hit_rate.kappa_per_gb:"));
  CHECK(refusal(R"(, "hit_rate_bound": 0.5})").starts_with("hit_rate_bound: bounds a hit_rate curve"));
  CHECK(refusal(R"(, "ttft_slo": "0s"})").starts_with("ttft_slo:"));
}

TEST_CASE("every unknown and missing key of a workload is reported in one pass", "[plan][serving]") {
  std::string what;
  try {
    (void)workloads::read_workload(
        io::parse(R"({"name": "x", "type": "llm-serve", "model": "llama3-8b", "promt_tokens": 2000})", "w.json"),
        plan::presets::dgx_h100());
  } catch (const invalid_input& e) {
    what = e.what();
  }
  CHECK(what ==
        "promt_tokens: unknown key; did you mean \"prompt_tokens\"? (and output_tokens: missing; an llm-serve "
        "workload needs it)");  // the key misspelt is not missing twice
}

TEST_CASE("a prefix cache that finds under 0.1% of a prompt is not chosen", "[plan][serving]") {
  // About 2e-6 of a prompt in a terabyte: a tie with no cache that once went to the bigger plan.
  const auto w = read(R"(, "hit_rate": {"kappa_per_gb": 2e-9, "gamma": 1}})");
  const auto s = plan::presets::dgx_h100();
  const auto r = plan::plan_serving(s, w);
  CHECK(r.chosen().plan.cache == bytes{});
  // Every plan with a cache breaks a constraint (its memory or its error budget first where those bind), and some
  // break only this one.
  bool some_cache_refused = false;
  for (const auto& e : r.candidates)
    if (e.plan.cache > bytes{}) {
      CHECK(e.cost.hit_rate < plan::least_useful_hit_rate);
      CHECK_FALSE(e.fits());
      some_cache_refused |= e.violation.starts_with("useful cache: it finds");
    }
  CHECK(some_cache_refused);
}

TEST_CASE("a serving plan prices the TTFT of a request inside its batch beside the idle replica's", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = read("}");
  const auto codecs = plan::kv_codecs(s);
  for (const std::size_t b : {std::size_t{1}, std::size_t{8}, std::size_t{64}}) {
    const plan::serving_plan p{2, b, 0, bytes{}, 0};
    const auto c = plan::price(s, w, p, codecs);
    const auto r = plan::replica_of(s, w, p, codecs[0]);
    CHECK(c.ttft_batch.value() == model::prefill_time(r, 2000, 0, static_cast<double>(b)).value());
    if (b == 1) CHECK(c.ttft_batch == c.ttft);
    if (b > 1) CHECK(c.ttft_batch > c.ttft);  // the batch's prompts prefill together
  }
}

TEST_CASE("a serving tie within 0.1% goes to the plan with the smaller prefix cache, or none", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  bool acted = false;
  for (const double kappa : {2e-6, 5e-6, 1e-5, 1e-4, 2.8e-3}) {
    auto w = plan::presets::llama3_70b_serve();
    w.hit_rate.kappa = per_byte{kappa * 1e-9};
    const auto r = plan::plan_serving(s, w);
    const auto o = plan::objective::time;
    double top = std::numeric_limits<double>::infinity();
    for (const auto& e : r.candidates)
      if (e.fits()) top = std::min(top, plan::detail::score(e.cost, o));
    INFO("kappa_per_gb " << kappa);
    // No plan that fits within the tolerance holds a smaller cache than the one chosen.
    for (const auto& e : r.candidates)
      if (e.fits() && plan::detail::score(e.cost, o) <= top * (1 + plan::tie_tolerance))
        CHECK(e.plan.cache >= r.chosen().plan.cache);
    acted |= plan::detail::score(r.chosen().cost, o) > top;
  }
  CHECK(acted);  // at 5e-6 a cache wins by under 0.1%, and the plan without one is taken
}

TEST_CASE("the TTFT objective is judged on a request arriving into the plan's batch", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llama3_70b_serve();
  const auto r = plan::plan_serving(s, w);
  const auto& chosen = r.chosen();
  CHECK(chosen.cost.ttft_batch <= w.ttft_slo);
  // Every plan that fits gives its TTFT in its batch; some that an idle replica would pass are refused for it.
  bool idle_would_pass = false;
  for (const auto& e : r.candidates) {
    if (e.fits()) CHECK(e.cost.ttft_batch <= w.ttft_slo);
    if (e.violation.starts_with("TTFT objective:")) {
      CHECK(e.cost.ttft_batch > w.ttft_slo);
      idle_would_pass |= e.cost.ttft <= w.ttft_slo;
    }
  }
  CHECK(idle_would_pass);
  // The batch is the most the objectives allow: one more sequence breaks the TTFT objective, not memory.
  auto next = chosen.plan;
  next.batch += 1;
  const auto c = plan::price(s, w, next, r.codecs);
  CHECK(c.ttft_batch > w.ttft_slo);
  CHECK(c.tier_bytes[0] <= s.tiers[0].capacity);
}

TEST_CASE("KV as fp8 is priced as engines serve it, its error stated against the budget", "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llama3_70b_serve();
  CHECK(w.error_budget == plan::fp8_kv_error_bound);  // the default budget admits what engines serve
  const auto by_default = plan::plan_serving(s, w);
  std::size_t fp8_fits = 0;
  for (const auto& e : by_default.candidates)
    if (by_default.codecs[e.plan.codec].name == "fp8" && e.fits()) ++fp8_fits;
  CHECK(fp8_fits > 0);
  // int8 and fp8 KV cost the same bytes: the tie goes to the codec that adds less error.
  CHECK(by_default.codecs[by_default.chosen().plan.codec].name == "int8");
  w.error_budget = 0.01;  // a budget given is kept: fp8 is refused for it, naming both figures
  for (const auto& e : plan::plan_serving(s, w).candidates)
    if (plan::kv_codecs(s)[e.plan.codec].name == "fp8")
      CHECK(e.violation == "error budget: KV as fp8 adds relative error 0.0625, more than 0.01");
}

TEST_CASE("every wrong value of an llm-serve workload is reported in one pass", "[plan][serving]") {
  // Three refused as read, one by the plan's checks: one message, the file's key names, the order the file is read.
  const auto what = refusal(R"(, "ttft_slo": "fast", "error_budget": -1, "precision": "fp7", "stack": "vllm9"})");
  CHECK(
      what.starts_with("ttft_slo: 'fast' is not a number with a unit (e.g. 10s) (and precision: \"fp7\" is not "
                       "allowed; did you mean \"fp8\"?; stack: \"vllm9\" is no built-in serving stack;"));
  CHECK(what.ends_with("; error_budget: -1 must be finite and not negative)"));
  // The plan's own checks gather too: each field it refuses, by the name the API spells.
  auto w = plan::presets::llama3_70b_serve();
  w.prompt_tokens = 0;
  w.error_budget = -1;
  try {
    plan::validate(w, plan::presets::dgx_h100());
    FAIL("refused");
  } catch (const invalid_fields& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].field == "workload.prompt_tokens");
    CHECK(e.problems()[1].field == "workload.error_budget");
  }
}

TEST_CASE("a serving refusal names the nearest plan's binding constraint and the fix that would lift it",
          "[plan][serving]") {
  const auto s = plan::presets::dgx_h100();
  const auto refused = [&](const plan::serving_workload& w) {
    try {
      (void)plan::plan_serving(s, w);
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Objectives no plan meets: the nearest is the widest replica at batch 1, and the fix says what it needs.
  auto w = plan::presets::llama3_70b_serve();
  w.ttft_slo = seconds{1e-3};
  const auto ttft = refused(w);
  CHECK(ttft.starts_with("workload: no serving plan fits dgx-h100. The nearest, TP 8, batch 1,"));
  CHECK(ttft.find("breaks the TTFT objective: ") != std::string::npos);
  CHECK(ttft.find("Fix: a looser ttft_slo (the nearest plan needs ") != std::string::npos);
  CHECK(ttft.find("in a batch of 1), or more devices for a larger tensor-parallel degree (TP 8 here)") !=
        std::string::npos);
  // A model the node cannot hold: its capacity binds, and the fix is to split or shrink the weights.
  auto big = plan::presets::llama3_70b_serve();
  big.shape = model::shapes::llama3_405b;
  const auto capacity = refused(big);
  CHECK(capacity.find("The nearest, TP 8, batch 1,") != std::string::npos);
  CHECK(capacity.find("breaks the h100-hbm3 capacity: needs ") != std::string::npos);
  CHECK(capacity.find("weights in fewer bytes (precision fp8, int8 or int4)") != std::string::npos);
}

}  // namespace plan_serving_asks_test
