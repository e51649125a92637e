#include <catch2/catch.hpp>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/system.hpp>

#include "test_cluster.hpp"

namespace model_fp8_training_test {

using namespace trinity;
using trinity::test::h100_like;
using namespace trinity::model;

namespace {
training_job llama(bool fp8) { return test::recipe_job({8, 4096, 14336, 32, 8, 128256, true, false}, 4096, 16, fp8); }

}  // namespace

TEST_CASE("fp8 runs the layers' GEMMs at the fp8 rate and its share, and nothing else", "[model]") {
  const auto c = h100_like();
  const auto l = io::parse_parallel_layout("tp=2,dp=8");
  const auto x16 = layer(llama(false), c, l), x8 = layer(llama(true), c, l);
  // Every layer GEMM at 2 × 0.7 of the 16-bit rate for its shape: the time scales by 1/1.4 exactly.
  CHECK(x8.gemm_f.value() == Approx(x16.gemm_f.value() / 1.4).epsilon(1e-12));
  CHECK(x8.gemm_b.value() == Approx(x16.gemm_b.value() / 1.4).epsilon(1e-12));
  // The attention core stays in 16 bits.
  CHECK(x8.attn_f == x16.attn_f);
  CHECK(x8.attn_b == x16.attn_b);
  // The casts: forward the four GEMMs' inputs, backward their outputs' gradients, 4 bytes an element (2 read,
  // the cast and its transpose written).
  const double T = 4096, h = 4096, t = 2, hq = 4096, kv = 8 * 128, f = 14336;
  const double in = 2 * h + hq / t + f / t, out = (hq + 2 * kv) / t + h + 2 * f / t + h;
  CHECK((x8.elem_f - x16.elem_f).value() == Approx(4 * T * in / 3e12).epsilon(1e-9));
  CHECK((x8.elem_b - x16.elem_b).value() == Approx(4 * T * out / 3e12).epsilon(1e-9));
}

TEST_CASE("fp8 keeps its GEMMs' inputs at a byte and caches the cast weights", "[model]") {
  const auto j16 = llama(false), j8 = llama(true);
  const double s = 4096, b = 1, t = 2, h = 4096, hq = 4096, f = 14336;
  for (const bool sp : {false, true}) {
    const double split = sp ? t : 1;
    const double saved = layer_activation_bytes(j16, s, s, b, t, sp, recomputation::none) -
                         layer_activation_bytes(j8, s, s, b, t, sp, recomputation::none);
    CHECK(saved == Approx(s * b * (2 * h / split + (hq + f) / t)).epsilon(1e-12));
  }
  const auto c = h100_like();
  const auto l = io::parse_parallel_layout("tp=2,dp=8");
  const auto r16 = price(j16, c, l), r8 = price(j8, c, l);
  const double linear = 8 * (layer_parameters(j16.shape) - 2 * h) / t;
  CHECK((r8.parameters - r16.parameters).value() == Approx(2 * linear).epsilon(1e-12));
  CHECK(r8.gradients == r16.gradients);
  CHECK(r8.optimizer_states == r16.optimizer_states);
  CHECK(r8.step < r16.step);
}

// fp8_params (NeMo's; Megatron-Core's --fp8-param-gather): the GEMM weights kept in fp8 alone. Each loses its
// 16-bit copy and keeps the fp8 cast with its transpose, 2 bytes as the 16-bit weight took; the cast a step is the
// transpose alone; the distributed optimizer gathers them at a byte.
TEST_CASE("fp8_params keeps the GEMM weights in fp8 alone: their 16-bit copies, half the cast and the gather go",
          "[model]") {
  const auto c = h100_like();
  const auto j16 = llama(false), j8 = llama(true);
  auto jp = j8;
  jp.fp8_params = true;
  const double t = 2, h = 4096;
  const double linear = 8 * (layer_parameters(j16.shape) - 2 * h) / t;  // the stage's GEMM weights, a GPU's
  const auto l = io::parse_parallel_layout("tp=2,dp=8,zero=1");
  const auto r16 = price(j16, c, l), r8 = price(j8, c, l), rp = price(jp, c, l);
  CHECK((r8.parameters - rp.parameters).value() == Approx(2 * linear).epsilon(1e-12));
  CHECK(rp.parameters.value() == Approx(r16.parameters.value()).epsilon(1e-12));  // 1 + 1 bytes for 2
  CHECK(rp.gradients == r8.gradients);
  CHECK(rp.optimizer_states == r8.optimizer_states);
  CHECK(rp.activations == r8.activations);
  CHECK(rp.gemm == r8.gemm);
  CHECK((r8.elementwise - rp.elementwise).value() == Approx(2 * linear / 3e12).epsilon(1e-9));
  // One all-gather of the weights over the 8 ranks: 7/8 of them sent, the GEMM weights at 1 byte for 2.
  CHECK((r8.dp_bytes - rp.dp_bytes).value() == Approx(7.0 / 8.0 * linear).epsilon(1e-9));
  CHECK(rp.step < r8.step);
  // ZeRO-3 shards the fp8 weights as it shards the 16-bit ones: a byte each over the 8 ranks, for 2.
  const auto l3 = io::parse_parallel_layout("tp=2,dp=8,zero=3");
  CHECK((price(j16, c, l3).parameters - price(jp, c, l3).parameters).value() == Approx(linear / 8).epsilon(1e-12));
}

TEST_CASE("fp8_params is refused without fp8 GEMMs or a sharded optimizer, naming the field", "[model]") {
  const auto c = h100_like();
  auto j = llama(false);
  j.fp8_params = true;
  CHECK_THROWS_WITH(price(j, c, io::parse_parallel_layout("tp=2,dp=8,zero=1")),
                    Catch::StartsWith("fp8_params: keeps the GEMM weights in fp8, and the layers' GEMMs run in 16"));
  j.fp8 = true;
  CHECK_THROWS_WITH(
      price(j, c, io::parse_parallel_layout("tp=2,dp=8,zero=0")),
      Catch::StartsWith("zero: weights kept in fp8 alone (fp8_params)") && Catch::Contains("give zero=1 or more"));
  CHECK_NOTHROW(price(j, c, io::parse_parallel_layout("tp=2,dp=8,zero=2")));
}

TEST_CASE("fp8 is refused where the device has no fp8 rate", "[model][plan]") {
  auto c = h100_like();
  c.fp8_peak = flops_per_second{};
  CHECK_THROWS_WITH(price(llama(true), c, io::parse_parallel_layout("tp=2,dp=8")),
                    Catch::Contains("precision: fp8: the device has no fp8 rate"));
  // The presets: the A100 lists none, the H100 lists the data sheet's dense 1,979 TFLOP/s.
  const auto a100 = plan::cluster_of(*plan::presets::find("dgx-a100"), {}, 1.0, "fp8");
  CHECK(a100.fp8_peak.value() == 0);
  CHECK(a100.peak.value() == 312e12);
  const auto h100 = *plan::presets::find("dgx-h100");
  const auto c8 = plan::cluster_of(h100, {}, 1.0, "fp8");
  CHECK(c8.fp8_peak.value() == 1979e12);
  CHECK(c8.peak.value() == 989e12);
  CHECK(c8.fp8_gemm_share == h100.device.serving.fp8_gemm_share);
}

}  // namespace model_fp8_training_test
