#include <catch2/catch.hpp>

#include <trinity/io/attention_kernels.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/plan/system.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace model_fused_attention_test {

using namespace trinity;
using namespace trinity::model;

namespace {
io::json from(const std::string& path) { return io::load(std::string(TRINITY_SOURCE_DIR) + "/" + path); }

training_job llama_like(bool flash) {
  training_job j;
  j.shape = {4, 4096, 14336, 32, 8, 128256, true, false};  // head dimension 128
  j.sequence = 8192;
  j.global_batch = 8;
  j.flash_attention = flash;
  j.dropout = false;
  return j;
}

training_cluster device(fused_attention_efficiency a) {
  training_cluster c;
  c.peak = flops_per_second{1e15};
  c.gemm = {0.8, 300};
  c.memory_bandwidth = bytes_per_second{3e12};
  c.memory = bytes{80e9};
  c.fast = {seconds{1e-6}, bytes_per_second{300e9}};
  c.slow = {seconds{5e-6}, bytes_per_second{25e9}};
  c.attention = a;
  return c;
}
}  // namespace

TEST_CASE("the fused kernel's curve: its knee halves it, head dimension 128 is its reference", "[model]") {
  const fused_attention_efficiency a{0.6, 400, 0.5, 700, 120};
  CHECK(a.measured());
  CHECK(a.head_dim_factor(128) == Approx(1.0).epsilon(1e-15));
  CHECK(a.forward_share(400, 128) == Approx(0.3).epsilon(1e-15));
  CHECK(a.backward_share(700, 128) == Approx(0.25).epsilon(1e-15));
  // d/(d + d0) · (128 + d0)/128 at 64: 64/184 · 248/128.
  CHECK(a.head_dim_factor(64) == Approx(64.0 / 184.0 * 248.0 / 128.0).epsilon(1e-15));
  CHECK_FALSE(fused_attention_efficiency{}.measured());
  // The kernels' own count: 4·s²·d a head forward, causal half.
  CHECK(attention_core_flops(2, 16, 4096, 4096, 128, true) == 4.0 * 2 * 16 * 4096.0 * 4096 * 128 / 2);
  CHECK(attention_core_flops(1, 1, 10, 20, 8, false) == 4.0 * 10 * 20 * 8);
}

