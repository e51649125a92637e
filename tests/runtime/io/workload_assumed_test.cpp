// A workload agrees with itself: a transformer's shape determines its parameter count, a named model is its
// spelt-out shape, and every field a reader left at its default is listed as assumed.

#include <catch2/catch.hpp>

#include <trinity/io.hpp>
#include <trinity/workloads/registry.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/system.hpp>

#include <set>
#include <span>
#include <string>
#include <tuple>

namespace io_workload_assumed_test {

using namespace trinity;
using io::json;

namespace {

workloads::any_workload read(const std::string& text, const plan::system& s = plan::presets::dgx_h100()) {
  return workloads::read_workload(io::parse(text, "w.json"), s);
}
plan::training_workload training(const std::string& text) { return read(text).as<plan::training_workload>(); }
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}

// Llama-2-13B's shape, spelt out (Meta's config.json), and the rest of a training workload.
const std::string shape_13b = R"("layers": 40, "hidden": 5120, "ffn_hidden": 13824, "heads": 40, "kv_heads": 40,
    "vocabulary": 32000)";
const std::string rest = R"("sequence": 4096, "global_batch": 512, "precision": "mixed")";
// The rest of a serving workload, closing its object.
const std::string serve = R"("prompt_tokens": 2000, "output_tokens": 300, "ttft_slo": "500ms", "tpot_slo": "30ms",
    "hit_rate": {"kappa_per_gb": 0.0028, "gamma": 0.127}, "hit_rate_bound": 0.37})";

// Every optional key of `keys` that `given` leaves out, less those that name no default (`not_defaults`),
// must be in `assumed`, and nothing else may be.
void check_every_default_listed(std::span<const io::key> keys, const json& given, const plan::assumptions& assumed,
                                std::set<std::string> not_defaults, std::set<std::string> nested = {}) {
  std::set<std::string> expected;
  for (const auto& k : keys) {
    const std::string name(k.name);
    if (k.need == io::required || given.contains(name) || not_defaults.contains(name)) continue;
    expected.insert(name);
  }
  expected.insert(nested.begin(), nested.end());
  std::set<std::string> listed;
  for (const auto& a : assumed) listed.insert(a.field);
  CHECK(listed == expected);
}

}  // namespace

TEST_CASE("every named shape's parameter count lands within 1% of its publisher's", "[io][model]") {
  std::set<std::string_view> names;
  for (const auto& m : model::named_shapes()) {
    INFO(m.name);
    CHECK(names.insert(m.name).second);
    CHECK_NOTHROW(model::validate(m.shape));
    CHECK(model::parameters(m.shape) == Approx(m.published_parameters).epsilon(0.01));
    CHECK(model::find_named_shape(m.name) == &m);
  }
  CHECK(model::find_named_shape("llama2-14b") == nullptr);
  // GPT-3 175B's shape without its gated MLP would count 233B: the one the issue's user was charged for.
  auto gated = model::shapes::gpt3_175b;
  gated.gated_mlp = true;
  CHECK(model::parameters(gated) > 1.3 * 175e9);
}

TEST_CASE("a training workload with a shape prices the same with and without parameters", "[io][plan]") {
  const auto without = training(R"({"name": "a", "type": "training", )" + shape_13b + ", " + rest + "}");
  const auto with =
      training(R"({"name": "a", "type": "training", "parameters": 13e9, )" + shape_13b + ", " + rest + "}");
  CHECK(without.parameters == model::parameters(*without.shape));
  CHECK(without.parameters == with.parameters);
  CHECK(without.parameters == Approx(13.016e9).epsilon(1e-3));
  CHECK(with.layers == 40);
  CHECK(with.hidden == 5120);
  const auto s = plan::presets::dgx_h100();
  const auto a = plan::plan_training(s, without, plan::default_codecs_for(s));
  const auto b = plan::plan_training(s, with, plan::default_codecs_for(s));
  CHECK(plan::describe(a, s) == plan::describe(b, s));
  CHECK(a.chosen().cost.total.time == b.chosen().cost.total.time);
  CHECK(a.chosen().cost.tier_bytes[0] == b.chosen().cost.tier_bytes[0]);
  CHECK_FALSE(plan::assumed(with.assumed, "parameters"));
}

