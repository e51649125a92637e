#include <catch2/catch.hpp>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/parallel_training.hpp>

#include "test_cluster.hpp"

namespace model_recompute_modules_test {

using namespace trinity;
using namespace trinity::model;

namespace {
// The verdict as the text a user reads ("field: what; fix"), empty where the layout breaks no rule.
std::string layout_text(const training_job& j, const parallel_layout& l) { return message_of(check_layout(j, l)); }
// DeepSeek-V3's layer (latent attention, 256 experts of 2,048, 8 a token, one shared), every layer a mixture,
// without its prediction module.
training_job deepseek_layers(std::size_t layers, bool fp8 = false) {
  auto shape = shapes::deepseek_v3;
  shape.layers = layers;
  shape.first_dense_layers = 0;
  shape.mtp_layers = 0;
  return test::recipe_job(shape, 4096, 16, fp8);
}

// A dense model of 8 layers, no experts, no latent attention.
training_job dense_job() {
  training_job dense;
  dense.shape = {8, 2048, 8192, 16, 16, 51200, false, false};
  dense.sequence = 2048;
  dense.global_batch = 8;
  return dense;
}

parallel_layout tp2_ep8(const std::string& modules) {
  auto l = io::parse_parallel_layout("tp=2,dp=8,sp=on,zero=1,ep=8,recompute_modules=" + modules);
  return l;
}
}  // namespace

TEST_CASE("recompute modules: parsed from a layout, written back in order, refused by name", "[model][parallel][io]") {
  const auto l = io::parse_parallel_layout("tp=2,dp=4,sp=on,recompute_modules=moe_act+layernorm");
  CHECK(l.modules.has(recompute_module::layernorm));
  CHECK(l.modules.has(recompute_module::moe_act));
  CHECK_FALSE(l.modules.has(recompute_module::mla_up_proj));
  CHECK(to_string(l) ==
        "tp=2,pp=1,vpp=1,cp=1,dp=4,mbs=1,recompute=none,recompute_modules=layernorm+moe_act,sp=on,zero=0");
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  CHECK(io::parse_parallel_layout("dp=4,recompute_modules=none").modules.empty());
  CHECK(to_string(io::parse_parallel_layout("dp=4")) == "tp=1,pp=1,vpp=1,cp=1,dp=4,mbs=1,recompute=none,sp=off,zero=0");
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,recompute_modules=layernorm+layernorm"),
                    Catch::Contains("recompute_modules=layernorm+layernorm: layernorm is named twice"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,recompute_modules=layernorm+attn"),
                    Catch::Contains("'attn' is not a module; use layernorm, moe_act, mla_up_proj, mlp, moe, "
                                    "shared_experts"));
  // Megatron-Core's core_attn is this model's recompute=selective: the refusal says so.
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,recompute_modules=layernorm+core_attn"),
                    Catch::Contains("core_attn is the attention core, which recompute=selective recomputes; give "
                                    "recompute=selective and drop core_attn"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,recompute_modules="), Catch::Contains("'' is not a module"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,recompute_module=layernorm"),
                    Catch::Contains("\"recompute_module\" is not a key"));
}

TEST_CASE("recompute modules: a module the model does not have, or beside full recomputation, is refused",
          "[model][parallel]") {
  const auto dense = dense_job();
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute_modules=layernorm")).empty());
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute_modules=moe_act"))
            .rfind("recompute_modules: moe_act recomputes the experts' activation function", 0) == 0);
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute_modules=mla_up_proj"))
            .rfind("recompute_modules: mla_up_proj recomputes latent attention's up-projections", 0) == 0);
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute=full,recompute_modules=layernorm"))
            .rfind("recompute_modules: full recomputation already runs every module again", 0) == 0);
  CHECK(layout_text(deepseek_layers(4), tp2_ep8("mla_up_proj+moe_act+layernorm")).empty());
}