TEST_CASE("the fit recovers a curve from points it generated", "[model]") {
  const double peak = 1e15;
  const fused_attention_efficiency truth{0.55, 390, 0.47, 650, 110};
  std::vector<attention_point> points;
  for (const double s : {512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
    points.push_back({false, true, 128, s, peak * truth.forward_share(s, 128)});
    points.push_back({true, true, 128, s, peak * truth.backward_share(s, 128)});
    points.push_back({false, true, 64, s, peak * truth.forward_share(s, 64)});
  }
  const auto f = fit_fused_attention(points, peak);
  CHECK(f.model.forward == Approx(truth.forward).epsilon(2e-3));
  CHECK(f.model.forward_knee == Approx(truth.forward_knee).epsilon(1e-2));
  CHECK(f.model.backward == Approx(truth.backward).epsilon(2e-3));
  CHECK(f.model.backward_knee == Approx(truth.backward_knee).epsilon(1e-2));
  CHECK(f.model.head_dim_knee == Approx(truth.head_dim_knee).margin(0.25));
  CHECK(f.derived_backward == 0);
  CHECK(f.rms_log_error < 1e-3);
}

TEST_CASE("a non-causal backward point becomes causal by the forward pass's mask ratio", "[model]") {
  const double peak = 1e15;
  std::vector<attention_point> points{{false, true, 128, 1024, 400e12},  {false, false, 128, 1024, 500e12},
                                      {true, false, 128, 1024, 450e12},  {false, true, 128, 4096, 500e12},
                                      {false, false, 128, 4096, 550e12}, {true, false, 128, 4096, 500e12}};
  const auto f = fit_fused_attention(points, peak);
  CHECK(f.derived_backward == 2);
  // Two derived points, 450·400/500 = 360 and 500·500/550: the curve goes through both.
  CHECK(f.model.backward_share(1024, 128) * peak == Approx(360e12).epsilon(1e-3));
  CHECK(f.model.backward_share(4096, 128) * peak == Approx(500e12 * 500 / 550).epsilon(1e-3));
  // Too few points is refused by name.
  CHECK_THROWS_WITH(fit_fused_attention(std::vector<attention_point>(points.begin(), points.begin() + 3), peak),
                    Catch::Contains("points"));
}

TEST_CASE("the H100 presets carry the fit of the published cuDNN speeds", "[model][io]") {
  const auto kernels = io::read_attention_kernels(from("bench/published/attention-kernels.json"));
  const auto& k = io::find_attention_kernel(kernels, "cudnn", "h100-sxm");
  const auto s = *plan::presets::find("dgx-h100");
  const auto f = fit_fused_attention(k.points, s.device.compute.value());
  CHECK(s.device.attention == f.model);
  CHECK(plan::presets::find("dgx-h200")->device.attention == f.model);
  // No kernel was measured on an A100 or a GB200: their presets price the core as GEMMs.
  CHECK_FALSE(plan::presets::find("dgx-a100")->device.attention.measured());
  CHECK_FALSE(plan::presets::find("gb200-nvl72-cxl")->device.attention.measured());
  // Every causal forward point at head dimension 128 within 5% of the curve.
  for (const auto& p : k.points)
    if (!p.backward && p.causal && p.head_dim == 128)
      CHECK(std::abs(f.model.forward_share(p.sequence, 128) * s.device.compute.value() / p.flops_per_second - 1) <
            0.05);
}

TEST_CASE("every kernel measured on the H100 is fitted, and a workload names the one it runs", "[model][plan]") {
  const auto kernels = io::read_attention_kernels(from("bench/published/attention-kernels.json"));
  const auto h100 = *plan::presets::find("dgx-h100");
  const double peak = h100.device.compute.value();
  std::size_t measured = 0;
  for (const auto& k : kernels) {
    if (k.device != "h100-sxm") continue;
    ++measured;
    // The generated curve is the fit of the file's points, and the lookup by name returns it on both presets
    // priced with the H100's measurements.
    const auto f = fit_fused_attention(k.points, peak);
    CHECK(plan::attention_kernel_curve(h100, k.name, "kernel") == f.model);
    CHECK(plan::attention_kernel_curve(*plan::presets::find("dgx-h200"), k.name, "kernel") == f.model);
  }
  CHECK(measured == std::size(plan::detail::measured_h100_attention_kernels));
  // No name: the device's own curve, cuDNN's.
  const auto cudnn = plan::attention_kernel_curve(h100, "cudnn", "kernel");
  const auto fa2 = plan::attention_kernel_curve(h100, "flash-attention-2", "kernel");
  CHECK(plan::attention_kernel_curve(h100, "", "kernel") == cudnn);
  CHECK(h100.device.attention == cudnn);
  CHECK_FALSE(fa2 == cudnn);
  // FlashAttention-2 runs both passes slower than cuDNN at every measured sequence and head dimension.
  for (const double seq : {512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0})
    for (const double d : {64.0, 128.0}) {
      CHECK(fa2.forward_share(seq, d) < cudnn.forward_share(seq, d));
      CHECK(fa2.backward_share(seq, d) < cudnn.backward_share(seq, d));
    }
  // A layer priced with each: the same work, each pass slower by its share's ratio.
  parallel_layout l;
  l.tp = 2;
  l.dp = 1;
  const auto a = layer(llama_like(true), device(cudnn), l), b = layer(llama_like(true), device(fa2), l);
  CHECK(b.attn_f.value() / a.attn_f.value() ==
        Approx(cudnn.forward_share(8192, 128) / fa2.forward_share(8192, 128)).epsilon(1e-12));
  CHECK(b.attn_b.value() / a.attn_b.value() ==
        Approx(cudnn.backward_share(8192, 128) / fa2.backward_share(8192, 128)).epsilon(1e-12));
  // A name not measured, or a device none was measured on, is refused at the field with what would work.
  CHECK_THROWS_WITH(plan::attention_kernel_curve(h100, "flash-attention-3", "workload.attention_kernel"),
                    "workload.attention_kernel: \"flash-attention-3\" is no measured kernel; the kernels are "
                    "cudnn, flash-attention-2");
  CHECK_THROWS_WITH(plan::attention_kernel_curve(*plan::presets::find("dgx-a100"), "cudnn", "k"),
                    Catch::StartsWith("k: no attention kernel was measured on a100-sxm-80gb; leave it out"));
  CHECK(plan::attention_kernel_curve(*plan::presets::find("dgx-a100"), "", "k") ==
        plan::presets::find("dgx-a100")->device.attention);
}

TEST_CASE("flash attention is priced as one fused causal kernel", "[model]") {
  const fused_attention_efficiency a{0.6, 400, 0.5, 700, 120};
  const auto c = device(a);
  parallel_layout l;
  l.tp = 2;
  l.dp = 1;
  const auto x = layer(llama_like(true), c, l);
  const double work = attention_core_flops(1, 16, 8192, 8192, 128, true);
  CHECK(x.attn_f.value() == Approx(work / (1e15 * a.forward_share(8192, 128))).epsilon(1e-12));
  CHECK(x.attn_b.value() == Approx(2.5 * work / (1e15 * a.backward_share(8192, 128))).epsilon(1e-12));

  // With context parallelism the kernel walks its s/c queries against the whole sequence.
  l.cp = 2;
  const auto y = layer(llama_like(true), c, l);
  const double half = attention_core_flops(1, 16, 4096, 8192, 128, true);
  CHECK(y.attn_f.value() == Approx(half / (1e15 * a.forward_share(4096, 128))).epsilon(1e-12));

  // Without a measured kernel: the causal half of the unfused GEMMs forward, 2.5 times that backward.
  l.cp = 1;
  const auto unfused = layer(llama_like(false), device({}), l);
  const auto fused = layer(llama_like(true), device({}), l);
  CHECK(fused.attn_f.value() == Approx(0.5 * unfused.attn_f.value()).epsilon(1e-12));
  CHECK(fused.attn_b.value() == Approx(2.5 * fused.attn_f.value()).epsilon(1e-12));
}

TEST_CASE("a sliding window's layers attend to s·w − w²/2 pairs, at the curve's rate for a sequence of 2w", "[model]") {
  // Keys a query sees on average: s/2 in full, and with a window the pairs over the queries.
  CHECK(causal_keys_per_query(8192, 0) == 4096);
  CHECK(causal_keys_per_query(8192, 8192) == 4096);
  CHECK(causal_keys_per_query(8192, 100000) == 4096);
  CHECK(causal_keys_per_query(8192, 1024) == (8192.0 * 1024 - 1024.0 * 1024 / 2) / 8192);

  const fused_attention_efficiency a{0.6, 400, 0.5, 700, 120};
  const auto c = device(a);
  parallel_layout l;
  l.tp = 2;
  l.dp = 1;
  auto j = llama_like(true);
  const auto full = layer(j, c, l);
  j.shape.sliding_window = 1024;  // every layer windowed
  const auto windowed = layer(j, c, l);
  const double work = 4.0 * 16 * 8192 * (1024 - 1024.0 * 1024 / (2 * 8192)) * 128;
  CHECK(windowed.attn_f.value() == Approx(work / (1e15 * a.forward_share(2048, 128))).epsilon(1e-12));
  CHECK(windowed.attn_b.value() == Approx(2.5 * work / (1e15 * a.backward_share(2048, 128))).epsilon(1e-12));
  CHECK(windowed.gemm_f == full.gemm_f);  // the projections do not change
  CHECK(windowed.attn_f < full.attn_f);

  // Every other layer full (GPT-OSS's pattern): the layers' mean.
  j.shape.full_attention_frequency = 2;
  CHECK(windowed_layer_count(j.shape) == 2);
  const auto alternating = layer(j, c, l);
  CHECK(alternating.attn_f.value() == Approx(0.5 * (full.attn_f + windowed.attn_f).value()).epsilon(1e-12));
  CHECK(alternating.attn_b.value() == Approx(0.5 * (full.attn_b + windowed.attn_b).value()).epsilon(1e-12));

  // A window as long as the sequence is no window.
  j.shape.sliding_window = 8192;
  j.shape.full_attention_frequency = 0;
  CHECK(layer(j, c, l).attn_f.value() == Approx(full.attn_f.value()).epsilon(1e-12));

  // Unfused attention computes every score and masks it, window or not; a fused kernel with no measured curve
  // does the share of the GEMMs its queries attend to.
  j.shape.sliding_window = 1024;
  auto unfused = llama_like(false);
  unfused.shape.sliding_window = 1024;
  CHECK(layer(unfused, c, l).attn_f == layer(llama_like(false), c, l).attn_f);
  const auto gemms = layer(llama_like(false), device({}), l);
  CHECK(layer(j, device({}), l).attn_f.value() ==
        Approx(gemms.attn_f.value() * causal_keys_per_query(8192, 1024) / 8192).epsilon(1e-12));
}

TEST_CASE("a latent-attention layer: its five projections, its core at the mean head width, its latents kept",
          "[model]") {
  const fused_attention_efficiency a{0.6, 400, 0.5, 700, 120};
  const auto c = device(a);
  training_job j;
  j.shape = shapes::deepseek_v3;
  j.shape.experts = j.shape.top_k = j.shape.moe_ffn_hidden = j.shape.shared_experts = 0;  // its dense layers
  j.shape.first_dense_layers = 0;
  j.sequence = 4096;
  j.global_batch = 8;
  j.flash_attention = true;
  j.dropout = false;
  parallel_layout l;
  l.tp = 2;
  l.dp = 1;
  l.sequence_parallel = true;
  const auto x = layer(j, c, l);
  const double T = 4096, h = 7168, f = 18432, t = 2;
  // The down-projections run whole over the rank's T/t tokens (sequence parallel); the rest split by heads.
  const double gemms[7][3] = {
      {T / t, 1536, h},      {T, 128 * 192 / t, 1536}, {T / t, 512 + 64, h}, {T, 128 * 256 / t, 512},
      {T, h, 128 * 128 / t}, {T, 2 * f / t, h},        {T, h, f / t}};
  double forward = 0, backward = 0;
  for (const auto& g : gemms) {
    forward += model::detail::gemm_time(c, g[0], g[1], g[2]).value();
    backward += model::detail::gemm_bwd(c, g[0], g[1], g[2]).value();
  }
  CHECK(x.gemm_f.value() == Approx(forward).epsilon(1e-12));
  CHECK(x.gemm_b.value() == Approx(backward).epsilon(1e-12));
  // The core: 64 heads a rank, s/2 keys a query, 192 wide for QKᵀ and 128 for P·V: the kernel at 160.
  const double work = 4.0 * 64 * 4096 * 2048 * 160;
  CHECK(x.attn_f.value() == Approx(work / (1e15 * a.forward_share(4096, 160))).epsilon(1e-12));
  // Kept: the norms' and the down-projections' and fc1's inputs (split by sp), Q and K of 128 × 192 and V of
  // 128 × 128 and the output's input (split by t), the latents whole, and four norms' statistics.
  const double replicated = 2 * h + 2 * h + 2 * h + 2 * h,
               divided = 2 * (128 * 192 * 2 + 128 * 128) + 2 * 128 * 128 + 2 * 2 * f + 2 * f;
  const double latents = (1536 + 512) * 4.0;
  CHECK(x.kept == Approx(T * (replicated / t + divided / t + latents + 24 / t)).epsilon(1e-12));
  // Context parallelism passes every head's keys (192) and values (128), the rank's half of the heads.
  l.cp = 2;
  CHECK(layer(j, c, l).kv_chunk.value() == Approx(2048 * 128 * (192 + 128) / 2 * 2.0).epsilon(1e-12));
}

TEST_CASE("attention kernel files are read strictly", "[io]") {
  const auto bad = [](const std::string& text) { return io::read_attention_kernels(io::parse(text, "k.json")); };
  const std::string head = R"({"sources": {"s": "a paper"}, "kernels": [{"name": "k", "device": "d", "source": )";
  CHECK_THROWS_WITH(bad(head + R"("s", "precision": "bf16", "points": [{"pass": "forwards", "causal": true,
      "head_dim": 128, "sequence": 512, "tflops": 300}]}]})"),
                    Catch::Contains("kernels[0].points[0].pass"));
  CHECK_THROWS_WITH(bad(head + R"("s", "precision": "bf16", "points": [{"pass": "forward", "causal": true,
      "head_dim": 128, "sequence": 512, "tflops": 300, "note": 1}]}]})"),
                    Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(bad(head + R"("t", "precision": "bf16", "points": []}]})"), Catch::Contains("source"));
  CHECK_THROWS_WITH(bad(head + R"("s", "precision": "bf16", "points": [{"pass": "forward", "causal": true,
      "head_dim": 128, "sequence": 512, "tflops": -3}]}]})"),
                    Catch::Contains("tflops"));
  const std::string point = R"({"pass": "forward", "causal": true, "head_dim": 128, "sequence": 512, "tflops": 3})";
  CHECK_THROWS_WITH(bad(head + R"("s", "precision": "bf16", "points": [)" + point + "," + point + "]}]}"),
                    Catch::Contains("measured twice"));
  CHECK_THROWS_WITH(io::find_attention_kernel(
                        io::read_attention_kernels(from("bench/published/attention-kernels.json")), "cudnn", "a100"),
                    Catch::Contains("no kernel \"cudnn\" measured on a100"));
}

}  // namespace model_fused_attention_test