TEST_CASE("a parameter count more than 1% from the shape's is refused with both figures", "[io]") {
  const auto e = error_of(R"({"name": "a", "type": "training", "parameters": 14e9, )" + shape_13b + ", " + rest + "}");
  CHECK(e.starts_with("parameters: 1.4e+10 differs by 7.561% from the shape's 1.302e+10"));
  CHECK(e.find("Fix: leave parameters out") != std::string::npos);
  // Within 1% it is a check that passes, at either side.
  CHECK(
      error_of(R"({"name": "a", "type": "training", "parameters": 12.9e9, )" + shape_13b + ", " + rest + "}").empty());
  CHECK(
      error_of(R"({"name": "a", "type": "training", "parameters": 13.1e9, )" + shape_13b + ", " + rest + "}").empty());
  // Without a shape it is what the planner reads, and required.
  CHECK(error_of(R"({"name": "a", "type": "training", "layers": 40, "hidden": 5120, "sequence": 4096})")
            .starts_with("parameters: missing; a training workload without a transformer's shape"));
  CHECK(training(
            R"({"name": "a", "type": "training", "parameters": 13e9, "layers": 40, "hidden": 5120, "sequence": 4096})")
            .parameters == 13e9);
}

TEST_CASE("a named model is its spelt-out shape, and refuses a shape field beside it", "[io]") {
  const auto named = training(R"({"name": "a", "type": "training", "model": "llama2-13b", )" + rest + "}");
  const auto spelt = training(R"({"name": "a", "type": "training", )" + shape_13b + ", " + rest + "}");
  REQUIRE(named.shape);
  const auto& m = *named.shape;
  const auto& t = *spelt.shape;
  CHECK(std::tie(m.layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.vocabulary, m.gated_mlp, m.tied_embeddings) ==
        std::tie(t.layers, t.hidden, t.ffn_hidden, t.heads, t.kv_heads, t.vocabulary, t.gated_mlp, t.tied_embeddings));
  CHECK(named.parameters == spelt.parameters);
  CHECK(named.layers == spelt.layers);
  CHECK(named.hidden == spelt.hidden);
  // A spelt-out shape defaults kv_heads and gated_mlp; a named one takes them from its source.
  const auto gpt =
      training(R"({"name": "g", "type": "training", "layers": 96, "hidden": 12288, "ffn_hidden": 49152, "heads": 96,
      "vocabulary": 50257, "sequence": 2048})");
  CHECK(plan::assumed(gpt.assumed, "gated_mlp"));
  CHECK(plan::assumed(gpt.assumed, "kv_heads"));
  const auto gpt_named = training(R"({"name": "g", "type": "training", "model": "gpt3-175b", "sequence": 2048})");
  CHECK_FALSE(plan::assumed(gpt_named.assumed, "gated_mlp"));
  CHECK_FALSE(gpt_named.shape->gated_mlp);
  CHECK(gpt_named.parameters == Approx(175e9).epsilon(0.01));  // untied: the output layer counted too
  for (const char* field : {R"("layers": 40)", R"("hidden": 5120)", R"("heads": 40)", R"("vocabulary": 32000)"})
    CHECK(error_of(R"({"name": "a", "type": "training", "model": "llama2-13b", )" + std::string(field) + ", " + rest +
                   "}")
              .starts_with("model: name a model"));
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "llama2-13b", "gated_mlp": false, )" + rest + "}")
            .starts_with("gated_mlp: is part of the named model's shape"));
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "llama2-12b", )" + rest + "}")
            .starts_with("model: \"llama2-12b\" is not allowed; did you mean \"llama2-13b\"?"));
  // A parameter count beside a named model is checked against it as against a spelt-out one.
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "llama2-70b", "parameters": 70e9, )" + rest + "}")
            .starts_with("parameters: 7e+10 differs by 1.484% from the shape's 6.898e+10"));
}

