// The serving model's figures against their closed forms: weights and KV per device, prefill at the
// sustained rate, decode steps memory-bound then compute-bound, the tensor-parallel all-reduces, TTFT.
#include <catch2/catch.hpp>

#include <trinity/model/serving.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <tuple>

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
}  // namespace

TEST_CASE("a replica's weights and KV cache split over its tensor-parallel devices", "[model][serving]") {
  const auto r = replica(8);
  CHECK(model::weight_bytes_per_device(r).value() == 70'553'706'496.0 * 2 / 8);
  CHECK(model::kv_bytes_per_device(r, 12'000).value() == 12'000.0 * 327'680 / 8);
  auto fp8 = r;
  fp8.kv_bytes = 1;
  CHECK(model::kv_bytes_per_device(fp8, 12'000).value() == 12'000.0 * 163'840 / 8);
}

TEST_CASE("prefill runs the uncached tokens at the sustained rate; a fully cached prompt costs nothing",
          "[model][serving]") {
  const auto r1 = replica(1);
  const double work = model::forward_flops(r1.shape, 8192, 4096).value();
  CHECK(model::prefill_time(r1, 12288, 4096).value() == Approx(work / (0.5 * 989e12)).epsilon(1e-12));
  CHECK(model::prefill_time(r1, 12288, 12288).value() == 0);
  // Eight devices divide the compute and add two all-reduces per layer of the fresh tokens' activations.
  const auto r8 = replica(8);
  const double allreduce = model::ring_all_reduce_time(8, bytes{8192.0 * 8192 * 2}, r8.scale_up).value();
  CHECK(model::prefill_time(r8, 12288, 4096).value() ==
        Approx(work / (8 * 0.5 * 989e12) + 2 * 80 * allreduce).epsilon(1e-12));
  CHECK(model::time_to_first_token(r8, 12288, 4096, seconds{0.25}).value() ==
        Approx(0.25 + model::prefill_time(r8, 12288, 4096).value()).epsilon(1e-12));
  CHECK_THROWS_WITH(model::prefill_time(r8, 100, 200), Catch::Contains("cached"));
}

TEST_CASE("a decode step reads the weights and the batch's KV, until the batch makes it compute-bound",
          "[model][serving]") {
  const auto r = replica(8);
  const double tp = 2 * 80 * model::ring_all_reduce_time(8, bytes{1.0 * 8192 * 2}, r.scale_up).value();
  const double read = 70'553'706'496.0 * 2 / 8 + 12'000.0 * 327'680 / 8;
  CHECK(model::decode_step_time(r, 1, 12'000).value() == Approx(read / 3.35e12 + tp).epsilon(1e-12));
  // At 100,000 sequences of 10 tokens the multiplies outweigh the reads.
  const double batch = 100'000, context = 10;
  const double compute = model::forward_flops(r.shape, 1, context).value() * batch / (8 * 989e12);
  const double memory = (70'553'706'496.0 * 2 / 8 + batch * context * 327'680 / 8) / 3.35e12;
  REQUIRE(compute > memory);
  const double tp_big = 2 * 80 * model::ring_all_reduce_time(8, bytes{batch * 8192 * 2}, r.scale_up).value();
  CHECK(model::decode_step_time(r, batch, context).value() == Approx(compute + tp_big).epsilon(1e-12));
  // TPOT is the step at the output's midpoint.
  CHECK(model::time_per_output_token(r, 4, 12'000, 400).value() == model::decode_step_time(r, 4, 12'200).value());
}

TEST_CASE("a tensor-parallel degree that splits a head is refused by name", "[model][serving]") {
  CHECK_NOTHROW(model::validate(replica(8)));
  CHECK_THROWS_WITH(model::validate(replica(3)), Catch::Contains("tensor_parallel") && Catch::Contains("whole heads"));
  CHECK_THROWS_WITH(model::validate(replica(16)), Catch::Contains("KV heads (8)"));
  auto bad = replica(8);
  bad.prefill_efficiency = 1.5;
  CHECK_THROWS_WITH(model::validate(bad), Catch::Contains("prefill_efficiency"));
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