TEST_CASE("recompute modules: each keeps less by its outputs and runs its forward again, in closed form",
          "[model][parallel]") {
  const auto c = test::h100_like();
  const auto j = deepseek_layers(4);
  const double T = 4096, t = 2, h = 7168, bw = 3e12;
  const auto none = layer(j, c, tp2_ep8("none"), true);
  REQUIRE(none.recompute.value() == 0);
  {  // The up-projections: Q and K (128 heads of 192) and V (of 128) off the stored set, their two GEMMs again.
    const auto x = layer(j, c, tp2_ep8("mla_up_proj"), true);
    const double saved = 2.0 * T * 128 * (2 * 192 + 128) / t;
    CHECK(none.stored - x.stored == Approx(saved).epsilon(1e-12));
    CHECK(x.modules == Approx(saved).epsilon(1e-12));
    CHECK(x.kept == none.kept);
    const double again = model::detail::gemm_time(c, T, 128 * 192 / t, 1536).value() +
                         model::detail::gemm_time(c, T, 128 * 256 / t, 512).value();
    CHECK(x.recompute.value() == Approx(again).epsilon(1e-12));
    CHECK(x.forward() == none.forward());
  }
  {  // The norms: QKV's down-projections' input and the router's (16-bit), each over the rank's T/t tokens.
    const auto x = layer(j, c, tp2_ep8("layernorm"), true);
    CHECK(none.stored - x.stored == Approx(T / t * h * (2 + 2)).epsilon(1e-12));
    CHECK(x.recompute.value() == Approx(2 * T / t * h * 4 / bw).epsilon(1e-12));
    // Under fp8 the attention's GEMM keeps its 1-byte cast, the router its 16-bit input; each norm casts again,
    // 4 bytes an element with the transpose.
    const auto x8 = layer(deepseek_layers(4, true), c, tp2_ep8("layernorm"), true);
    const auto none8 = layer(deepseek_layers(4, true), c, tp2_ep8("none"), true);
    CHECK(none8.stored - x8.stored == Approx(T / t * h * (1 + 2)).epsilon(1e-12));
    CHECK(x8.recompute.value() == Approx(2 * T / t * h * 8 / bw).epsilon(1e-12));
  }
  {  // The experts' activation: fc2's input, 2,048 values a row, T/t tokens × 8 rows at balanced load.
    const auto x = layer(j, c, tp2_ep8("moe_act"), true);
    const double rows = T / t * 8, fe = 2048;
    CHECK(none.stored - x.stored == Approx(rows * 2 * fe).epsilon(1e-12));
    CHECK(x.recompute.value() == Approx(rows * (2 * 2 * fe + 2 * fe) / bw).epsilon(1e-12));
    // A dense layer has no experts' activation to recompute.
    CHECK(layer(j, c, tp2_ep8("moe_act"), false).stored == layer(j, c, tp2_ep8("none"), false).stored);
  }
  {  // Together, the sum; beside selective recomputation, the sum and the attention core's forward again: a fused
     // core keeps no scores, but Megatron-Core's checkpointed core attention runs its forward again all the same.
    const auto x = layer(j, c, tp2_ep8("layernorm+moe_act+mla_up_proj"), true);
    const double each = (none.stored - layer(j, c, tp2_ep8("layernorm"), true).stored) +
                        (none.stored - layer(j, c, tp2_ep8("moe_act"), true).stored) +
                        (none.stored - layer(j, c, tp2_ep8("mla_up_proj"), true).stored);
    CHECK(none.stored - x.stored == Approx(each).epsilon(1e-12));
    auto selective = tp2_ep8("layernorm+moe_act+mla_up_proj");
    selective.recompute = recomputation::selective;
    const auto with_selective = layer(j, c, selective, true);
    REQUIRE(x.attn_f > seconds{});
    CHECK(with_selective.recompute.value() == Approx((x.recompute + x.attn_f).value()).epsilon(1e-12));
    CHECK(with_selective.stored == x.stored);  // and keeps the same bytes: there were no scores to drop
  }
}