TEST_CASE("every field a workload reader defaults is listed as assumed, for every kind", "[io][plan]") {
  SECTION("training") {
    const auto j =
        io::parse(R"({"name": "a", "type": "training", "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8,
        "vocabulary": 1000, "sequence": 1024})",
                  "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::training_workload>();
    // type names the kind, model the alternative to a shape, parameters follows from it, and sequence_mix is
    // a choice with no default length.
    // A dense model: experts are the alternative to it, and the other expert keys describe a mixture it is not;
    // likewise a window is the alternative to full attention, and full_attention_frequency describes windows.
    // Prediction modules, like experts, are a part the model has or not: none is assumed when left out.
    check_every_default_listed(io::detail::training_keys, j, w.assumed,
                               {"type",
                                "model",
                                "parameters",
                                "sequence_mix",
                                "experts",
                                "top_k",
                                "moe_ffn_hidden",
                                "shared_experts",
                                "moe_layer_frequency",
                                "first_dense_layers",
                                "capacity_factor",
                                "expert_imbalance",
                                "sliding_window",
                                "full_attention_frequency",
                                "kv_lora_rank",
                                "q_lora_rank",
                                "rope_head_dim",
                                "v_head_dim",
                                "mtp_layers",
                                "fp8_params"});  // fp8_params describes fp8 training only: assumed there (below)
    CHECK(w.shape->mtp_layers == 0);
    CHECK(plan::describe(w.assumed).find("data_parallel 8") != std::string::npos);  // every device of the DGX
    CHECK(plan::describe(w.assumed).find("global_batch 8") != std::string::npos);   // batch 1 × 8 ranks
    CHECK(plan::describe(w.assumed).find("gated_mlp true") != std::string::npos);
    CHECK(plan::describe(w.assumed).find("precision \"mixed\"") != std::string::npos);
    // The fused kernel the device prices by default, named; on a device none was measured on, what stands in.
    CHECK(plan::describe(w.assumed).find("flash_attention true, attention_kernel \"cudnn\"") != std::string::npos);
    const auto a100 = workloads::read_workload(j, plan::presets::dgx_a100()).as<plan::training_workload>();
    CHECK(plan::describe(a100.assumed).find("attention_kernel \"none measured (the GEMM bound)\"") !=
          std::string::npos);
    // A preset names it too, for the system it is paired with.
    const auto preset = workloads::find_preset("llm-7b-train", plan::presets::dgx_h100());
    REQUIRE(preset);
    CHECK(plan::describe(preset->as<plan::training_workload>().assumed).find("attention_kernel \"cudnn\"") !=
          std::string::npos);
    // Without a fused core there is no kernel to assume.
    const auto unfused =
        training(R"({"name": "a", "type": "training", )" + shape_13b + ", " + rest + R"(, "flash_attention": false})");
    CHECK(plan::describe(unfused.assumed).find("attention_kernel") == std::string::npos);
  }
  SECTION("training, with a sliding window") {
    const auto j =
        io::parse(R"({"name": "a", "type": "training", "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8,
        "vocabulary": 1000, "sequence": 1024, "sliding_window": 256})",
                  "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::training_workload>();
    check_every_default_listed(
        io::detail::training_keys, j, w.assumed,
        {"type", "model", "parameters", "sequence_mix", "experts", "top_k", "moe_ffn_hidden", "shared_experts",
         "moe_layer_frequency", "first_dense_layers", "capacity_factor", "expert_imbalance", "kv_lora_rank",
         "q_lora_rank", "rope_head_dim", "v_head_dim", "mtp_layers", "fp8_params"});
    CHECK(plan::describe(w.assumed).find("full_attention_frequency 0") != std::string::npos);
  }
  SECTION("training, a mixture of experts") {
    const auto j =
        io::parse(R"({"name": "a", "type": "training", "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8,
        "vocabulary": 1000, "sequence": 1024, "experts": 8, "top_k": 2})",
                  "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::training_workload>();
    check_every_default_listed(
        io::detail::training_keys, j, w.assumed,
        {"type", "model", "parameters", "sequence_mix", "sliding_window", "full_attention_frequency", "kv_lora_rank",
         "q_lora_rank", "rope_head_dim", "v_head_dim", "mtp_layers", "fp8_params"});
    CHECK(plan::describe(w.assumed).find("moe_ffn_hidden 4096") != std::string::npos);
    CHECK(plan::describe(w.assumed).find("capacity_factor \"none (dropless)\"") != std::string::npos);
    CHECK(w.shape->experts == 8);
    CHECK(w.shape->top_k == 2);
  }
  SECTION("diffusion") {
    const auto j = io::parse(R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": 1e14, "reuse_depth": 10,
        "latent_size": "16MB", "hit_rate": {"kappa_per_gb": 0.05, "gamma": 0.7}})",
                             "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::diffusion_workload>();
    // A trace is the alternative to the curve given.
    check_every_default_listed(io::detail::diffusion_keys, j, w.assumed, {"type", "trace"});
  }
  SECTION("edge") {
    const auto j = io::parse(R"({"name": "e", "type": "edge", "frames_per_second": 30, "analysis_flops": 7.9e10,
        "feature_size": "3MB"})",
                             "w.json");
    const auto w = workloads::read_workload(j, plan::presets::edge_5g_cloud()).as<plan::edge_workload>();
    // bitrate sets the first encoding's bits per pixel only when given; there is nothing to default.
    check_every_default_listed(io::detail::edge_keys, j, w.assumed, {"type", "bitrate"});
  }
  SECTION("llm-serve, spelt out") {
    const auto j = io::parse(R"({"name": "s", "type": "llm-serve", "layers": 32, "hidden": 4096, "ffn_hidden": 14336,
        "heads": 32, "vocabulary": 128256, "prompt_tokens": 2000, "output_tokens": 300, "ttft_slo": "1s",
        "tpot_slo": "50ms", "hit_rate": {"kappa_per_gb": 0.0028, "gamma": 0.127}})",
                             "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::serving_workload>();
    // prefill_efficiency left out is the device's calibrated GEMM curve: the system's measurement, not a default.
    check_every_default_listed(io::detail::serving_keys, j, w.assumed, {"type", "model", "prefill_efficiency"});
  }
  SECTION("hetero-train") {
    const auto j = io::parse(R"({"name": "h", "type": "hetero-train", "producer": {"name": "L40S"}, "link": "1GB/s",
        "encode_high": 4, "encode_low": 1,
        "phases": [{"sample": "50MB", "produce_per_second": 1, "consume_per_second": 2}]})",
                             "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::hetero_train_workload>();
    check_every_default_listed(io::detail::hetero_train_keys, j, w.assumed, {"type"},
                               {"producer.power", "producer.price_per_hour", "phases[0].samples"});
  }
  SECTION("data-curation") {
    const auto j = io::parse(R"({"name": "c", "type": "data-curation", "cpu_workers": 16, "operators": [
        {"name": "split", "on": "cpu", "seconds": 0.4},
        {"name": "caption", "on": "device", "flops": 6.5e13, "memory": "32GB"}]})",
                             "w.json");
    const auto w = workloads::read_workload(j, plan::presets::dgx_h100()).as<plan::data_curation_workload>();
    check_every_default_listed(io::detail::data_curation_keys, j, w.assumed, {"type"},
                               {"operators[0].share", "operators[1].share", "operators[1].efficiency"});
  }
}

