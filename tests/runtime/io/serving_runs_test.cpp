// The measured serving runs: read strictly, our own probe's rows copied from its result files unchanged, each
// run priced through the configuration `trinity plan --parallelism` prices, and the calibration the presets
// carry equal to a fit of the file's runs (docgen writes it; this holds the pair together).
#include <catch2/catch.hpp>

#include <trinity/io/serving_runs.hpp>
#include <trinity/presets.hpp>

#include <cmath>
#include <fstream>
#include <string>

namespace io_serving_runs_test {

using namespace trinity;

namespace {
io::json from(const std::string& path) { return io::load(std::string(TRINITY_SOURCE_DIR) + "/" + path); }
const io::serving_runs& runs() {
  static const auto file = io::read_serving_runs(from("bench/published/serving-runs.json"));
  return file;
}
// The calibration of the file's runs, fitted once for the cases that read it.
const io::serving_calibrations& calibrated() {
  static const auto fits = io::calibrate_serving(runs());
  return fits;
}
}  // namespace

TEST_CASE("serving runs: our own probe's rows are the result files' CUDA-graph times, as recorded", "[io][serving]") {
  std::size_t matched = 0;
  for (const char* device : {"h100", "h200"}) {
    const auto probe = from(std::string("bench/results/serving-probe-") + device + ".json");
    for (const auto& row : probe.at("rows")) {
      if (row.at("phase") == "head") continue;
      const std::string model = row.at("model") == "llama-2-7b"    ? "llama2-7b"
                                : row.at("model") == "llama-2-13b" ? "llama2-13b"
                                                                   : "llama2-70b";
      const bool decode = row.at("phase") == "decode";
      const double n = decode ? row.at("context").get<double>() : row.at("prompt").get<double>();
      const std::string weights = row.at("weights") == "fp8" ? "fp8" : "bf16";
      std::size_t found = 0;
      for (const auto& r : runs().runs)
        if (r.source == std::string("trinity-probe-") + device && r.model == model &&
            r.metric == (decode ? "tpot_s" : "ttft_s") && r.weights == weights &&
            r.batch == row.at("batch").get<std::size_t>() && r.prompt_tokens == n) {
          ++found;
          CHECK(r.value == row.at("graph_seconds").get<double>());
          CHECK(r.layers == row.at("layers_run").get<std::size_t>());
          CHECK(r.kv == "bf16");  // the probe keeps attention and the KV cache in bf16
        }
      CHECK(found == 1);
      matched += found;
    }
  }
  CHECK(matched == 147);
}

TEST_CASE("serving runs: each is priced through the configuration its source ran", "[io][serving]") {
  const auto& fits = calibrated();
  for (const auto& r : runs().runs) {
    if (r.metric != "output_tokens_per_device_second" || r.layers) continue;
    INFO(r.name);
    const auto s = io::serving_system(r, fits);
    const auto c = plan::price_configuration(s, io::serving_run_workload(r), r.configuration());
    CHECK(io::predict(r, s) == c.cost.tokens_per_second);
    CHECK(c.configuration.plan.tensor_parallel == r.tp);
    CHECK(c.configuration.plan.batch == r.batch);
  }
}

TEST_CASE("serving runs: the presets carry the tensorrt-llm family's fit of the runs marked fit", "[io][serving]") {
  const auto& fits = calibrated();
  REQUIRE(fits.contains("tensorrt-llm"));
  REQUIRE(fits.contains("torch-cuda-graphs"));
  const auto& f = fits.at("tensorrt-llm");
  const auto same = [](const model::serving_calibration& a, const model::serving_calibration& b) {
    return a.hbm_share == b.hbm_share && a.kv_read_share == b.kv_read_share && a.layer_overhead == b.layer_overhead &&
           a.prefill_layer_overhead == b.prefill_layer_overhead && a.sequence_overhead == b.sequence_overhead &&
           a.all_reduce_latency == b.all_reduce_latency && a.fp8_gemm_share == b.fp8_gemm_share &&
           a.fused_attention_share == b.fused_attention_share && !b.kv_read_per_query_head;
  };
  CHECK(same(f.a100, plan::presets::dgx_a100().device.serving));
  CHECK(same(f.h100, plan::presets::dgx_h100().device.serving));
  CHECK(same(f.h100, plan::presets::h100_infiniband().device.serving));
  CHECK(same(f.h200, plan::presets::dgx_h200().device.serving));
  // Our own runs have no tensor parallelism and no A100: those constants are said to be unfitted.
  const auto& ours = fits.at("torch-cuda-graphs").unfitted;
  CHECK(std::find(ours.begin(), ours.end(), "all_reduce_latency") != ours.end());
  CHECK(std::find(ours.begin(), ours.end(), "a100 (the H100's)") != ours.end());
}

TEST_CASE("serving runs: the held-out runs meet the issue's bounds", "[io][serving]") {
  const auto& fits = calibrated();
  double sum[2] = {}, worst[2] = {};
  std::size_t n[2] = {};
  for (const auto& r : runs().runs) {
    if (r.role != "held-out") continue;
    const std::size_t k = r.engine_family == "tensorrt-llm" ? 0 : 1;
    const double e = std::abs(io::serving_error(r, io::serving_system(r, fits)));
    sum[k] += e, worst[k] = std::max(worst[k], e), ++n[k];
  }
  REQUIRE(n[0] == 36);
  REQUIRE(n[1] == 45);
  // Published (TensorRT-LLM) held out: within 15% on average; our own: within 10%.
  CHECK(sum[0] / static_cast<double>(n[0]) < 0.15);
  CHECK(sum[1] / static_cast<double>(n[1]) < 0.10);
  CHECK(worst[1] < 0.30);
}

TEST_CASE("serving runs: a bad file is refused at its path", "[io][serving]") {
  auto j = from("bench/published/serving-runs.json");
  auto bad = j;
  bad["runs"][0]["batchsize"] = 4;
  CHECK_THROWS_WITH(io::read_serving_runs(bad), Catch::StartsWith("runs[0].batchsize: unknown key"));
  bad = j;
  bad["runs"][0]["role"] = "fitted";
  CHECK_THROWS_WITH(io::read_serving_runs(bad), Catch::StartsWith("runs[0].role:"));
  bad = j;
  bad["runs"][0]["model"] = "llama9-1t";
  CHECK_THROWS_WITH(io::read_serving_runs(bad), Catch::StartsWith("runs[0].model: \"llama9-1t\" is not a named model"));
  bad = j;
  bad["runs"][0]["source"] = "nowhere";
  CHECK_THROWS_WITH(io::read_serving_runs(bad), "runs[0].source: \"nowhere\" is none of the file's sources");
  bad = j;
  bad["sources"]["trtllm-0.5"]["kv_reads"] = "sometimes";
  CHECK_THROWS_WITH(io::read_serving_runs(bad), Catch::StartsWith("sources.trtllm-0.5.kv_reads:"));
  bad = j;
  bad["runs"][0]["value"] = -1;
  CHECK_THROWS_WITH(io::read_serving_runs(bad), "runs[0].value: must be positive");
}

}  // namespace io_serving_runs_test
