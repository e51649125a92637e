// Where a served request's time goes, as `trinity plan` tells it: the parts of every candidate plan's prefill
// and decode step add up to the TTFT's prefill and the TPOT plan::price gave it, and the text names each part
// with what bounds it.
#include <catch2/catch.hpp>

#include <trinity/plan/serving.hpp>
#include <trinity/reports/serving_time.hpp>

#include <sstream>
#include <string>

namespace reports_serving_time_test {

using namespace trinity;

TEST_CASE("every serving candidate's passes, part by part, add up to the prefill and TPOT it was priced at",
          "[reports][serving]") {
  const auto w = plan::presets::llama3_70b_serve();
  for (const auto& s : {plan::presets::dgx_h100(), plan::presets::dgx_a100(), plan::presets::gb200_nvl72_cxl()}) {
    const auto r = plan::plan_serving(s, w);
    REQUIRE(r.candidates.size() > 100);
    std::size_t cached = 0;
    for (const auto& e : r.candidates) {
      const auto x = reports::serving_time_of(s, w, e.plan, r.codecs.at(e.plan.codec), e.cost.hit_rate);
      INFO(s.name << ": " << plan::describe(e.plan, s, r.codecs));
      CHECK(x.prefill.total() == e.cost.prefill);  // the same terms, added in the same order
      CHECK(x.decode.total() == e.cost.tpot);
      CHECK(x.cached_tokens == e.cost.hit_rate * w.prompt_tokens);
      CHECK(x.batch == static_cast<double>(e.plan.batch));
      CHECK(x.context == w.prompt_tokens + w.output_tokens / 2.0);
      cached += x.cached_tokens > 0;
      const auto j = reports::to_json(x);
      CHECK(j.at("prefill").at("parts").at("total_s").get<double>() == e.cost.prefill.value());
      CHECK(j.at("decode_step").at("parts").at("total_s").get<double>() == e.cost.tpot.value());
      CHECK(j.at("decode_step").at("batch").get<double>() == x.batch);
    }
    CHECK(cached > 0);  // the prefix cache's plans are among them
  }
}

TEST_CASE("the text tells each part's share and bound: a long prompt's FLOPs, a short one's read of the weights",
          "[reports][serving]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llama3_70b_serve();
  const auto codecs = plan::kv_codecs(s);
  const auto text = [&](const plan::serving_plan& p) {
    std::ostringstream out;
    reports::print(out, reports::serving_time_of(s, w, p, codecs.at(p.codec), 0));
    return out.str();
  };
  const plan::serving_plan tp8{8, 16, 0, bytes{}, 0};
  const auto c = plan::price(s, w, tp8, codecs);
  const auto long_prompt = text(tp8);
  CHECK_THAT(long_prompt, Catch::Contains("12035 tokens of 12035 prefilled"));
  CHECK_THAT(long_prompt, Catch::Contains("FLOPs (a fused kernel)"));
  CHECK_THAT(long_prompt, Catch::Contains("hidden"));
  CHECK_THAT(long_prompt, Catch::Contains("prefill                      " + to_string(c.prefill)));
  CHECK_THAT(long_prompt, Catch::Contains("decode step of 16 sequences"));
  CHECK_THAT(long_prompt, Catch::Contains("decode step                  " + to_string(c.tpot)));
  CHECK_THAT(long_prompt, Catch::Contains("reading the weights (FLOPs: "));
  CHECK_THAT(long_prompt, Catch::Contains("two a layer"));

  w.prompt_tokens = 16;
  const plan::serving_plan tp1{1, 1, 0, bytes{}, 0};
  const auto x = reports::serving_time_of(s, w, tp1, codecs.at(0), 0);
  REQUIRE(x.prefill.read_bound());
  const auto short_prompt = text(tp1);
  CHECK_THAT(short_prompt, Catch::Contains("one read of the weights      " + to_string(x.prefill.weights_read)));
  CHECK_THAT(short_prompt, Catch::Contains("longer than the FLOPs: multiplies " + to_string(x.prefill.multiplies)));
  CHECK_THAT(short_prompt, Catch::Contains("none: one device"));
  CHECK_THAT(short_prompt, Catch::Contains("decode step of 1 sequence at"));
}

}  // namespace reports_serving_time_test