TEST_CASE("a given field is never listed as assumed", "[io]") {
  const auto w = training(
      R"({"name": "a", "type": "training", "model": "llama2-7b", "sequence": 4096, "batch": 2, "data_parallel": 4,
      "error_budget": 0.02, "global_batch": 64, "flash_attention": false, "dropout": true, "overlap": true, "cross_entropy": "te",
      "precision": "fp32", "stack": "megatron-core"})");
  CHECK(w.assumed.empty());
  CHECK(plan::describe(w.assumed) == "none");
}

TEST_CASE("a system lists the device and tier fields it defaulted, and none a preset gave", "[io]") {
  const auto s = io::read_system(io::parse(R"({"name": "box",
      "device": {"compute": "989TFLOPs", "power": "700W", "count": 8},
      "tiers": ["h100-hbm3", {"name": "pool", "capacity": "1TB", "bandwidth": "64GB/s"}],
      "interconnect": {"preset": "nvlink5"}})",
                                           "box.json"));
  std::set<std::string> listed;
  for (const auto& a : s.assumed) listed.insert(a.field);
  CHECK(listed == std::set<std::string>{"device.idle_power", "device.gemm.peak_fraction", "device.gemm.half_size",
                                        "device.gemm.ceiling", "tiers[1].latency", "tiers[1].energy"});
  // The DGX H100 preset carries its measured GEMM curve and idle power: nothing assumed.
  CHECK(plan::presets::find("dgx-h100")->assumed.empty());
  // The edge preset's devices have no measured curve.
  CHECK(plan::assumed(plan::presets::find("edge-5g-cloud")->assumed, "device.gemm.peak_fraction"));
}