TEST_CASE("recompute modules: mlp, moe and shared_experts keep their input and run their forward again, in closed form",
          "[model][parallel]") {
  const auto c = test::h100_like();
  const auto j = deepseek_layers(4);
  const double T = 4096, t = 2, h = 7168, bw = 3e12, f = 18432, fe = 2048;
  const auto none_dense = layer(j, c, tp2_ep8("none"), false), none = layer(j, c, tp2_ep8("none"), true);
  REQUIRE(none.all_reduce.value() > 0);
  {  // A dense layer's MLP (DeepSeek-V3's first three): fc1's gated output and fc2's input off, both GEMMs, the
     // activation and the MLP's all-reduce again.
    const auto x = layer(j, c, tp2_ep8("mlp"), false);
    CHECK(none_dense.stored - x.stored == Approx(T * (2 * 2 * f + 2 * f) / t).epsilon(1e-12));
    CHECK(x.modules == Approx(none_dense.stored - x.stored).epsilon(1e-12));
    const double again = model::detail::gemm_time(c, T, 2 * f / t, h).value() +
                         model::detail::gemm_time(c, T, h, f / t).value() + T * (2 * 2 * f + 2 * f) / t / bw +
                         none_dense.all_reduce.value();
    CHECK(x.recompute.value() == Approx(again).epsilon(1e-12));
    CHECK(x.all_reduces == none_dense.all_reduces + 1);
    // Under fp8 fc2 keeps a 1-byte cast, and fc1's 1-byte input becomes the checkpoint's 16-bit copy of it.
    const auto j8 = deepseek_layers(4, true);
    const auto x8 = layer(j8, c, tp2_ep8("mlp"), false), none8 = layer(j8, c, tp2_ep8("none"), false);
    CHECK(none8.stored - x8.stored == Approx(T * (2 * 2 * f + f) / t - T / t * h).epsilon(1e-12));
    // A mixture's layer has no dense MLP to recompute.
    CHECK(layer(j, c, tp2_ep8("mlp"), true).stored == none.stored);
  }
  {  // The whole block: all it keeps but its 16-bit input; the router, experts, shared expert, both all-to-alls,
     // the row copies and the activations again, and the shared expert's all-reduce.
    const auto l = tp2_ep8("moe");
    const auto x = layer(j, c, l, true);
    const auto block = moe_block(j, c, l, T);
    CHECK(none.stored - x.stored == Approx(moe_kept_bytes(j, l, T) - T / t * h * 2).epsilon(1e-12));
    const double rows = T / t * 8,
                 traffic = block.copied.value() + rows * (2 * 2 * fe + 2 * fe) + T * (2 * 2 * fe + 2 * fe) / t;
    CHECK(x.recompute.value() ==
          Approx((block.gemm_f + block.exchange()).value() + traffic / bw + none.all_reduce.value()).epsilon(1e-12));
    CHECK(x.exchanges == none.exchanges + 1);
    CHECK(x.all_reduces == none.all_reduces + 1);
  }
  {  // The shared expert alone: its gated output and fc2's input off, its two GEMMs and all-reduce again.
    const auto x = layer(j, c, tp2_ep8("shared_experts"), true);
    CHECK(none.stored - x.stored == Approx(T * (2 * 2 * fe + 2 * fe) / t).epsilon(1e-12));
    const double again = model::detail::gemm_time(c, T, 2 * fe / t, h).value() +
                         model::detail::gemm_time(c, T, h, fe / t).value() + T * (2 * 2 * fe + 2 * fe) / t / bw +
                         none.all_reduce.value();
    CHECK(x.recompute.value() == Approx(again).epsilon(1e-12));
    CHECK(x.exchanges == none.exchanges);
  }
}

TEST_CASE(
    "recompute modules: mlp, moe and shared_experts where the model lacks them, or moe beside its parts, are refused",
    "[model][parallel]") {
  auto with_dense = deepseek_layers(4);
  with_dense.shape.first_dense_layers = 1;
  CHECK(layout_text(with_dense, tp2_ep8("mlp+moe")).empty());
  CHECK(layout_text(with_dense, tp2_ep8("mlp+moe_act+shared_experts")).empty());
  CHECK(
      layout_text(deepseek_layers(4), tp2_ep8("mlp"))
          .rfind("recompute_modules: mlp recomputes the dense layers' MLPs, and every layer of the model is a mixture",
                 0) == 0);
  const auto dense = dense_job();
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute_modules=mlp")).empty());
  CHECK(layout_text(dense, io::parse_parallel_layout("dp=8,recompute_modules=moe"))
            .rfind("recompute_modules: moe recomputes the mixture-of-experts blocks, and the model has no experts",
                   0) == 0);
  auto no_shared = deepseek_layers(4);
  no_shared.shape.shared_experts = 0;
  CHECK(layout_text(no_shared, tp2_ep8("shared_experts"))
            .rfind("recompute_modules: shared_experts recomputes the shared experts, and the model has none", 0) == 0);
  for (const char* both : {"moe+moe_act", "moe+shared_experts"})
    CHECK(
        layout_text(deepseek_layers(4), tp2_ep8(both)).rfind("recompute_modules: moe recomputes the whole block", 0) ==
        0);
  CHECK(to_string(tp2_ep8("shared_experts+moe_act+mlp+layernorm"))
            .find("recompute_modules=layernorm+moe_act+mlp+shared_experts") != std::string::npos);
}

TEST_CASE("recompute modules: a step pays the second forwards and keeps a layer's outputs back while it runs",
          "[model][parallel]") {
  const auto c = test::h100_like();
  const auto j = deepseek_layers(4);
  const auto l = tp2_ep8("mla_up_proj"), plain = tp2_ep8("none");
  const auto with = price(j, c, l), without = price(j, c, plain);
  const auto x = layer(j, c, l, true);
  // One stage of 4 layers, every one a mixture, 2 micro-batches of one sequence a replica.
  REQUIRE(with.layers_per_stage == 4);
  CHECK(with.recompute.value() == Approx(with.micro_batches * 4 * x.recompute.value()).epsilon(1e-12));
  CHECK(with.step > without.step);
  // Without a pipeline one micro-batch is in flight: four layers keep less, and the layer in its backward holds
  // its rebuilt outputs again.
  CHECK((without.activations - with.activations).value() == Approx(3 * x.modules).epsilon(1e-9));
}

}  // namespace model_recompute_modules_test
