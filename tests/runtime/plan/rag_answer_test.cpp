// A RAG plan chooses its LLM's replica with the serving planner's search, together with the placement (issue 81
// item 8): an LLM whose replicas leave too few devices for the search gives way to the next, a query's first token
// is the LLM's batch's, and a refusal names the nearest plan's binding constraint and a fix on this system.
#include <catch2/catch.hpp>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/rag_serve.hpp>
#include <trinity/workloads/registry.hpp>

#include <string>

namespace plan_rag_answer_test {

using namespace trinity;

namespace {
plan::rag_workload at_rate(double queries_per_second) {
  auto w = plan::presets::rag_serve();
  w.queries_per_second = queries_per_second;
  return w;
}
}  // namespace

TEST_CASE("a RAG plan's LLM is the first of the serving planner's replicas with which a placement fits",
          "[plan][rag]") {
  const auto s = plan::presets::dgx_h100_cxl();
  for (const double rate : {20.0, 50.0}) {
    const auto w = at_rate(rate);
    const auto answer = plan::plan_rag_answer(s, w);
    const auto choices = plan::rag_llm_choices(s, w, {});
    std::size_t at = 0;
    while (at < choices.size() && !(choices[at].plan == answer.llm.plan)) ++at;
    REQUIRE(at < choices.size());
    // Every LLM before it leaves no placement that fits; the one chosen keeps up.
    for (std::size_t i = 0; i < at; ++i) CHECK_THROWS_AS(plan::plan_rag(s, w, {}, choices[i]), invalid_input);
    const auto& c = answer.plan.chosen().cost;
    CHECK(c.devices_busy <= static_cast<double>(s.device.count));
    // The query's first token is a request's arriving into the LLM's batch, within the objective with the search.
    CHECK(c.ttft == answer.llm.cost.ttft_batch);
    CHECK(c.search + c.ttft <= w.llm.ttft_slo);
    // The plan alone is the same plan.
    CHECK(plan::plan_rag(s, w).chosen().plan == answer.plan.chosen().plan);
  }
}

TEST_CASE("a RAG refusal names the nearest plan's binding constraint and the fix that would lift it", "[plan][rag]") {
  const auto s = plan::presets::dgx_h100_cxl();
  std::string what;
  try {
    (void)plan::plan_rag_answer(s, at_rate(100));
  } catch (const invalid_input& e) {
    what = e.what();
  }
  // The index fits (sharded over the HBM, or in the CXL pool): the query rate binds, not a tier's capacity.
  CHECK(what.find("The nearest, nprobe 256 of 40000 lists, index sharded over 8 x h100-hbm3 (nvlink4-x18), breaks "
                  "the query rate: 100 queries/s keep ") != std::string::npos);
  CHECK(what.find("Fix: queries_per_second at most ") != std::string::npos);
  CHECK(what.find("or a looser llm.ttft_slo or llm.tpot_slo") != std::string::npos);
  CHECK(what.find("a system with a capacity tier") == std::string::npos);
}

TEST_CASE("a rag-serve LLM without objectives plans, each left out listed as none", "[plan][rag]") {
  const auto j = io::parse(R"({"name": "q", "type": "rag-serve", "corpus_vectors": 1e8, "dimension": 1024,
                                "queries_per_second": 20, "top_k": 10, "chunk_tokens": 256,
                                "llm": {"model": "llama3-8b", "prompt_tokens": 64, "output_tokens": 256}})",
                           "w.json");
  const auto s = plan::presets::dgx_h100_cxl();
  const auto w = workloads::read_workload(j, s).as<plan::rag_workload>();
  CHECK(plan::describe(w.assumed).find(R"x(llm.ttft_slo "none (no objective)")x") != std::string::npos);
  CHECK_NOTHROW(plan::plan_rag(s, w));
}

}  // namespace plan_rag_answer_test