TEST_CASE("a layout lists the keys it left out with the values priced", "[io]") {
  const auto l = io::parse_parallel_layout("tp=2,pp=4,dp=8");
  const auto a = io::parallel_layout_defaults("tp=2,pp=4,dp=8", l);
  std::set<std::string> listed;
  for (const auto& x : a) listed.insert(x.field);
  // A pipeline's schedule too (pp=4): the default's name.
  CHECK(listed == std::set<std::string>{"vpp", "cp", "mbs", "recompute", "sp", "zero", "offload", "codec", "schedule"});
  CHECK(plan::describe(a) ==
        "vpp 1, cp 1, mbs 1, recompute \"none\", sp \"off\", zero 0, offload \"off\", codec "
        "\"none\", schedule \"1f1b\"");
  // Full recomputation without recompute_layers is every layer: assumed, as Megatron-Core asks for a method.
  const auto full = io::parse_parallel_layout("tp=2,dp=8,recompute=full");
  CHECK(
      plan::describe(io::parallel_layout_defaults("tp=2,dp=8,recompute=full", full)).find("recompute_layers \"all\"") !=
      std::string::npos);
  const auto block = io::parse_parallel_layout("tp=2,dp=8,recompute=full,recompute_layers=3");
  CHECK(plan::describe(io::parallel_layout_defaults("tp=2,dp=8,recompute=full,recompute_layers=3", block))
            .find("recompute_layers") == std::string::npos);
  // A count without its method is the block method's: assumed, and not where the method is given.
  CHECK(plan::describe(io::parallel_layout_defaults("tp=2,dp=8,recompute=full,recompute_layers=3", block))
            .find("recompute_method \"block\"") != std::string::npos);
  const auto uniform =
      io::parse_parallel_layout("tp=2,dp=8,recompute=full,recompute_layers=3,recompute_method=uniform");
  CHECK(plan::describe(io::parallel_layout_defaults(
                           "tp=2,dp=8,recompute=full,recompute_layers=3,recompute_method=uniform", uniform))
            .find("recompute_method") == std::string::npos);
}

TEST_CASE("sliding-window attention's keys are read by the training reader, and refused by field elsewhere", "[io]") {
  const auto w = training(R"({"name": "a", "type": "training", )" + shape_13b +
                          R"(, "sliding_window": 4096, "full_attention_frequency": 4, )" + rest + "}");
  CHECK(w.shape->sliding_window == 4096);
  CHECK(w.shape->full_attention_frequency == 4);
  CHECK(model::windowed_layer_count(*w.shape) == 30);  // 10 of the 40 layers attend in full
  // A window alone: every layer windowed, and said so.
  const auto every =
      training(R"({"name": "a", "type": "training", )" + shape_13b + R"(, "sliding_window": 4096, )" + rest + "}");
  CHECK(every.shape->full_attention_frequency == 0);
  CHECK(model::windowed_layer_count(*every.shape) == 40);
  CHECK(plan::describe(every.assumed).find("full_attention_frequency 0") != std::string::npos);
  CHECK(error_of(R"({"name": "a", "type": "training", )" + shape_13b + R"(, "full_attention_frequency": 2, )" + rest +
                 "}")
            .starts_with("full_attention_frequency: describes sliding-window attention; give sliding_window too"));
  CHECK(error_of(R"({"name": "a", "type": "training", )" + shape_13b +
                 R"(, "sliding_window": 64, "full_attention_frequency": 1, )" + rest + "}")
            .starts_with("full_attention_frequency: must be 0 (every layer windowed) or from 2 to the 40 layers"));
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "llama2-13b", "sliding_window": 4096, )" + rest + "}")
            .starts_with("sliding_window: is part of the named model's shape"));
  CHECK(
      error_of(R"({"name": "a", "type": "training", "layers": 40, "hidden": 5120, "sliding_window": 64, )" + rest + "}")
          .starts_with("heads: missing"));
  // The named GPT-OSS carries its window.
  const auto oss = training(R"({"name": "a", "type": "training", "model": "gpt-oss-120b", )" + rest + "}");
  CHECK(oss.shape->sliding_window == 128);
  CHECK(model::windowed_layer_count(*oss.shape) == 18);
  // The serving model does not count a window (it bounds the KV cache): its reader does not know the key.
  CHECK(error_of(R"({"name": "s", "type": "llm-serve", )" + shape_13b + R"(, "sliding_window": 4096, )" + serve)
            .starts_with("sliding_window: unknown key"));
  model::serving_replica r;
  r.shape = model::shapes::gpt_oss_120b;
  r.shape.experts = r.shape.top_k = r.shape.moe_ffn_hidden = 0;  // dense, but still windowed
  CHECK_THROWS_WITH(model::validate(r), Catch::StartsWith("sliding_window: is priced by the training step model only"));
}

