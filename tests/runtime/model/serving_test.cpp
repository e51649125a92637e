// The serving model's figures against their closed forms: weights and KV per device, prefill at the GEMM curve
// with its weight floor, decode steps memory-bound then compute-bound, the calibrated overheads, the
// tensor-parallel all-reduces as serving engines run them, static batches, TTFT.
#include <catch2/catch.hpp>

#include <trinity/model/serving.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <tuple>

namespace model_serving_test {

using namespace trinity;

namespace {
// Llama-3-70B on 8 H100s: 989 TFLOP/s bf16, 3.35 TB/s HBM3 (NVIDIA H100 SXM data sheet), NVLink 4 at 450 GB/s
// per direction with 1 µs per hop (illustrative here: the test checks arithmetic, not the hardware).
model::serving_replica replica(std::size_t t) {
  return {model::shapes::llama3_70b,
          t,
          2,
          2,
          flops_per_second{989e12},
          0.5,
          bytes_per_second{3.35e12},
          model::collective_link{seconds{1e-6}, bytes_per_second{450e9}, {}}};
}
// The same at the GEMM curve (no flat share) with calibrated overheads; the figures are the test's own.
model::serving_replica calibrated(std::size_t t) {
  auto r = replica(t);
  r.prefill_efficiency = 0;
  r.gemm = {0.8, 500};
  r.attention_rate = flops_per_second{989e12};
  r.calibration = {.hbm_share = 0.8,
                   .kv_read_share = 0.5,
                   .layer_overhead = seconds{20e-6},
                   .prefill_layer_overhead = seconds{10e-6},
                   .sequence_overhead = seconds{5e-6},
                   .all_reduce_latency = seconds{30e-6},
                   .fp8_gemm_share = 0.7,
                   .fused_attention_share = 0.4,
                   .kv_read_per_query_head = false};
  return r;
}
const double weights_70b = 70'553'706'496.0;  // model::parameters(llama3_70b)
const double table_70b = 128'256.0 * 8192;    // its input embedding: read a row a token, not whole
const double kv_token_70b = 327'680;          // 2 · 80 layers · 8 KV heads · 128 · 2 bytes
}  // namespace

TEST_CASE("a replica's weights and KV cache split over its tensor-parallel devices", "[model][serving]") {
  const auto r = replica(8);
  CHECK(model::weight_bytes_per_device(r).value() == weights_70b * 2 / 8);
  CHECK(model::weight_bytes_read_per_device(r).value() == (weights_70b - table_70b) * 2 / 8);
  CHECK(model::kv_bytes_per_device(r, 12'000).value() == 12'000.0 * kv_token_70b / 8);
  auto fp8 = r;
  fp8.kv_bytes = 1;
  CHECK(model::kv_bytes_per_device(fp8, 12'000).value() == 12'000.0 * kv_token_70b / 2 / 8);
}

TEST_CASE("a flat prefill share prices every FLOP at it, a fully cached prompt costs nothing", "[model][serving]") {
  const auto r1 = replica(1);
  const double work = model::forward_flops(r1.shape, 8192, 4096).value();
  CHECK(model::prefill_time(r1, 12288, 4096).value() == Approx(work / (0.5 * 989e12)).epsilon(1e-12));
  CHECK(model::prefill_time(r1, 12288, 12288).value() == 0);
  // Eight devices divide the compute and add two all-reduces per layer of the fresh tokens' activations, each the
  // faster of a one-shot exchange and a ring.
  const auto r8 = replica(8);
  const bytes message{8192.0 * 8192 * 2};
  const double one_shot = 1e-6 + 7 * message.value() / 450e9;
  const double ring = model::ring_all_reduce_time(8, message, r8.scale_up).value();
  CHECK(model::tensor_parallel_all_reduce_time(r8, message).value() == Approx(std::min(one_shot, ring)));
  CHECK(model::prefill_time(r8, 12288, 4096).value() ==
        Approx(work / (8 * 0.5 * 989e12) + 2 * 80 * std::min(one_shot, ring)).epsilon(1e-12));
  CHECK(model::time_to_first_token(r8, 12288, 4096, seconds{0.25}).value() ==
        Approx(0.25 + model::prefill_time(r8, 12288, 4096).value()).epsilon(1e-12));
  CHECK_THROWS_WITH(model::prefill_time(r8, 100, 200), Catch::Contains("cached"));
}

TEST_CASE(
    "calibrated prefill: the GEMM curve at the layer's widths, fused attention, a weight floor, overheads "
    "(a decode step's per layer and prefill's own)",
    "[model][serving]") {
  const auto r = calibrated(1);
  const auto& m = r.shape;
  const double h = 8192, l = 80, f = 28672, hq = 64 * 128.0;
  const double matmul = l * (model::layer_parameters(m) - 2 * h);
  // 2,048 tokens: the curve read at the rows' count, n = the FFN's width, k = hidden.
  const double share = 0.8 * (2048 / (2048 + 500.0)) * (f / (f + 500)) * (h / (h + 500));
  const double attended = 2048.0 * 2049 / 2;
  const double compute = 2 * matmul * 2048 / (989e12 * share) +
                         2 * 128'256.0 * h / (989e12 * 0.8 * (1024 / 1524.0) * (f / (f + 500)) * (h / (h + 500))) +
                         4 * hq * l * attended / (0.4 * 989e12);
  CHECK(model::prefill_time(r, 2048, 0).value() == Approx(compute + 80 * (20e-6 + 10e-6)).epsilon(1e-9));
  // A short prompt cannot beat one read of the weights at the calibrated share of the bandwidth.
  const double floor = (weights_70b - table_70b) * 2 / (0.8 * 3.35e12);
  CHECK(model::prefill_time(r, 16, 0).value() == Approx(floor + 80 * (20e-6 + 10e-6)).epsilon(1e-9));
  // A batch of prompts shares the weight read: four 16-token prompts cost what one does.
  CHECK(model::prefill_time(r, 16, 0, 4).value() == Approx(model::prefill_time(r, 16, 0).value()));
  CHECK_THROWS_WITH(model::prefill_time(r, 16, 0, 0.5), Catch::Contains("batch"));
}

TEST_CASE(
    "a decode step: its GEMMs read the weights until the batch makes them compute-bound, then its attention "
    "reads the batch's KV",
    "[model][serving]") {
  const auto r = replica(8);
  const double tp = 2 * 80 * (1e-6 + 7 * 8192.0 * 2 / 450e9);  // one-shot beats the ring at 16 KB
  const double read = (weights_70b - table_70b) * 2 / 8 + 12'000.0 * kv_token_70b / 8;
  CHECK(model::decode_step_time(r, 1, 12'000).value() == Approx(read / 3.35e12 + tp).epsilon(1e-12));
  // At 100,000 sequences of 10 tokens the multiplies outweigh the weights' read; the KV read still adds, since the
  // attention kernel runs after them (its 4·h_q·l·(context + 1) FLOPs a sequence take less than its bytes).
  const double batch = 100'000, context = 10, hq = 64 * 128.0;
  const double attention = 4 * hq * 80 * (context + 1) * batch;
  const double compute = (model::forward_flops(r.shape, 1, context).value() * batch - attention) / (8 * 989e12);
  const double kv = batch * context * kv_token_70b / 8 / 3.35e12;
  REQUIRE(compute > (weights_70b - table_70b) * 2 / 8 / 3.35e12);
  REQUIRE(kv > attention / (8 * 989e12));
  const bytes big{batch * 8192 * 2};
  const double tp_big = 2 * 80 * model::tensor_parallel_all_reduce_time(r, big).value();
  CHECK(model::decode_step_time(r, batch, context).value() == Approx(compute + kv + tp_big).epsilon(1e-12));
  // TPOT is the step at the output's midpoint.
  CHECK(model::time_per_output_token(r, 4, 12'000, 400).value() == model::decode_step_time(r, 4, 12'200).value());
}

TEST_CASE("calibrated decode: HBM and KV shares, overheads per layer and per sequence, KV read per query head",
          "[model][serving]") {
  auto r = calibrated(8);
  const double weights = (weights_70b - table_70b) * 2 / 8, kv = 16 * 4096.0 * kv_token_70b / 8;
  const double all_reduce = 30e-6 + 1e-6 + 7 * 16 * 8192.0 * 2 / 450e9;
  const double step =
      weights / (0.8 * 3.35e12) + kv / (0.8 * 0.5 * 3.35e12) + 80 * 20e-6 + 16 * 5e-6 + 2 * 80 * all_reduce;
  CHECK(model::decode_step_time(r, 16, 4096).value() == Approx(step).epsilon(1e-9));
  // An engine without a grouped-query kernel reads each of the 8 KV heads once for each of its 8 query heads.
  r.calibration.kv_read_per_query_head = true;
  CHECK(model::kv_bytes_read_per_device(r, 16 * 4096).value() == Approx(8 * kv));
  CHECK(model::decode_step_time(r, 16, 4096).value() == Approx(step + 7 * kv / (0.8 * 0.5 * 3.35e12)).epsilon(1e-9));
  // fp8 GEMMs run at their share of the fp8 peak: a compute-bound step at a large batch slows by exactly it.
  auto fp8 = calibrated(1);
  fp8.fp8_compute = true;
  auto bf16 = calibrated(1);
  const double b = 200'000, c = 1;
  const double attention = std::max(b * c * kv_token_70b / (0.8 * 0.5 * 3.35e12), 4 * 64 * 128.0 * 80 * 2 * b / 989e12);
  const auto busy = [&](const model::serving_replica& x) {
    return model::decode_step_time(x, b, c).value() - 80 * 20e-6 - b * 5e-6 - attention;
  };
  CHECK(busy(fp8) == Approx(busy(bf16) / 0.7).epsilon(1e-9));
}

TEST_CASE("a pass's parts add up to it, each kernel bound by its bytes or its FLOPs as the closed forms say",
          "[model][serving]") {
  const auto r = calibrated(8);
  // A 2,048-token prompt is bound by its FLOPs, a 16-token one by one read of the weights.
  const auto long_prompt = model::prefill_breakdown(r, 2048, 0), short_prompt = model::prefill_breakdown(r, 16, 0);
  CHECK(long_prompt.total() == model::prefill_time(r, 2048, 0));
  CHECK(short_prompt.total() == model::prefill_time(r, 16, 0));
  CHECK_FALSE(long_prompt.read_bound());
  CHECK(short_prompt.read_bound());
  const double floor = (weights_70b - table_70b) * 2 / 8 / (0.8 * 3.35e12);
  CHECK(short_prompt.weights_read.value() == Approx(floor).epsilon(1e-12));
  CHECK(short_prompt.overhead.value() == Approx(80 * 20e-6).epsilon(1e-12));
  CHECK(short_prompt.eager_overhead.value() == Approx(80 * 10e-6).epsilon(1e-12));
  CHECK(long_prompt.all_reduces == model::tensor_parallel_time(r, 2048));
  // The attention core's FLOPs at the fused kernel's share of the 16-bit peak, over 8 devices.
  CHECK(long_prompt.attention.value() == Approx(4 * 64 * 128.0 * 80 * (2048.0 * 2049 / 2) / (8 * 0.4 * 989e12)));
  // A prompt wholly in the cache leaves nothing to prefill.
  CHECK(model::prefill_breakdown(r, 2048, 2048).total() == seconds{});
  // Decode at batch 16: the weights' read and the KV's, not their FLOPs; at 100,000 sequences of 10 tokens the
  // multiplies turn compute-bound while the attention stays bound by its KV.
  const auto small = model::decode_breakdown(r, 16, 4096), large = model::decode_breakdown(r, 100'000, 10);
  CHECK(small.total() == model::decode_step_time(r, 16, 4096));
  CHECK(large.total() == model::decode_step_time(r, 100'000, 10));
  CHECK(small.multiplies.read_bound());
  CHECK(small.attention.read_bound());
  CHECK_FALSE(large.multiplies.read_bound());
  CHECK(large.attention.read_bound());
  CHECK(small.multiplies.read.value() == Approx(floor).epsilon(1e-12));
  CHECK(small.attention.read.value() == Approx(16 * 4096.0 * kv_token_70b / 8 / (0.8 * 0.5 * 3.35e12)).epsilon(1e-12));
  CHECK(small.sequences.value() == Approx(16 * 5e-6).epsilon(1e-12));
  CHECK(small.overhead.value() == Approx(80 * 20e-6).epsilon(1e-12));
}

TEST_CASE("a static batch: one prefill pass for its prompts, then output - 1 decode steps", "[model][serving]") {
  const auto r = calibrated(4);
  const double t = model::static_batch_time(r, 32, 2048, 0, 128).value();
  CHECK(t ==
        Approx((model::prefill_time(r, 2048, 0, 32) + 127.0 * model::time_per_output_token(r, 32, 2048, 128)).value()));
  CHECK(model::static_batch_time(r, 32, 2048, 0, 1).value() == Approx(model::prefill_time(r, 2048, 0, 32).value()));
  CHECK_THROWS_WITH(model::static_batch_time(r, 32, 2048, 0, 0), Catch::Contains("output_tokens"));
}

TEST_CASE("a tensor-parallel degree that splits a head is refused by name, and so is a share out of range",
          "[model][serving]") {
  CHECK_NOTHROW(model::validate(replica(8)));
  CHECK_THROWS_WITH(model::validate(replica(3)), Catch::Contains("tensor_parallel") && Catch::Contains("whole heads"));
  CHECK_THROWS_WITH(model::validate(replica(16)), Catch::Contains("KV heads (8)"));
  auto bad = replica(8);
  bad.prefill_efficiency = 1.5;
  CHECK_THROWS_WITH(model::validate(bad), Catch::Contains("prefill_efficiency"));
  auto share = calibrated(8);
  share.calibration.hbm_share = 0;
  CHECK_THROWS_WITH(model::validate(share), "serving.hbm_share: is a share, above 0 and at most 1");
  share = calibrated(8);
  share.calibration.layer_overhead = seconds{-1e-6};
  CHECK_THROWS_WITH(model::validate(share), "serving.layer_overhead: must not be negative");
}

namespace {
nlohmann::json recorded(const char* file) {
  std::ifstream in(std::string(TRINITY_SOURCE_DIR) + "/bench/results/" + file);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// The shape of the layers a probe row ran, from the probe's own record of the model.
model::transformer_shape probed_shape(const nlohmann::json& probe, const nlohmann::json& row) {
  const auto& m = probe.at("context").at("models").at(row.at("model").get<std::string>());
  return {row.at("layers_run"), m.at("hidden"), m.at("ffn"), m.at("heads"),
          m.at("kv_heads"),     m.at("vocab"),  true,        false};
}
}  // namespace

TEST_CASE(
    "the serving probes (H100, H200): no decode step reads its weights and KV faster than the probe's own "
    "memory streams, and its CUDA-graph times repeat within 5%",
    "[model][serving]") {
  // Each device's recorded run, its repeat, and how many decode points fit its memory.
  const std::tuple<const char*, const char*, std::size_t> probes[] = {
      {"serving-probe-h100.json", "serving-probe-h100-repeat.json", 45},
      {"serving-probe-h200.json", "serving-probe-h200-repeat.json", 48}};
  for (const auto& [file, repeat_file, expected_decodes] : probes) {
    INFO(file);
    const auto probe = recorded(file);
    const auto repeat = recorded(repeat_file);
    const double read_rate = probe.at("bandwidth").at("read_bytes_per_second");
    const auto& rows = probe.at("rows");
    REQUIRE(rows.size() == repeat.at("rows").size());
    std::size_t decodes = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      INFO(r.dump());
      REQUIRE_FALSE(r.contains("error"));
      if (r.contains("graph_seconds"))
        CHECK(repeat.at("rows")[i].at("graph_seconds").get<double>() ==
              Approx(r.at("graph_seconds").get<double>()).epsilon(0.05));
      if (r.at("phase") != "decode") continue;
      ++decodes;
      const auto shape = probed_shape(probe, r);
      const double weight_width = r.at("weights") == "fp8" ? 1 : 2;
      const double h = static_cast<double>(shape.hidden);
      // The matrices of the layers run (their norms are vectors) at the weights' width, the 16-bit vocabulary
      // head, and the batch's KV cache at 16 bits.
      const double read =
          static_cast<double>(shape.layers) * (model::layer_parameters(shape) - 2 * h) * weight_width +
          static_cast<double>(shape.vocabulary) * h * 2 +
          r.at("batch").get<double>() * r.at("context").get<double>() * model::kv_bytes_per_token(shape, 2).value();
      CHECK(read / r.at("graph_seconds").get<double>() <= read_rate);
    }
    CHECK(decodes == expected_decodes);
  }
}

TEST_CASE("the serving probes (H100, H200): fp8 weights decode a batch of one faster than bf16, for every model",
          "[model][serving]") {
  for (const char* file : {"serving-probe-h100.json", "serving-probe-h200.json"}) {
    INFO(file);
    const auto probe = recorded(file);
    const auto graph_time = [&](const std::string& model, const std::string& weights) {
      for (const auto& r : probe.at("rows"))
        if (r.at("model") == model && r.at("phase") == "decode" && r.at("weights") == weights && r.at("batch") == 1 &&
            r.at("context") == 2048)
          return r.at("graph_seconds").get<double>();
      FAIL("no decode row for " << model << " " << weights);
      return 0.0;
    };
    for (const char* m : {"llama-2-7b", "llama-2-13b", "llama-2-70b"}) {
      INFO(m);
      CHECK(graph_time(m, "fp8") < graph_time(m, "bf16"));
    }
  }
}

}  // namespace model_serving_test
