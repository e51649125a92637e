// Every planner's slots are TradeoffPolicy models: the engine walks from the untraded baseline to the choice one
// slot at a time, each step priced by its slot's policy, and the walk starts at the baseline's resource vector,
// ends at the choice's, and never skips a step.

#include <catch2/catch.hpp>

#include <trinity/plan.hpp>

#include <string>
#include <vector>

namespace plan_slots_test {

using namespace trinity;

namespace {

template <class Result>
void check_walk(const Result& r, const std::vector<std::string>& slots) {
  const auto& steps = r.explanation.priced;
  if (r.choice == r.baseline) {
    CHECK(steps.empty());
    return;
  }
  REQUIRE_FALSE(steps.empty());
  CHECK(steps.front().before == plan::resources_of(r.candidates[r.baseline].cost.total));
  CHECK(steps.back().after == plan::resources_of(r.chosen().cost.total));
  for (std::size_t i = 1; i < steps.size(); ++i) CHECK(steps[i].before == steps[i - 1].after);
  // In the planner's order of slots, each at most once.
  std::size_t at = 0;
  for (const auto& step : steps) {
    while (at < slots.size() && slots[at] != step.slot) ++at;
    REQUIRE(at < slots.size());
    ++at;
  }
}

}  // namespace

TEST_CASE("every planner's choice is a walk of priced slot trades from its baseline", "[plan]") {
  const auto h100 = plan::presets::h100_infiniband();
  const auto dgx = plan::presets::dgx_h100();
  const auto gb200 = plan::presets::gb200_nvl72_cxl();

  SECTION("training: ZeRO stage, offload tier, recomputation, gradient codec") {
    const auto r = plan::plan_training(h100, plan::presets::llm_70b());
    check_walk(r, {"ZeRO stage", "offload tier", "recomputation", "gradient codec"});
    REQUIRE(r.explanation.priced.front().slot == "ZeRO stage");
    CHECK(r.explanation.priced.front().spends == "bandwidth");
    CHECK(r.explanation.priced.front().saves == "memory");
    // The same step as the explanation's text prints it.
    CHECK(r.explanation.trades.front().find(to_string(r.explanation.priced.front().after.memory)) != std::string::npos);
  }
  SECTION("the diffusion cache: capacity, tier, latent codec") {
    check_walk(plan::plan_diffusion(gb200, plan::presets::diffusion_dit_12b()),
               {"cache capacity", "cache tier", "latent codec"});
  }
  SECTION("serving: tensor-parallel degree, batch, KV precision, prefix cache") {
    check_walk(plan::plan_serving(dgx, plan::presets::llama3_70b_serve()),
               {"tensor-parallel degree", "batch", "KV precision", "prefix cache"});
  }
  SECTION("the edge stream: where it is analysed") {
    const auto s = *plan::presets::find("edge-5g-cloud");
    check_walk(plan::plan_edge(s, plan::presets::edge_video_analytics(), plan::default_feature_codecs()),
               {"where the stream is analysed"});
  }
  SECTION("a parallel layout") {
    check_walk(plan::plan_parallel(dgx, plan::presets::llm_7b(), {.gpus = 8}), {"parallel layout"});
  }
  SECTION("data curation: co-residency") {
    check_walk(plan::plan_data_curation(dgx, plan::presets::t2v_curation()), {"co-residency"});
  }
  SECTION("heterogeneous training: disaggregation") {
    check_walk(plan::plan_hetero_train(dgx, plan::presets::wan22_t2v_hetero()), {"disaggregation"});
  }
}

}  // namespace plan_slots_test