TEST_CASE("latent attention's keys are read by the training reader, and refused by field elsewhere", "[io]") {
  const std::string mla = R"("layers": 4, "hidden": 7168, "ffn_hidden": 18432, "heads": 128, "head_dim": 128,
      "vocabulary": 129280, "kv_lora_rank": 512)";
  const auto w = training(R"({"name": "a", "type": "training", )" + mla +
                          R"(, "q_lora_rank": 1536, "rope_head_dim": 64, )" + rest + "}");
  CHECK(w.shape->kv_lora_rank == 512);
  CHECK(w.shape->q_lora_rank == 1536);
  CHECK(w.shape->rope_head_dim == 64);
  CHECK(w.shape->value_dim() == 128);
  CHECK(w.parameters == model::parameters(*w.shape));
  // What it leaves out is said: v_head_dim as head_dim.
  CHECK(plan::describe(w.assumed).find("v_head_dim 128") != std::string::npos);
  const auto plain = training(R"({"name": "a", "type": "training", )" + mla + ", " + rest + "}");
  CHECK(plan::describe(plain.assumed).find("q_lora_rank 0, rope_head_dim 0, v_head_dim 128") != std::string::npos);
  CHECK(error_of(R"({"name": "a", "type": "training", )" + shape_13b + R"(, "q_lora_rank": 1536, )" + rest + "}")
            .starts_with("q_lora_rank: describes multi-head latent attention; give kv_lora_rank too"));
  CHECK(error_of(R"({"name": "a", "type": "training", )" + mla + R"(, "kv_heads": 8, )" + rest + "}")
            .starts_with("kv_heads: must equal heads (128) under latent attention"));
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "deepseek-v3", "kv_lora_rank": 256, )" + rest + "}")
            .starts_with("kv_lora_rank: is part of the named model's shape"));
  CHECK(training(R"({"name": "a", "type": "training", "model": "deepseek-v3", )" + rest + "}").shape->kv_lora_rank ==
        512);
  CHECK(
      error_of(R"({"name": "s", "type": "llm-serve", )" + mla + ", " + serve).starts_with("kv_lora_rank: unknown key"));
  model::serving_replica r;
  r.shape = model::shapes::deepseek_v3;
  r.shape.experts = r.shape.top_k = r.shape.moe_ffn_hidden = r.shape.shared_experts = r.shape.first_dense_layers = 0;
  CHECK_THROWS_WITH(model::validate(r), Catch::StartsWith("kv_lora_rank: is priced by the training step model only"));
}

TEST_CASE("a mixture of experts' keys are read, and refused by field where they cannot be", "[io][moe]") {
  const std::string moe = R"("experts": 8, "top_k": 2, "moe_ffn_hidden": 2048, "shared_experts": 1,
      "moe_layer_frequency": 2)";
  const auto w = training(R"({"name": "a", "type": "training", )" + shape_13b + ", " + moe + ", " + rest + "}");
  CHECK(w.shape->experts == 8);
  CHECK(w.shape->moe_ffn_hidden == 2048);
  CHECK(w.shape->shared_experts == 1);
  CHECK(w.shape->moe_layer_frequency == 2);
  CHECK(w.parameters == model::parameters(*w.shape));
  CHECK(error_of(R"({"name": "a", "type": "training", "experts": 8, )" + shape_13b + ", " + rest + "}")
            .starts_with("top_k: missing; a mixture of experts needs the experts a token runs"));
  CHECK(error_of(R"({"name": "a", "type": "training", "shared_experts": 1, )" + shape_13b + ", " + rest + "}")
            .starts_with("shared_experts: describes a mixture of experts; give experts"));
  CHECK(error_of(R"({"name": "a", "type": "training", "capacity_factor": 0.5, )" + shape_13b + ", " + moe + ", " +
                 rest + "}")
            .starts_with("capacity_factor: must be at least 1"));
  CHECK(error_of(R"({"name": "a", "type": "training", "expert_imbalance": 9, )" + shape_13b + ", " + moe + ", " + rest +
                 "}")
            .starts_with("expert_imbalance: must be from 1 (balanced) to the 8 experts"));
  CHECK(error_of(R"({"name": "a", "type": "training", "capacity_factor": 1.25, )" + shape_13b + ", " + rest + "}")
            .starts_with("capacity_factor: describes a mixture of experts' routing; the model has no experts"));
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "mixtral-8x7b", "top_k": 1, )" + rest + "}")
            .starts_with("top_k: is part of the named model's shape"));
  CHECK(error_of(R"({"name": "a", "type": "training", "experts": 8, "top_k": 9, )" + shape_13b + ", " + rest + "}")
            .starts_with("top_k: must be from 1 to the 8 experts"));
  const auto named =
      training(R"({"name": "a", "type": "training", "model": "mixtral-8x7b", "capacity_factor": 1.25, )" + rest + "}");
  CHECK(named.shape->experts == 8);
  CHECK(named.capacity_factor == 1.25);
}

