// The transformer's shape as the planner sees it, against closed forms and published counts: Llama-3-70B's
// parameters from its config, Narayanan et al.'s iteration FLOPs, Korthikanti et al.'s activation table, the KV
// cache per token and the pipeline bubble.
#include <catch2/catch.hpp>

#include <trinity/model/named_shapes.hpp>
#include <trinity/model/transformer.hpp>

namespace model_transformer_test {

using namespace trinity;
using model::recomputation;

TEST_CASE("Llama-3-70B's parameters follow from its config: 70,553,706,496", "[model][transformer]") {
  // Per layer: attention 8192·(8192 + 2·8·128) + 8192² = 150,994,944; MLP 3·8192·28672 = 704,643,072; norms 16,384.
  // 80 layers: 68,452,352,000; embedding and untied output 2·128256·8192 = 2,101,346,304; final norm 8,192.
  CHECK(model::layer_parameters(model::shapes::llama3_70b) == 855'654'400.0);
  CHECK(model::parameters(model::shapes::llama3_70b) == 70'553'706'496.0);
  // Llama-3-8B the same way: 32·218,112,000 + 2·128256·4096 + 4096 = 8,030,261,248 (Meta: "8B").
  CHECK(model::parameters(model::shapes::llama3_8b) == 8'030'261'248.0);
}

TEST_CASE("a training iteration costs Narayanan et al.'s 96·B·s·l·h²·(1 + s/6h + V/16lh) with recomputation",
          "[model][transformer]") {
  const auto& m = model::shapes::gpt3_175b;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
  const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  CHECK(model::training_flops(m, B, s, recomputation::full).value() == Approx(eq3).epsilon(1e-12));
  // Without recomputation the layers take three passes, not four; selective adds the attention scores back.
  const double layers3 = 72 * B * s * l * h * h * (1 + s / (6 * h)), logits = 6 * B * s * h * V;
  CHECK(model::training_flops(m, B, s, recomputation::none).value() == Approx(layers3 + logits).epsilon(1e-12));
  CHECK(model::training_flops(m, B, s, recomputation::selective).value() ==
        Approx(layers3 + logits + 4 * B * s * s * l * h).epsilon(1e-12));
}

TEST_CASE("activations per layer follow Korthikanti et al.'s Table 2", "[model][transformer]") {
  const auto& m = model::shapes::gpt3_175b;  // h = 12288, a = 96
  const double s = 2048, b = 1, t = 8, sbh = s * b * 12288;
  const double scores = 5 * 96 * s / (12288 * t);  // 10
  CHECK(scores == 10);
  const auto act = [&](bool sp, recomputation r, double tp = 8) {
    return model::activation_bytes_per_layer(m, s, b, tp, sp, r).value();
  };
  CHECK(act(false, recomputation::none) == sbh * (10 + 24 / t + scores));
  CHECK(act(true, recomputation::none) == sbh * (34 / t + scores));
  CHECK(act(false, recomputation::selective) == sbh * (10 + 24 / t));
  CHECK(act(true, recomputation::selective) == sbh * 34 / t);
  CHECK(act(false, recomputation::full) == 2 * sbh);
  CHECK(act(true, recomputation::full) == 2 * sbh / t);
  // Without tensor parallelism the table's first row: s·b·h·(34 + 5·a·s/h).
  CHECK(act(false, recomputation::none, 1) == sbh * (34 + 5 * 96 * s / 12288));
  // Sequence parallelism with selective recomputation: the 5x saving the paper reports over storing all
  // at t = 8 (23 sbh -> 4.25 sbh here).
  CHECK(act(false, recomputation::none) / act(true, recomputation::selective) == Approx(23.0 / 4.25));
}

TEST_CASE("the KV cache per token and a prefill's FLOPs, decode step by decode step", "[model][transformer]") {
  CHECK(model::kv_bytes_per_token(model::shapes::llama3_70b, 2).value() == 327'680);  // 2·80·8·128·2
  CHECK(model::kv_bytes_per_token(model::shapes::llama3_8b, 2).value() == 131'072);   // 2·32·8·128·2
  CHECK(model::kv_bytes_per_token(model::shapes::llama3_70b, 1).value() == 163'840);  // fp8 / int8
  // A prefill of n tokens is the n single-token steps that would produce the same cache.
  const auto& m = model::shapes::llama3_8b;
  double steps = 0;
  for (int i = 0; i < 64; ++i) steps += model::forward_flops(m, 1, i).value();
  CHECK(model::forward_flops(m, 64).value() == Approx(steps).epsilon(1e-12));
  // And the block at depth d after d·512 cached tokens costs what the prefill of (d+1)·512 adds to d·512's.
  CHECK(model::forward_flops(m, 512, 1024).value() ==
        Approx(model::forward_flops(m, 1536).value() - model::forward_flops(m, 1024).value()).epsilon(1e-12));
}

TEST_CASE("the pipeline bubble is (p - 1)/(m·v), and a bad shape is refused by field", "[model][transformer]") {
  CHECK(model::pipeline_bubble(8, 32) == 7.0 / 32);
  CHECK(model::pipeline_bubble(8, 32, 3) == 7.0 / 96);
  CHECK(model::pipeline_bubble(1, 1) == 0);
  CHECK_THROWS_WITH(model::pipeline_bubble(4, 0), Catch::Contains("micro_batches"));
  auto bad = model::shapes::llama3_70b;
  bad.kv_heads = 3;
  CHECK_THROWS_WITH(model::validate(bad), Catch::Contains("kv_heads") && Catch::Contains("divide heads"));
  bad = model::shapes::llama3_70b;
  bad.heads = 100;
  CHECK_THROWS_WITH(model::validate(bad), Catch::Contains("heads") && Catch::Contains("whole heads"));
  CHECK_NOTHROW(model::validate(model::shapes::gpt3_175b));
}

TEST_CASE("a shape whose heads are not the hidden size counts its projections at heads x head_dim", "[model]") {
  // Qwen3-32B (its config.json: 64 layers, hidden 5120, intermediate 25600, 64 heads and 8 KV heads of 128,
  // vocabulary 151936, untied): 64 x 128 = 8192 query width against a hidden size of 5120. Its model card gives
  // 32.8B parameters (the per-head q and k norms, 256 numbers a layer, are left out here).
  model::transformer_shape q{64, 5120, 25600, 64, 8, 151936, true, false, 128};
  model::validate(q);
  CHECK(q.head_dim() == 128);
  const double h = 5120, hq = 8192, kv = 1024, f = 25600;
  CHECK(model::layer_parameters(q) == h * (hq + 2 * kv) + hq * h + 3 * h * f + 2 * h);
  CHECK(model::parameters(q) == Approx(32.8e9).epsilon(0.005));
  // Without head_dim the width is hidden / heads, as before, and heads must divide hidden.
  model::transformer_shape plain = q;
  plain.head_size = 0;
  CHECK(plain.head_dim() == 80);
  CHECK(model::layer_parameters(plain) == h * (h + 2 * 8 * 80) + h * h + 3 * h * f + 2 * h);
  plain.heads = 48;
  CHECK_THROWS_WITH(model::validate(plain), Catch::Contains("or give head_dim"));
}

TEST_CASE("latent attention counts its down- and up-projections: DeepSeek-V3's 671B", "[model]") {
  const auto& m = model::shapes::deepseek_v3;
  model::validate(m);
  CHECK(m.mla());
  CHECK(m.query_key_dim() == 192);
  CHECK(m.value_dim() == 128);
  // Queries 7168 → 1536 → 128 × 192; keys and values 7168 → 512 + 64 rotary, 512 → 128 × (128 + 128); the
  // output 128 × 128 → 7168.
  const double h = 7168, a = 128;
  CHECK(model::attention_parameters(m) == h * 1536 + 1536 * a * 192 + h * (512 + 64) + 512 * a * 256 + a * 128 * h);
  CHECK(model::attention_parameters(m) == 187'105'280.0);
  // 671B in the main model, as DeepSeek counts it, and its one prediction module's 11.6B of its own: a mixture
  // layer, the 2h → h projection and three norms.
  CHECK(m.mtp_layers == 1);
  CHECK(model::last_layer_moe(m));
  CHECK(model::mtp_module_parameters(m) == model::moe_layer_parameters(m) + 2 * h * h + 3 * h);
  CHECK(model::parameters(m) - model::mtp_module_parameters(m) == Approx(671e9).epsilon(0.01));
  CHECK(model::mtp_module_parameters(m) == Approx(11.61e9).epsilon(0.001));
  // The core's FLOPs a pair: QKᵀ over 192 and the weighted sum over 128, 2·128·(192 + 128) = 4 × 128 × 160.
  CHECK(model::attention_core_width(m) == 128 * 160);
  // Without a query latent the queries come straight from hidden.
  auto straight = m;
  straight.q_lora_rank = 0;
  CHECK(model::attention_parameters(m) - model::attention_parameters(straight) ==
        h * 1536 + 1536 * a * 192 - h * a * 192);
  // Refusals by field.
  auto bad = model::shapes::llama3_8b;
  bad.rope_head_dim = 64;
  CHECK_THROWS_WITH(model::validate(bad), Catch::StartsWith("rope_head_dim: describes multi-head latent attention"));
  auto grouped = m;
  grouped.kv_heads = 8;
  CHECK_THROWS_WITH(model::validate(grouped), Catch::StartsWith("kv_heads: must equal heads (128) under latent"));
}

TEST_CASE("a multi-token prediction module: one more layer of the last one's kind, its projection, the logits again",
          "[model][transformer]") {
  // GPT's shape (f = 4h, untied): a layer holds 12h² + 2h; a module that and its 2h → h projection and three norms.
  model::transformer_shape gpt{24, 2048, 8192, 16, 16, 51200, false, false};
  const double h = 2048, V = 51200, s = 2048, batch = 8, tokens = batch * s;
  auto mtp = gpt;
  mtp.mtp_layers = 1;
  model::validate(mtp);
  CHECK(model::mtp_module_parameters(mtp) == 12 * h * h + 2 * h + 2 * h * h + 3 * h);
  CHECK(model::parameters(mtp) - model::parameters(gpt) == 14 * h * h + 5 * h);
  // Training: the layer's 3 passes (4 with full recomputation) of 24h² GEMM FLOPs and 4hs of attention a token,
  // and the projection's 4h² and the logits' 2Vh in 3 passes.
  using model::recomputation;
  CHECK((model::training_flops(mtp, batch, s, recomputation::none) -
         model::training_flops(gpt, batch, s, recomputation::none))
            .value() == Approx(tokens * (84 * h * h + 12 * h * s + 6 * V * h)).epsilon(1e-12));
  CHECK((model::training_flops(mtp, batch, s, recomputation::full) -
         model::training_flops(gpt, batch, s, recomputation::full))
            .value() == Approx(tokens * (108 * h * h + 16 * h * s + 6 * V * h)).epsilon(1e-12));
  // A forward pass for serving runs no module.
  CHECK(model::forward_flops(mtp, 100, 50) == model::forward_flops(gpt, 100, 50));
  // The module's layer is the last layer's kind: a mixture every other layer from the first leaves the 24th
  // dense; every layer a mixture makes it one.
  auto moe = mtp;
  moe.experts = 8, moe.top_k = 2, moe.moe_layer_frequency = 2;
  CHECK(!model::last_layer_moe(moe));
  CHECK(model::mtp_module_parameters(moe) == model::mtp_module_parameters(mtp));
  moe.moe_layer_frequency = 1;
  CHECK(model::last_layer_moe(moe));
  CHECK(model::mtp_module_parameters(moe) == model::moe_layer_parameters(moe) + 2 * h * h + 3 * h);
  CHECK(model::mtp_module_parameters(moe, true) == model::moe_layer_parameters(moe, 2) + 2 * h * h + 3 * h);
  mtp.mtp_layers = 25;
  CHECK_THROWS_WITH(model::validate(mtp), Catch::StartsWith("mtp_layers: must be at most the 24 layers"));
}

}  // namespace model_transformer_test