TEST_CASE("multi-token prediction modules are read from a shape, and refused by field where they cannot be",
          "[io][model]") {
  const auto w = training(R"({"name": "a", "type": "training", )" + shape_13b + R"(, "mtp_layers": 1, )" + rest + "}");
  CHECK(w.shape->mtp_layers == 1);
  CHECK(w.parameters == model::parameters(*w.shape));
  CHECK(training(R"({"name": "a", "type": "training", "model": "deepseek-v3", )" + rest + "}").shape->mtp_layers == 1);
  CHECK(error_of(R"({"name": "a", "type": "training", "model": "deepseek-v3", "mtp_layers": 0, )" + rest + "}")
            .starts_with("mtp_layers: is part of the named model's shape"));
  CHECK(error_of(R"({"name": "a", "type": "training", )" + shape_13b + R"(, "mtp_layers": 41, )" + rest + "}")
            .starts_with("mtp_layers: must be at most the 40 layers"));
  CHECK(error_of(R"({"name": "a", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "mtp_layers": 1,
      "sequence": 4096})")
            .starts_with("mtp_layers: describes a transformer's shape"));
  CHECK(error_of(R"({"name": "s", "type": "llm-serve", )" + shape_13b + R"(, "mtp_layers": 1, )" + serve)
            .starts_with("mtp_layers: unknown key"));
  // A replica built in code is refused too: its weights would count the module's.
  model::serving_replica r;
  r.shape = model::shapes::llama3_8b;
  r.shape.mtp_layers = 1;
  CHECK_THROWS_WITH(model::validate(r), Catch::StartsWith("mtp_layers: is priced by the training step model only"));
}

TEST_CASE("fp8_params is read under fp8, assumed false there, and refused by field elsewhere", "[io]") {
  const std::string fp8 = R"("sequence": 4096, "global_batch": 512, "precision": "fp8")";
  const auto assumed = training(R"({"name": "a", "type": "training", )" + shape_13b + ", " + fp8 + "}");
  CHECK_FALSE(assumed.fp8_params);
  CHECK(plan::describe(assumed.assumed).find("fp8_params false") != std::string::npos);
  const auto kept =
      training(R"({"name": "a", "type": "training", "fp8_params": true, )" + shape_13b + ", " + fp8 + "}");
  CHECK(kept.fp8_params);
  CHECK(plan::describe(kept.assumed).find("fp8_params") == std::string::npos);
  CHECK(plan::job_of(kept, 8).fp8_params);
  CHECK(error_of(R"({"name": "a", "type": "training", "fp8_params": true, )" + shape_13b + ", " + rest + "}")
            .starts_with("fp8_params: keeps the GEMM weights in fp8, and this workload trains in bf16"));
  // Without a transformer's shape nothing prices the GEMM weights: refused as the other shape keys are.
  CHECK(
      error_of(R"({"name": "a", "type": "training", "fp8_params": true, "parameters": 7e9, "layers": 32, "hidden": 4096,
      "sequence": 4096, "precision": "fp8"})")
          .starts_with("fp8_params: describes a transformer's shape"));
}

}  // namespace io_workload_assumed_test
