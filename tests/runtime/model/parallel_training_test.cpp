#include <catch2/catch.hpp>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/parallel_fit.hpp>
#include <trinity/model/parallel_training.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>

#include "test_cluster.hpp"

namespace model_parallel_training_test {

using namespace trinity;
using namespace trinity::model;

namespace {
// The verdict as the text a user reads ("field: what; fix"), empty where the layout breaks no rule.
std::string layout_text(const training_job& j, const parallel_layout& l) { return message_of(check_layout(j, l)); }

// A per-stage count of a layout over `layers` layers (recomputed_stage_layers, checkpointed_stage_inputs): the
// first, middle, last and emptiest middle stage's.
using four = std::array<std::size_t, 4>;
four per_stage(std::size_t layers, const std::string& layout,
               stage_layers (*count)(const parallel_layout&, const stage_layers&)) {
  const auto l = io::parse_parallel_layout(layout);
  const auto x = count(l, pipeline_stage_layers(layers, l));
  return {x.first, x.middle, x.last, x.middle_fewest};
}

// GPT's shape as Korthikanti et al. count it: MLP 4h, every head its own KV.
training_job gpt(std::size_t layers, std::size_t h, std::size_t a, std::size_t s, std::size_t batch) {
  training_job j;
  j.shape = {layers, h, 4 * h, a, a, 51200, false, false};
  j.sequence = s;
  j.global_batch = batch;
  return j;
}

// A device that runs every GEMM at its peak and moves no bytes for the layers' memory-bound work: the step is
// then the FLOP count over the peak, plus what the optimizer and the loss move.
training_cluster ideal() {
  training_cluster c;
  c.peak = flops_per_second{1e15};
  c.gemm = {1.0, 0.0};
  c.memory_bandwidth = bytes_per_second{2e12};
  c.memory = bytes{80e9};
  c.domain = 8;
  c.fast = {seconds{1e-6}, bytes_per_second{300e9}};
  c.slow = {seconds{5e-6}, bytes_per_second{25e9}};
  c.elementwise_traffic = 0;
  return c;
}

}  // namespace

TEST_CASE("parallel training: a layer keeps Korthikanti et al.'s activation bytes, plus the norms' statistics",
          "[model][parallel]") {
  const auto j = gpt(4, 4096, 32, 2048, 1);
  for (const double t : {1.0, 2.0, 4.0, 8.0})
    for (const bool sp : {false, true})
      for (const auto r : {recomputation::none, recomputation::selective, recomputation::full}) {
        if (sp && t == 1.0) continue;
        const double s = 2048, b = 2;
        const double stats = r == recomputation::full ? 0.0 : 16.0 * s * b / (sp ? t : 1.0);
        CHECK(layer_activation_bytes(j, s, s, b, t, sp, r) ==
              Approx(activation_bytes_per_layer(j.shape, s, b, t, sp, r).value() + stats).epsilon(1e-12));
      }
}

TEST_CASE("parallel training: the stored activations of every stack the H100 probe ran, to the byte",
          "[model][parallel]") {
  std::ifstream in(std::string(TRINITY_SOURCE_DIR) + "/bench/results/transformer-probe-h100.json");
  REQUIRE(in);
  const auto probe = nlohmann::json::parse(in);
  REQUIRE(probe.at("layers").size() == 36);
  for (const auto& r : probe.at("layers")) {
    const std::size_t h = r.at("hidden"), a = r.at("heads"), L = r.at("layers"), s = r.at("sequence"),
                      b = r.at("micro_batch");
    const auto j = gpt(L, h, a, s, b);
    const std::string rc = r.at("recompute");
    const auto rec = rc == "none"        ? recomputation::none
                     : rc == "selective" ? recomputation::selective
                                         : recomputation::full;
    // The probe allocated the first layer's input before it measured.
    const double model =
        static_cast<double>(L) * layer_activation_bytes(j, double(s), double(s), double(b), 1, false, rec) -
        2.0 * double(s * b * h);
    INFO(h << " " << s << " " << b << " " << rc);
    CHECK(model == r.at("stored_bytes").get<double>());
  }
}

TEST_CASE("parallel training: on an ideal device one GPU's step is the FLOP count over the peak", "[model][parallel]") {
  const auto j = gpt(8, 2048, 16, 1024, 4);
  const auto c = ideal();
  for (const auto r : {recomputation::none, recomputation::selective, recomputation::full}) {
    parallel_layout l;
    l.recompute = r;
    const auto cost = price(j, c, l);
    const double psi = parameters(j.shape);
    const double optimizer = psi * (2.0 * 12 + 2 + 2) / 2e12;
    // Megatron's cross entropy: 38 bytes a logit forward, 14 backward, over 1024 × 51200 logits a micro-batch.
    const double loss = 4 * (38.0 + 14.0) * 1024 * 51200 / 2e12;
    CHECK(cost.step.value() ==
          Approx(training_flops(j.shape, 4, 1024, r).value() / 1e15 + optimizer + loss).epsilon(1e-9));
    CHECK(cost.elementwise.value() == Approx(loss).epsilon(1e-12));
    CHECK(cost.micro_batches == 4);
    CHECK(cost.mfu ==
          Approx(training_flops(j.shape, 4, 1024, recomputation::none).value() / (cost.step.value() * 1e15)));
    // Weights, gradients and Adam's states: 16 bytes a parameter; one micro-batch's activations and fp32 logits.
    const double act =
        8 * layer_activation_bytes(j, 1024, 1024, 1, 1, false, r) + 4.0 * 1024 * 51200 +
        (r == recomputation::full ? layer_activation_bytes(j, 1024, 1024, 1, 1, false, recomputation::none) -
                                        layer_activation_bytes(j, 1024, 1024, 1, 1, false, r)
         : r == recomputation::selective ? layer_activation_bytes(j, 1024, 1024, 1, 1, false, recomputation::none) -
                                               layer_activation_bytes(j, 1024, 1024, 1, 1, false, r)
                                         : 0.0);
    CHECK(cost.device_bytes.value() == Approx(16.0 * psi + act).epsilon(1e-12));
  }
}

TEST_CASE("parallel training: bytes sent per GPU are the mechanisms' exact counts", "[model][parallel]") {
  const auto j = gpt(8, 2048, 16, 1024, 32);
  const auto c = ideal();
  parallel_layout l{4, 2, 1, 1, 2, 2, recomputation::full, false, 0};
  const auto cost = price(j, c, l);
  const double mb = 32.0 / (2 * 2), T = 2 * 1024.0, h = 2048, L = 4;
  // Six all-reduces a layer with full recomputation, each sending 2(t-1)/t of the 16-bit activation.
  CHECK(cost.tp_bytes.value() == Approx(mb * L * 6 * 2.0 * 3 / 4 * T * h * 2 + mb * 1 * 3.0 / 4 * T * h * 2));
  // Pipeline: the activation split t ways per micro-batch; with two stages each rank sends one way only
  // (forward from the first, backward from the second). Without sequence parallelism the receiver all-gathers
  // the other 3/4 over its tensor group, which the tensor bytes count.
  CHECK(cost.pp_bytes.value() == Approx(mb * 1 * T * h * 2 / 4));
  // Data parallel, DDP: an all-reduce of the stage's 16-bit gradients over 2 ranks.
  // The last stage binds: its layers, the untied output layer and the final norm.
  const double psi = L * layer_parameters(j.shape) / 4 + 51200.0 * h / 4 + h;
  CHECK(cost.dp_bytes.value() == Approx(2.0 * 0.5 * psi * 2));
  l.zero_stage = 1;
  CHECK(price(j, c, l).dp_bytes.value() == Approx(0.5 * psi * (2 + 2)));
  CHECK(price(j, c, l).optimizer_states.value() == Approx(psi * 12 / 2));
}

TEST_CASE("parallel training: the pipeline bubble is (p - 1)/(m v) of the micro-batches' time", "[model][parallel]") {
  const auto j = gpt(16, 2048, 16, 1024, 16);
  const auto c = ideal();
  for (const std::size_t v : {1u, 2u, 4u}) {
    parallel_layout l{1, 4, v, 1, 1, 1, recomputation::none, false, 0};
    const auto cost = price(j, c, l);
    const double busy = (cost.step - cost.bubble - cost.optimizer - cost.dp_comm).value();
    CHECK(cost.bubble.value() / busy == Approx(3.0 / (16.0 * static_cast<double>(v))));
  }
}

TEST_CASE("parallel training: F pipeline flushes pay F bubbles and F data-parallel reductions", "[model][parallel]") {
  auto j = gpt(16, 2048, 16, 1024, 64);  // 32 micro-batches a step over dp=2
  const auto c = ideal();
  for (const bool overlap : {false, true}) {
    j.overlap_dp = overlap;
    const auto one = price(j, c, io::parse_parallel_layout("pp=4,dp=2,zero=1"));
    const auto l = io::parse_parallel_layout("pp=4,dp=2,zero=1,flushes=4");
    CHECK(l.flushes == 4);
    CHECK(to_string(l).find(",flushes=4") != std::string::npos);
    CHECK(io::parse_parallel_layout(to_string(l)) == l);
    const auto four = price(j, c, l);
    CHECK(four.flushes == 4);
    // The bubble, (p - 1)/v of a micro-batch's time, once a flush; the reduction and the gather after each.
    CHECK(four.bubble.value() == Approx(4 * one.bubble.value()).epsilon(1e-12));
    CHECK(four.dp_collectives.value() == Approx(4 * one.dp_collectives.value()).epsilon(1e-12));
    CHECK(four.dp_comm.value() == Approx(4 * one.dp_comm.value()).epsilon(1e-12));
    CHECK(four.dp_bytes.value() == Approx(4 * one.dp_bytes.value()).epsilon(1e-12));
    // The micro-batches' own work and the update are the step's once, however it is cut.
    CHECK((four.gemm == one.gemm && four.attention == one.attention && four.pp_comm == one.pp_comm &&
           four.optimizer == one.optimizer));
    CHECK((four.step - one.step).value() == Approx(3 * (one.bubble + one.dp_comm).value()).epsilon(1e-9));
    // 8 micro-batches a flush fill the 4 stages as 32 do: the same activations.
    CHECK(four.activations == one.activations);
  }
  // 2 a flush keep fewer in flight on the first stage: as a step of 2 micro-batches does.
  const auto sixteen = price(j, c, io::parse_parallel_layout("pp=4,dp=2,zero=1,flushes=16"));
  auto short_step = j;
  short_step.global_batch = 4;
  const auto two = price(short_step, c, io::parse_parallel_layout("pp=4,dp=2,zero=1"));
  CHECK(sixteen.activations == two.activations);
  CHECK(sixteen.activations < price(j, c, io::parse_parallel_layout("pp=4,dp=2,zero=1")).activations);
}

TEST_CASE("parallel training: flushes that cannot cut the step are refused, naming them", "[model][parallel]") {
  const auto j = gpt(16, 2048, 16, 1024, 64);
  CHECK(layout_text(j, io::parse_parallel_layout("dp=2,flushes=2")).rfind("flushes: a flush is a pipeline", 0) == 0);
  CHECK(layout_text(j, io::parse_parallel_layout("pp=4,dp=2,flushes=3"))
            .rfind("flushes: the 32 micro-batches a step do not split into 3 flushes; give a flushes that divides 32",
                   0) == 0);
  // Interleaved, each flush's micro-batches are a multiple of pp: 2 a flush are not.
  CHECK(layout_text(j, io::parse_parallel_layout("pp=4,vpp=2,dp=2,flushes=16"))
            .rfind("vpp: the interleaved schedule needs the 2 micro-batches a flush to be a multiple of pp=4", 0) == 0);
  CHECK(layout_text(j, io::parse_parallel_layout("pp=4,vpp=2,dp=2,flushes=8")).empty());
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=4,flushes=0"),
                    Catch::StartsWith("parallelism: flushes=0: must be a whole number from 1"));
  CHECK(layout_text(j, io::parse_parallel_layout("pp=4,dp=2,zero=3")).find("zero=1 with flushes=N") !=
        std::string::npos);
}

TEST_CASE("parallel training: a wider tensor-parallel group that leaves the fast domain pays the slow link",
          "[model][parallel]") {
  const auto j = gpt(8, 4096, 32, 2048, 8);
  const auto c = ideal();
  const auto inside = price(j, c, {8, 1, 1, 1, 1, 1, recomputation::none, true, 0});
  const auto across = price(j, c, {16, 1, 1, 1, 1, 1, recomputation::none, true, 0});
  // Twice the ranks halve each one's bytes but cross 12x slower links.
  CHECK(across.tp_comm > 4.0 * inside.tp_comm);
}

TEST_CASE("parallel training: layouts that cannot run are refused, naming the degree", "[model][parallel]") {
  const auto j = gpt(8, 2048, 16, 1024, 8);
  const auto c = ideal();
  CHECK(layout_text(j, {3, 1, 1, 1, 1, 1, recomputation::none, false, 0}).rfind("tp:", 0) == 0);
  CHECK(layout_text(j, {1, 2, 1, 1, 1, 1, recomputation::none, false, 3}).rfind("zero:", 0) == 0);
  CHECK(layout_text(j, {1, 1, 2, 1, 1, 1, recomputation::none, false, 0}).rfind("vpp:", 0) == 0);
  CHECK(layout_text(j, {1, 1, 1, 1, 3, 1, recomputation::none, false, 0}).rfind("global_batch:", 0) == 0);
  CHECK(layout_text(j, {1, 1, 1, 1, 1, 1, recomputation::none, true, 0}).rfind("sp:", 0) == 0);
  CHECK(layout_text(j, {1, 1, 1, 3, 1, 1, recomputation::none, false, 0}).rfind("cp:", 0) == 0);
  CHECK(layout_text(j, {1, 2, 2, 1, 1, 1, recomputation::none, false, 0}).empty());
  CHECK_THROWS_WITH(price(j, c, {3, 1, 1, 1, 1, 1, recomputation::none, false, 0}),
                    Catch::Contains("tp") && Catch::Contains("does not divide the 16 heads"));
}

TEST_CASE("parallel training: a broken rule comes typed, its field, value, what and fix apart", "[model][parallel]") {
  const auto j = gpt(16, 2048, 16, 1024, 64);
  const auto c = ideal();
  const auto flushes = check_layout(j, io::parse_parallel_layout("pp=4,dp=2,flushes=3"));
  REQUIRE(flushes);
  CHECK(*flushes == layout_violation{"flushes", "3", "the 32 micro-batches a step do not split into 3 flushes",
                                     "give a flushes that divides 32"});
  CHECK(flushes->message() ==
        "flushes: the 32 micro-batches a step do not split into 3 flushes; give a flushes that divides 32");
  const auto tp = check_layout(j, {3, 1, 1, 1, 1, 1, recomputation::none, false, 0});
  REQUIRE(tp);
  CHECK(*tp == layout_violation{"tp", "3", "3 does not divide the 16 heads", ""});
  // The step model throws it on its field, whatever the text holds: a pipeline_layout's own colons included.
  try {
    (void)price(j, c, io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL"));
    FAIL("a layout that places 2 of 16 layers was priced");
  } catch (const invalid_input& e) {
    const auto broken = check_layout(j, io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL"));
    REQUIRE(broken);
    CHECK(broken->field == "pipeline_layout");
    CHECK(broken->value == "Et|tL");
    CHECK(e.field() == "pipeline_layout");
    CHECK(e.problem() == broken->problem());
    CHECK(e.problem() == "places 2 layers (t), and the model has 16");
  }
  const auto stated = check_layout(j, io::parse_parallel_layout("pp=4,first_stage_layers=3,last_stage_layers=4"));
  REQUIRE(stated);
  CHECK(*stated == layout_violation{"first_stage_layers", "3",
                                    "the other 2 stages cannot share the 9 layers left evenly (Megatron-Core requires "
                                    "it)",
                                    "state counts that leave a multiple of 2"});
  CHECK_FALSE(check_layout(j, io::parse_parallel_layout("pp=4,dp=2,flushes=8")));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // 0.1's name gives the same text, until 0.3.0.
  CHECK(layout_problem(j, io::parse_parallel_layout("pp=4,dp=2,flushes=3")) == flushes->message());
  CHECK(layout_problem(j, io::parse_parallel_layout("pp=4,dp=2,flushes=8")).empty());
#pragma GCC diagnostic pop
}

TEST_CASE("parallel layout: parsed from the command line's form and refused by key", "[model][parallel][io]") {
  const auto l = io::parse_parallel_layout("tp=8,pp=8,vpp=3,cp=2,dp=4,mbs=2,recompute=selective,sp=on,zero=1");
  CHECK(l == parallel_layout{8, 8, 3, 2, 4, 2, recomputation::selective, true, 1});
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  CHECK(io::parse_parallel_layout("dp=4") == parallel_layout{1, 1, 1, 1, 4, 1, recomputation::none, false, 0});
  CHECK_THROWS_WITH(io::parse_parallel_layout("tq=8"), Catch::Contains("\"tq\" is not a key") && Catch::Contains("tp"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("tp=8,tp=4"), Catch::Contains("given twice"));
  const auto off = io::parse_parallel_layout("tp=2,dp=4,zero=1,offload=on");
  CHECK(off.offload);
  CHECK(io::parse_parallel_layout(to_string(off)) == off);
  CHECK_FALSE(io::parse_parallel_layout("tp=2,offload=off").offload);
  CHECK_THROWS_WITH(io::parse_parallel_layout("offload=yes"), Catch::Contains("offload=yes: use on or off"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("tp=0"), Catch::Contains("1 to 1000000"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("tp=8x"), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("recompute=some"), Catch::Contains("none, selective or full"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("sp=yes"), Catch::Contains("on or off"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("zero=4"), Catch::Contains("0 to 3"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("tp=8,"), Catch::Contains("empty item"));
  const auto coded = io::parse_parallel_layout("tp=2,dp=4,zero=1,codec=int8-ef");
  CHECK(coded.codec == "int8-ef");
  CHECK(to_string(coded) == "tp=2,pp=1,vpp=1,cp=1,dp=4,mbs=1,recompute=none,sp=off,zero=1,codec=int8-ef");
  CHECK(io::parse_parallel_layout(to_string(coded)) == coded);
  CHECK(io::parse_parallel_layout("dp=4,codec=none").codec.empty());
  CHECK(io::parse_parallel_layout("dp=4,codec=identity").codec.empty());
  CHECK_THROWS_WITH(io::parse_parallel_layout("dp=4,codec="), Catch::Contains("codec=: name a gradient codec"));
}

TEST_CASE("parallel step: a gradient codec shrinks the data-parallel reduction by its ratio and adds its coding",
          "[model][parallel]") {
  auto j = gpt(8, 2048, 16, 2048, 64);
  const auto c = ideal();
  const compressor_cost int8{"int8-ef", 3.9, bytes_per_second{1.5e12}, bytes_per_second{2.2e12}, 0.0065, false, false};
  const compressor_cost topk{"topk-1%-ef", 50, bytes_per_second{4e11}, bytes_per_second{3e12}, 0.95, false, true};
  for (const int z : {0, 1, 2}) {
    parallel_layout l{2, 2, 1, 1, 8, 1, recomputation::none, true, z};
    const auto plain = price(j, c, l);
    l.codec = "int8-ef";
    const auto coded = price(j, c, l, int8);
    INFO("ZeRO-" << z);
    // Same compute, same memory; only the gradient's frames and their coding differ.
    CHECK(coded.gemm == plain.gemm);
    CHECK(coded.device_bytes == plain.device_bytes);
    const double psi = plain.stage_parameters, n = 8, share = (n - 1) / n;
    const double frames = psi * 4.0 / 3.9, held = psi * 2.0;  // bf16 gradients uncoded
    CHECK(coded.gradient_frame.value() == Approx(frames));
    CHECK(plain.gradient_frame.value() == Approx(held));
    const double ring = z == 0 ? 2.0 * share : share;
    CHECK((plain.dp_bytes - coded.dp_bytes).value() == Approx(ring * (held - frames)).epsilon(1e-12));
    // The ring's reduce-scatter encodes and decodes (n − 1)/n of the fp32 gradient; DDP's all-gather encodes
    // once more in all and decodes every chunk.
    const double encodes = z == 0 ? 1.0 : share, decodes = z == 0 ? share + 1.0 : share;
    CHECK(coded.codec.value() == Approx(encodes * psi * 4.0 / 1.5e12 + decodes * psi * 4.0 / 2.2e12).epsilon(1e-12));
    CHECK(plain.codec.value() == 0);
    // Not overlapped: the step moves by exactly the reduction's change and the coding.
    CHECK((coded.step - plain.step).value() ==
          Approx((coded.dp_comm - plain.dp_comm + coded.codec).value()).epsilon(1e-9));
    CHECK(coded.dp_comm < plain.dp_comm);
  }
  SECTION("frames that cannot be summed are all-gathered whole") {
    parallel_layout l{2, 1, 1, 1, 8, 1, recomputation::none, true, 0};
    l.codec = "topk-1%-ef";
    const auto r = price(j, c, l, topk);
    CHECK(r.dp_bytes.value() == Approx(7.0 * r.stage_parameters * 4.0 / 50).epsilon(1e-12));
  }
  SECTION("the codec's cost must be the layout's own") {
    parallel_layout l{2, 1, 1, 1, 8, 1, recomputation::none, true, 0};
    CHECK_THROWS_WITH(price(j, c, l, int8), Catch::Contains("codec") && Catch::Contains("no codec"));
    l.codec = "int8-ef";
    CHECK_THROWS_WITH(price(j, c, l), Catch::Contains("\"int8-ef\"") && Catch::Contains("Fix"));
    CHECK_THROWS_WITH(price(j, c, l, topk), Catch::Contains("topk-1%-ef"));
  }
  SECTION("without ranks that share weights there is nothing to reduce") {
    parallel_layout l{8, 1, 1, 1, 1, 1, recomputation::none, true, 0};
    j.global_batch = 8;
    l.codec = "int8-ef";
    const auto r = price(j, c, l, int8);
    CHECK(r.dp_bytes.value() == 0);
    CHECK(r.codec.value() == 0);
  }
}

TEST_CASE("parallel fits: recover the parameters that made their data", "[model][parallel][fit]") {
  // GEMMs of 18 shapes, each at the rate `truth` gives it on a device of 1 PFLOP/s.
  const auto priced_by = [](const gemm_efficiency& truth) {
    std::vector<gemm_point> points;
    for (const double m : {1024.0, 4096.0, 16384.0})
      for (const double n : {1024.0, 2048.0, 8192.0})
        for (const double k : {1024.0, 4096.0}) points.push_back({m, n, k, 1e15 * truth(m, n, k)});
    return points;
  };
  SECTION("a GEMM curve from GEMMs it priced") {
    const auto points = priced_by({0.82, 300});
    const auto fit = fit_gemm(points, 1e15);
    CHECK(fit.model.half_size == 300);
    CHECK(fit.model.peak_fraction == Approx(0.82).epsilon(1e-9));
    CHECK(fit.median_error == Approx(0).margin(1e-9));
    CHECK(fit.model.ceiling == 1);  // nothing capped the data: no ceiling below the peak
  }
  SECTION("a GEMM curve that a ceiling caps, exactly and against a brute-force search") {
    auto points = priced_by({0.95, 300, 0.7});
    const auto exact = fit_gemm(points, 1e15);
    CHECK(exact.model.half_size == 300);
    CHECK(exact.model.peak_fraction == Approx(0.95).epsilon(1e-9));
    CHECK(exact.model.ceiling == Approx(0.7).epsilon(1e-9));
    CHECK(exact.median_error == Approx(0).margin(1e-9));

    // Each point off by its own few percent: at the x0 it chose, no (e, c) on a grid of steps of 0.002 fits better
    // than the fit's closed-form split does.
    for (std::size_t i = 0; i < points.size(); ++i)
      points[i].flops_per_second *= 1.0 + 0.06 * std::sin(static_cast<double>(i) * 1.7);
    const auto noisy = fit_gemm(points, 1e15);
    const auto error = [&](const gemm_efficiency& g) {
      double sum = 0;
      for (const auto& p : points) sum += std::pow(std::log(1e15 * g(p.m, p.n, p.k) / p.flops_per_second), 2);
      return sum;
    };
    const double fitted = error(noisy.model);
    double grid = -1;
    for (int e = 1; e <= 500; ++e)
      for (int c = 1; c <= 500; ++c) {
        const double err = error({e * 0.002, noisy.model.half_size, c * 0.002});
        if (grid < 0 || err < grid) grid = err;
      }
    CHECK(fitted <= grid + 1e-12);
    CHECK(fitted < error({noisy.model.peak_fraction, noisy.model.half_size, 1.0}));  // the ceiling earns its place
    CHECK(noisy.model.ceiling < 0.75);
  }
  SECTION("kappa from layer stacks it priced") {
    auto c = ideal();
    c.gemm = {0.8, 200};
    c.elementwise_traffic = 1.37;
    std::vector<measured_layers> runs;
    for (const std::size_t s : {1024u, 2048u}) {
      measured_layers m{gpt(4, 2048, 16, s, 2), {}, 4, {}};
      m.layout.micro_batch = 2;
      m.measured = predicted(m, c);
      runs.push_back(m);
    }
    CHECK(fit_elementwise_traffic(runs, c) == Approx(1.37));
  }
  SECTION("a GEMM curve from whole steps it priced") {
    auto c = ideal();
    c.elementwise_traffic = 1.5;
    c.gemm = {0.85, 192};
    std::vector<measured_step> runs;
    for (const std::size_t t : {1u, 2u, 8u}) {
      measured_step m{gpt(8, 4096, 32, 2048, 16), {t, 1, 1, 1, 2, 1, recomputation::full, false, 0}, c, {}};
      m.measured = price(m.job, m.cluster, m.layout).step;
      runs.push_back(m);
    }
    runs.push_back({gpt(8, 1024, 8, 512, 16), {1, 1, 1, 1, 1, 1, recomputation::none, false, 0}, c, {}});
    runs.back().measured = price(runs.back().job, c, runs.back().layout).step;
    const auto g = fit_gemm_to_steps(runs);
    CHECK(g.peak_fraction == Approx(0.85));
    CHECK(g.half_size == 192);

    // Steps no curve prices exactly (each off by its own few percent): the search, which leaves a point once its
    // partial error is no better than the best, lands on the point the whole grid's sums put first.
    const double off[] = {1.07, 0.94, 1.03, 0.9};
    for (std::size_t i = 0; i < runs.size(); ++i) runs[i].measured = runs[i].measured * off[i];
    gemm_efficiency want{};
    double want_err = -1;
    for (int x = 0; x <= 256; ++x)
      for (int e = 80; e <= 200; ++e) {
        double err = 0;
        for (const auto& r : runs) {
          auto rc = r.cluster;
          rc.gemm = {e * 0.005, x * 4.0};
          const double lr = std::log(price(r.job, rc, r.layout).step / r.measured);
          err += lr * lr;
        }
        if (want_err < 0 || err < want_err) want_err = err, want = {e * 0.005, x * 4.0};
      }
    const auto noisy = fit_gemm_to_steps(runs);
    CHECK(noisy.peak_fraction == want.peak_fraction);
    CHECK(noisy.half_size == want.half_size);
    CHECK_FALSE(noisy.half_size == 192);  // the noise moved the best point: the check above is not the recovery's
  }
}

TEST_CASE("parallel training: offload moves the optimizer states to the host tier and prices their traffic",
          "[model][parallel]") {
  const auto j = gpt(8, 2048, 16, 1024, 32);
  auto c = ideal();
  parallel_layout l{2, 2, 1, 1, 4, 1, recomputation::none, true, 1};
  const auto on_device = price(j, c, l);
  l.offload = true;
  CHECK_THROWS_WITH(price(j, c, l), Catch::StartsWith("offload: the system has no tier below device memory"));
  c.host = {seconds{2e-6}, bytes_per_second{64e9}};
  c.host_memory = bytes{250e9};
  const auto off = price(j, c, l);
  const double psi = off.stage_parameters, shard = psi / 4;  // ZeRO-1 over the 4 data-parallel ranks
  // The states leave the device, whole; nothing else moves.
  CHECK(off.optimizer_states.value() == 0);
  CHECK(off.offloaded.value() == Approx(shard * 12));
  CHECK((on_device.device_bytes - off.device_bytes).value() == Approx(shard * 12));
  CHECK(off.parameters == on_device.parameters);
  CHECK(off.gradients == on_device.gradients);
  // Each step the gradient shard (2 bytes) goes down and the parameter shard (2 bytes) comes back, and the
  // update reads and writes its states at the host's rate instead of HBM's.
  CHECK(off.offload_bytes.value() == Approx(shard * 4));
  CHECK(off.offload.value() == Approx(2e-6 + shard * 4 / 64e9));
  CHECK(off.optimizer.value() == Approx(shard * (2 * 12 + 2 + 2) / 64e9));
  CHECK(on_device.optimizer.value() == Approx(shard * (2 * 12 + 2 + 2) / 2e12));
  CHECK((off.step - on_device.step).value() ==
        Approx((off.offload + off.optimizer - on_device.optimizer).value()).epsilon(1e-9));
  CHECK(to_string(l) == "tp=2,pp=2,vpp=1,cp=1,dp=4,mbs=1,recompute=none,sp=on,zero=1,offload=on");
}

TEST_CASE("a pipeline that does not divide the layers gives its first and last stages fewer", "[model]") {
  // Llama 3 405B's 126 layers over 16 stages of 4 chunks: middle stages 8, first and last 7 (Meta's report).
  const auto l3 = pipeline_stage_layers(126, 16, 4);
  CHECK(l3.first == 7);
  CHECK(l3.middle == 8);
  CHECK(l3.last == 7);
  const auto even = pipeline_stage_layers(80, 4, 5);
  CHECK((even.first == 20 && even.middle == 20 && even.last == 20));
  const auto odd = pipeline_stage_layers(10, 4);
  CHECK((odd.first == 2 && odd.middle == 3 && odd.last == 2));
  const auto two = pipeline_stage_layers(9, 2);
  CHECK((two.first == 5 && two.last == 4));
  for (std::size_t layers = 4; layers <= 40; ++layers)
    for (std::size_t p = 2; p <= 8; ++p) {
      if (p > layers) continue;
      const auto x = pipeline_stage_layers(layers, p);
      if (p > 2 && x.middle * (p - 2) >= layers) {  // no Megatron split: every stage at the fullest's count
        CHECK((x.first == x.middle && x.last == x.middle));
        continue;
      }
      CHECK(x.first + x.middle * (p - 2) + x.last == layers);
      CHECK(x.first <= x.middle);
      CHECK(x.last <= x.first);
    }
  const auto crowded = pipeline_stage_layers(80, 32);
  CHECK((crowded.first == 3 && crowded.middle == 3 && crowded.last == 3));
  // The binding stage, with a small vocabulary: 10 layers over 4 stages bind on a middle stage of 3, 12 on the
  // last, 3 layers and the logits.
  auto small_vocabulary = [](std::size_t layers) {
    auto j = gpt(layers, 1024, 16, 1024, 8);
    j.shape.vocabulary = 1024;
    return j;
  };
  const auto l10 = price(small_vocabulary(10), ideal(), io::parse_parallel_layout("pp=4,dp=1"));
  CHECK(l10.layers_per_stage == 3);
  CHECK(!l10.last_binds);
  CHECK((l10.pipeline_stages == 4 && l10.stages.first == 2 && l10.stages.middle == 3 && l10.stages.last == 2));
  CHECK(l10.stages.middle_fewest == 3);  // Megatron's remainder split leaves the middle stages equal
  const auto l12 = price(small_vocabulary(12), ideal(), io::parse_parallel_layout("pp=4,dp=1"));
  CHECK(l12.layers_per_stage == 3);
  CHECK(l12.last_binds);
  CHECK((l12.stages.first == 3 && l12.stages.middle == 3 && l12.stages.last == 3));
  CHECK(l10.step < l12.step);
  const auto one = price(small_vocabulary(12), ideal(), io::parse_parallel_layout("pp=1,dp=4"));
  CHECK((one.pipeline_stages == 1 && one.last_binds && one.layers_per_stage == 12));
}

TEST_CASE("a layout that states its first and last stages' layers places them there, the rest evenly",
          "[model][parallel]") {
  const auto split = [](std::size_t layers, const std::string& layout) {
    const auto x = pipeline_stage_layers(layers, io::parse_parallel_layout(layout));
    return std::array{x.first, x.middle, x.last};
  };
  using three = std::array<std::size_t, 3>;
  // NeMo's DeepSeek-V3 script: 61 layers on 16 stages, 3 on the first and 2 on the last, as the default split.
  CHECK(split(61, "pp=16,first_stage_layers=3,last_stage_layers=2") == three{3, 4, 2});
  CHECK(split(61, "pp=16") == three{3, 4, 2});
  CHECK(split(10, "pp=4,first_stage_layers=1,last_stage_layers=3") == three{1, 3, 3});
  CHECK(split(10, "pp=4,first_stage_layers=4") == three{4, 2, 2});  // the other three share 6
  CHECK(split(10, "pp=4,last_stage_layers=1") == three{3, 3, 1});
  CHECK(split(9, "pp=2,first_stage_layers=4,last_stage_layers=5") == three{4, 4, 5});
  CHECK(split(9, "pp=2,last_stage_layers=3") == three{6, 6, 3});
  CHECK(split(16, "pp=4,vpp=2,first_stage_layers=2,last_stage_layers=2") == three{2, 6, 2});
  // Bridge's later DeepSeek-V3 layout Et|(tt|)*30mL on 8 stages of 4 chunks: 7, 8 and 6, as the default splits.
  CHECK(split(61, "pp=8,vpp=4,first_stage_layers=7,last_stage_layers=6") == three{7, 8, 6});
  CHECK(split(61, "pp=8,vpp=4") == three{7, 8, 6});
  const auto l = io::parse_parallel_layout("pp=4,first_stage_layers=1,last_stage_layers=3");
  CHECK(to_string(l) ==
        "tp=1,pp=4,vpp=1,cp=1,dp=1,mbs=1,recompute=none,sp=off,zero=0,first_stage_layers=1,"
        "last_stage_layers=3");
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=4,first_stage_layers=0"),
                    Catch::Contains("first_stage_layers=0") && Catch::Contains("1 to 1000000"));

  // Megatron-Core's rules, each refused naming the key.
  const auto j = gpt(10, 1024, 16, 1024, 8);
  const auto problem = [&](const std::string& layout) { return layout_text(j, io::parse_parallel_layout(layout)); };
  CHECK(problem("pp=4,first_stage_layers=1,last_stage_layers=3").empty());
  CHECK_THAT(problem("dp=8,first_stage_layers=2"), Catch::StartsWith("first_stage_layers: a layout without pipeline"));
  CHECK_THAT(problem("pp=4,first_stage_layers=6,last_stage_layers=5"),
             Catch::StartsWith("first_stage_layers: 11 layers on the stated stages are more than the model's 10"));
  CHECK_THAT(problem("pp=4,last_stage_layers=2"),
             Catch::StartsWith("last_stage_layers: the other 3 stages cannot share the 8 layers left evenly"));
  CHECK_THAT(problem("pp=2,first_stage_layers=10"),
             Catch::StartsWith("first_stage_layers: 10 layers on the stated stages leave the other stage none"));
  CHECK_THAT(problem("pp=4,first_stage_layers=5,last_stage_layers=5"),
             Catch::StartsWith("first_stage_layers: 10 layers on the stated stages leave the other 2 stages none"));
  CHECK_THAT(problem("pp=2,first_stage_layers=4,last_stage_layers=4"),
             Catch::Contains("pp=2 the first and last stages are all of them") && Catch::Contains("add up to 10"));
  parallel_layout zero_layers{1, 4, 1, 1, 1};
  zero_layers.last_stage_layers = 0;
  CHECK_THAT(layout_text(j, zero_layers), Catch::StartsWith("last_stage_layers: a stage must hold at least one"));

  // Priced on the busiest stage: stating the default split prices the same step to the bit; taking a layer off
  // the last stage for the first (10 layers on 4 stages: 3, 3, 3, 1) leaves the busiest at 3 layers, the same
  // passes, though the first stage now holds the most weights (3 layers and the embedding), whose reduction and
  // update the step waits for; a middle stage of 4 (1, 4, 4, 1) binds on it.
  auto small = j;
  small.shape.vocabulary = 1024;
  const auto plain = price(small, ideal(), io::parse_parallel_layout("pp=4"));
  const auto same = price(small, ideal(), io::parse_parallel_layout("pp=4,first_stage_layers=2,last_stage_layers=2"));
  CHECK(same.step == plain.step);
  CHECK(same.device_bytes == plain.device_bytes);
  const auto front = price(small, ideal(), io::parse_parallel_layout("pp=4,first_stage_layers=3,last_stage_layers=1"));
  CHECK((front.stages.first == 3 && front.stages.middle == 3 && front.stages.last == 1));
  CHECK(front.stages.middle_fewest == 3);
  CHECK((front.gemm == plain.gemm && front.attention == plain.attention && front.bubble == plain.bubble));
  CHECK(!front.last_binds);
  CHECK(plain.stage_parameters == Approx(3 * layer_parameters(small.shape)));
  CHECK(front.stage_parameters == Approx(3 * layer_parameters(small.shape) + 1024.0 * 1024));  // and V·h
  CHECK(front.step > plain.step);
  const auto heavy = price(small, ideal(), io::parse_parallel_layout("pp=4,first_stage_layers=1,last_stage_layers=1"));
  CHECK((heavy.layers_per_stage == 4 && !heavy.last_binds));
  CHECK(heavy.step.value() == Approx(plain.step.value() * 4.0 / 3.0).epsilon(0.02));
}

TEST_CASE("block recomputation prices a chunk's first n layers as recomputed in full and the rest as kept",
          "[model][parallel]") {
  // Eight layers on one GPU, one chunk: n of them recomputed. Every part of the step is a sum over layers, so
  // the step and the activations move from recompute=none to recompute=full by n/8 of the way, exactly; the
  // backward of a recomputed layer holds its whole set again, once.
  const auto j = gpt(8, 2048, 16, 1024, 4);
  const auto c = ideal();
  const auto none = price(j, c, io::parse_parallel_layout("recompute=none"));
  const auto full = price(j, c, io::parse_parallel_layout("recompute=full"));
  const double kept = layer_activation_bytes(j, 1024, 1024, 1, 1, false, recomputation::none),
               stored = layer_activation_bytes(j, 1024, 1024, 1, 1, false, recomputation::full);
  for (std::size_t n = 1; n <= 8; ++n) {
    INFO("recompute_layers=" << n);
    const auto block = price(j, c, io::parse_parallel_layout("recompute=full,recompute_layers=" + std::to_string(n)));
    const double share = static_cast<double>(n) / 8.0;
    CHECK(block.step.value() == Approx(none.step.value() + share * (full.step - none.step).value()).epsilon(1e-12));
    CHECK(block.recompute.value() == Approx(share * full.recompute.value()).epsilon(1e-12));
    CHECK(block.activations.value() ==
          Approx(none.activations.value() - static_cast<double>(n) * (kept - stored) + (kept - stored)).epsilon(1e-12));
    CHECK((block.recomputed.first == n && block.recomputed.last == n));
  }
  // More than a chunk holds is all of it: full recomputation, to the bit.
  const auto all = price(j, c, io::parse_parallel_layout("recompute=full,recompute_layers=12"));
  CHECK(all.step == full.step);
  CHECK(all.device_bytes == full.device_bytes);
  CHECK(full.recomputed == full.stages);
  CHECK(none.recomputed == stage_layers{});

  // A prediction module's layer is not recomputed under the block method (Megatron-Core skips it there), and
  // is under full recomputation: past a chunk's layers, the block differs from full by the module's second
  // forward a micro-batch, on the last stage, which binds.
  auto mtp = j;
  mtp.shape.mtp_layers = 1;
  const auto every = price(mtp, c, io::parse_parallel_layout("pp=2,recompute=full"));
  const auto most = price(mtp, c, io::parse_parallel_layout("pp=2,recompute=full,recompute_layers=4"));
  REQUIRE((every.last_binds && most.last_binds));
  CHECK(most.recomputed == every.recomputed);
  const double module_again = layer(mtp, c, io::parse_parallel_layout("pp=2,recompute=full")).recompute.value();
  CHECK(every.recompute.value() - most.recompute.value() == Approx(4 * module_again).epsilon(1e-12));
  CHECK(most.activations > every.activations);

  // Tensor-parallel bytes: a recomputed layer's forward all-reduces twice more, six a layer against four.
  const auto wide = gpt(8, 2048, 16, 1024, 32);
  auto l = io::parse_parallel_layout("tp=4,pp=2,dp=2,mbs=2,recompute=full,recompute_layers=3");
  const auto r = price(wide, c, l);
  const double mb = 32.0 / (2 * 2), T = 2 * 1024.0, h = 2048;
  CHECK(r.tp_bytes.value() == Approx(mb * (3 * 6 + 1 * 4) * 2.0 * 3 / 4 * T * h * 2 + mb * 1 * 3.0 / 4 * T * h * 2));
}

TEST_CASE("a recomputed attention sends its keys and values around the context ring again", "[model][parallel]") {
  // Eight layers, cp = 2: a pass of a layer sends 3(c − 1) + 1 = 4 K-and-V chunks; an attention run again (full
  // recomputation, selective, or the first n layers of a block) sends its forward's c − 1 = 1 again.
  const auto j = gpt(8, 2048, 16, 2048, 4);
  const auto c = ideal();
  const auto bytes_of = [&](const std::string& layout) {
    return price(j, c, io::parse_parallel_layout("cp=2," + layout)).cp_bytes.value();
  };
  const double none = bytes_of("recompute=none");
  REQUIRE(none > 0);
  CHECK(model::context_ring_blocks(2) == 4.0);
  CHECK(model::context_ring_blocks(4, true) == 13.0);  // 4·3 + 1: the forward's three hops twice
  CHECK(model::context_ring_blocks(1, true) == 0.0);
  CHECK(bytes_of("recompute=full") == Approx(none * 5.0 / 4.0).epsilon(1e-12));
  CHECK(bytes_of("recompute=selective") == Approx(none * 5.0 / 4.0).epsilon(1e-12));
  for (std::size_t n = 1; n <= 8; ++n) {
    INFO("recompute_layers=" << n);
    CHECK(bytes_of("recompute=full,recompute_layers=" + std::to_string(n)) ==
          Approx(none * (5.0 * static_cast<double>(n) + 4.0 * static_cast<double>(8 - n)) / 32.0).epsilon(1e-12));
  }
  CHECK(bytes_of("recompute=none,recompute_modules=layernorm") == none);

  // Selective recomputation reruns the attention with its ring: on a link slow enough to leave the ring exposed,
  // its recomputed time grows by exactly the forward ring's exposed time, as the link is all that differs.
  auto slow = c;
  slow.fast.bandwidth = bytes_per_second{1e9};
  const auto selective = io::parse_parallel_layout("cp=2,recompute=selective");
  const auto on_slow = layer(j, slow, selective), on_fast = layer(j, c, selective);
  REQUIRE(on_slow.cp_f > on_fast.cp_f);
  CHECK((on_slow.recompute - on_fast.recompute).value() ==
        Approx((on_slow.cp_f - on_fast.cp_f).value()).epsilon(1e-12));
}

TEST_CASE("block recomputation counts n layers in each chunk of a stage, as a stated layout places them",
          "[model][parallel]") {
  const auto counts = [](std::size_t layers, const std::string& layout) {
    return per_stage(layers, layout, recomputed_stage_layers);
  };
  // 16 layers on 2 stages of 2 chunks of 4: 3 of each chunk is 6 a stage; 5 is all of them.
  CHECK(counts(16, "pp=2,vpp=2,recompute=full,recompute_layers=3") == four{6, 6, 6, 6});
  CHECK(counts(16, "pp=2,vpp=2,recompute=full,recompute_layers=5") == four{8, 8, 8, 8});
  // Llama 3 405B's 126 layers on 16 stages of 4 chunks: the end stages' 7 split 2, 2, 2, 1, so 2 a chunk
  // recomputes 7 there and 8 on a middle stage's chunks of 2.
  CHECK(counts(126, "pp=16,vpp=4,recompute=full,recompute_layers=2") == four{7, 8, 7, 8});
  CHECK(counts(126, "pp=16,vpp=4,recompute=full,recompute_layers=1") == four{4, 4, 4, 4});
  // A stated layout, chunk by chunk (chunk c on rank c mod pp): ranks 1 and 2 both hold 6, as 3 + 3 and 5 + 1;
  // 2 a chunk recomputes 4 of rank 1's and 3 of rank 2's. The middle is priced at the fuller count.
  CHECK(counts(20, "pp=4,recompute=full,recompute_layers=2,pipeline_layout=Et*2|t*3|t*5|t*2|t*2|t*3|t|t*2L") ==
        four{4, 4, 4, 3});
  CHECK(counts(16, "pp=2,recompute=full,recompute_layers=4,pipeline_layout=Et*3|t*5|t*6|t*2L") == four{7, 7, 6, 7});
  // Not recomputing, or recomputing every layer.
  CHECK(counts(16, "pp=2,vpp=2,recompute=selective") == four{0, 0, 0, 0});
  CHECK(counts(16, "pp=2,vpp=2,recompute=full") == four{8, 8, 8, 8});

  // The key, read and written back; refused where it means nothing.
  const auto l = io::parse_parallel_layout("tp=1,dp=8,recompute=full,recompute_layers=5,zero=3");
  CHECK(l.recompute_layers == std::size_t{5});
  CHECK(to_string(l) == "tp=1,pp=1,vpp=1,cp=1,dp=8,mbs=1,recompute=full,recompute_layers=5,sp=off,zero=3");
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  CHECK_THROWS_WITH(io::parse_parallel_layout("recompute=full,recompute_layers=0"),
                    Catch::Contains("recompute_layers=0") && Catch::Contains("1 to 1000000"));
  const auto j = gpt(8, 2048, 16, 1024, 8);
  CHECK_THAT(layout_text(j, io::parse_parallel_layout("recompute=selective,recompute_layers=2")),
             Catch::StartsWith("recompute_layers: recomputes that many layers of each model chunk in full") &&
                 Catch::Contains("give recompute=full beside it"));
  CHECK_THAT(layout_text(j, io::parse_parallel_layout("recompute_layers=2")), Catch::StartsWith("recompute_layers:"));
  auto zero = io::parse_parallel_layout("recompute=full");
  zero.recompute_layers = 0;
  CHECK_THAT(layout_text(j, zero), Catch::StartsWith("recompute_layers: 0 layers recomputed is recompute=none"));
  CHECK_THROWS_WITH(price(j, ideal(), io::parse_parallel_layout("recompute_layers=2")),
                    Catch::Contains("recompute_layers") && Catch::Contains("recompute=full"));
}

TEST_CASE("the uniform method recomputes every layer, keeping one input a group and rebuilding a group at once",
          "[model][parallel]") {
  // Eight layers on one GPU, one chunk, groups of n: every layer runs its forward again, as under recompute=full,
  // so the step, its recomputation and its collectives are full recomputation's to the bit. The chunk keeps ⌈8/n⌉
  // inputs where full recomputation keeps 8, and a group's backward holds n whole sets where one layer's holds one:
  // activations differ from full recomputation's by (⌈8/n⌉ − 8) inputs and (n − 1) sets.
  const auto j = gpt(8, 2048, 16, 1024, 4);
  const auto c = ideal();
  const auto full = price(j, c, io::parse_parallel_layout("tp=2,cp=2,recompute=full"));
  const double kept = layer_activation_bytes(j, 512, 1024, 1, 2, false, recomputation::none),
               stored = layer_activation_bytes(j, 512, 1024, 1, 2, false, recomputation::full);
  for (std::size_t n = 1; n <= 12; ++n) {
    INFO("recompute_layers=" << n);
    const auto uniform =
        price(j, c,
              io::parse_parallel_layout("tp=2,cp=2,recompute=full,recompute_method=uniform,recompute_layers=" +
                                        std::to_string(n)));
    CHECK(uniform.step == full.step);
    CHECK(uniform.recompute == full.recompute);
    CHECK((uniform.tp_bytes == full.tp_bytes && uniform.cp_bytes == full.cp_bytes));
    CHECK(uniform.recomputed == full.recomputed);
    const double group = static_cast<double>(std::min<std::size_t>(n, 8)), inputs = std::ceil(8.0 / group);
    CHECK(uniform.activations.value() ==
          Approx(full.activations.value() + (inputs - 8.0) * stored + (group - 1.0) * kept).epsilon(1e-12));
  }
  // A group of one is full recomputation's own layout in all but its name.
  CHECK(price(j, c, io::parse_parallel_layout("recompute=full,recompute_method=uniform,recompute_layers=1"))
            .device_bytes == price(j, c, io::parse_parallel_layout("recompute=full")).device_bytes);

  // A pipeline's first stage keeps its inputs for every micro-batch in flight and rebuilds one group, so groups pay
  // there: on 4 stages of 8 layers (4 micro-batches in flight), groups of 2 keep 4 inputs a micro-batch instead of
  // 8 and rebuild two layers' sets instead of one, about 76 tokens' worth of h against 85.
  const auto deep = gpt(32, 2048, 16, 2048, 64);
  const auto alone = price(deep, c, io::parse_parallel_layout("tp=8,pp=4,recompute=full"));
  const auto twos =
      price(deep, c, io::parse_parallel_layout("tp=8,pp=4,recompute=full,recompute_method=uniform,recompute_layers=2"));
  CHECK(twos.activations < alone.activations);
  CHECK(twos.step == alone.step);
}

TEST_CASE("the uniform method's groups, counted chunk by chunk as a stated layout places them", "[model][parallel]") {
  const auto inputs = [](std::size_t layers, const std::string& layout) {
    return per_stage(layers, layout, checkpointed_stage_inputs);
  };
  // 16 layers on 2 stages of 2 chunks of 4: groups of 3 are 2 a chunk (3 and 1), 4 a stage; of 5, one a chunk.
  CHECK(inputs(16, "pp=2,vpp=2,recompute=full,recompute_method=uniform,recompute_layers=3") == four{4, 4, 4, 4});
  CHECK(inputs(16, "pp=2,vpp=2,recompute=full,recompute_method=uniform,recompute_layers=5") == four{2, 2, 2, 2});
  // Llama 3 405B's 126 layers on 16 stages of 4 chunks: the end stages' 7 split 2, 2, 2, 1 and the middle's 8 in
  // 2s; groups of 2 are one a chunk, groups of 1 each layer.
  CHECK(inputs(126, "pp=16,vpp=4,recompute=full,recompute_method=uniform,recompute_layers=2") == four{4, 4, 4, 4});
  CHECK(inputs(126, "pp=16,vpp=4,recompute=full,recompute_method=uniform,recompute_layers=1") == four{7, 8, 7, 8});
  // A stated layout (chunk c on rank c mod pp): ranks 0 to 3 hold 2 + 2, 3 + 3, 5 + 1 and 2 + 2 layers; groups of
  // 2 are 1 + 1, 2 + 2, 3 + 1 and 1 + 1. The middle stages both hold 6 and keep 4.
  CHECK(inputs(20,
               "pp=4,recompute=full,recompute_method=uniform,recompute_layers=2,"
               "pipeline_layout=Et*2|t*3|t*5|t*2|t*2|t*3|t|t*2L") == four{2, 4, 2, 4});
  // Elsewhere each recomputed layer keeps its own input: full recomputation's layers, the block method's first n.
  CHECK(inputs(16, "pp=2,vpp=2,recompute=full") == four{8, 8, 8, 8});
  CHECK(inputs(16, "pp=2,vpp=2,recompute=full,recompute_layers=3") == four{6, 6, 6, 6});
  // Every layer is recomputed, whatever the group; a group rebuilds at most a chunk.
  const auto l = io::parse_parallel_layout("pp=2,vpp=2,recompute=full,recompute_method=uniform,recompute_layers=3");
  CHECK(recomputed_stage_layers(l, pipeline_stage_layers(16, l)) == pipeline_stage_layers(16, l));
  CHECK(rebuilt_group_layers(l, pipeline_stage_layers(16, l)) == 3);
  const auto wide = io::parse_parallel_layout("pp=2,vpp=2,recompute=full,recompute_method=uniform,recompute_layers=9");
  CHECK(rebuilt_group_layers(wide, pipeline_stage_layers(16, wide)) == 4);
  CHECK(rebuilt_group_layers(io::parse_parallel_layout("recompute=full,recompute_layers=3"),
                             stage_layers{8, 8, 8, 8}) == 1);

  // The key, read and written back; the method alone means nothing, and an unknown one is refused naming both.
  CHECK(to_string(l) ==
        "tp=1,pp=2,vpp=2,cp=1,dp=1,mbs=1,recompute=full,recompute_layers=3,recompute_method=uniform,"
        "sp=off,zero=0");
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  CHECK(io::parse_parallel_layout("recompute=full,recompute_layers=3,recompute_method=block") ==
        io::parse_parallel_layout("recompute=full,recompute_layers=3"));
  CHECK_THROWS_WITH(
      io::parse_parallel_layout("recompute=full,recompute_layers=3,recompute_method=groups"),
      Catch::Contains("recompute_method=groups") && Catch::Contains("use block") && Catch::Contains("or uniform"));
  const auto j = gpt(8, 2048, 16, 1024, 8);
  CHECK_THAT(layout_text(j, io::parse_parallel_layout("recompute=full,recompute_method=uniform")),
             Catch::StartsWith("recompute_method: uniform checkpoints every layer in groups of recompute_layers") &&
                 Catch::Contains("give recompute_layers=N"));
  CHECK_THAT(layout_text(j, io::parse_parallel_layout("recompute=none,recompute_method=uniform")),
             Catch::StartsWith("recompute_method:"));
  CHECK_THAT(layout_text(j, io::parse_parallel_layout("recompute=selective,recompute_method=uniform,"
                                                      "recompute_layers=2")),
             Catch::StartsWith("recompute_layers:") && Catch::Contains("recompute_method=uniform"));
}

TEST_CASE("parallel training: the step's parts add up to the step, each second in one of them", "[model][parallel]") {
  // The layouts where a second could be counted twice: a recomputed forward's tensor-parallel collectives and
  // all-to-alls (full recomputation, single modules), the context ring, the overlapped reduction, fp8's casts
  // and ZeRO-3's gathers; on a dense model and on a mixture with shared experts.
  auto c = test::h100_like();
  c.host = {seconds{1e-5}, bytes_per_second{50e9}};
  c.host_memory = bytes{1e12};
  training_job dense;
  dense.shape = shapes::llama2_70b;
  dense.sequence = 4096;
  dense.global_batch = 64;
  auto moe = dense;
  moe.shape = shapes::deepseek_v3;
  moe.global_batch = 512;
  const std::pair<const training_job*, const char*> cases[] = {
      {&dense, "tp=8,pp=4,dp=2,recompute=full,sp=on,zero=1"},
      {&dense, "tp=8,pp=4,vpp=2,dp=2,recompute=full,recompute_layers=3,sp=on,zero=1"},
      {&moe, "tp=2,pp=16,dp=32,ep=64,recompute=full,recompute_layers=1,sp=on,zero=1"},
      {&dense, "tp=4,pp=2,vpp=5,cp=2,dp=4,recompute=selective,sp=on,zero=1"},
      {&dense, "tp=8,pp=1,dp=8,recompute=none,recompute_modules=mlp+layernorm,sp=on,zero=3"},
      {&dense, "tp=2,pp=8,dp=4,recompute=none,zero=1,offload=on"},
      {&moe, "tp=2,pp=16,dp=32,ep=64,recompute=full,sp=on,zero=1"},
      {&moe, "tp=2,pp=16,dp=32,ep=64,recompute=none,recompute_modules=moe+mla_up_proj,sp=on,zero=1"},
      {&moe, "tp=4,pp=8,dp=32,ep=32,etp=2,recompute=none,sp=on,zero=2"},
      {&dense, "tp=8,pp=2,dp=8,recompute=full,sp=on,zero=1,codec=int8-ef"}};
  const compressor_cost int8{"int8-ef", 3.9, bytes_per_second{1.5e12}, bytes_per_second{2.2e12}, 0.0065, false, false};
  for (const auto& [job, text] : cases)
    for (const bool fp8 : {false, true})
      for (const bool overlap : {false, true}) {
        auto j = *job;
        j.fp8 = fp8;
        j.overlap_dp = overlap;
        const auto l = io::parse_parallel_layout(text);
        const auto r = l.codec.empty() ? price(j, c, l) : price(j, c, l, int8);
        INFO(text << (fp8 ? " fp8" : "") << (overlap ? " overlap" : ""));
        const seconds parts = r.gemm + r.attention + r.elementwise + r.recompute + r.tp_comm + r.ep_comm + r.cp_comm +
                              r.pp_comm + r.bubble + r.dp_comm + r.optimizer + r.offload + r.codec + r.embedding_sync;
        CHECK(parts.value() == Approx(r.step.value()).epsilon(1e-12));
        if (!l.codec.empty()) CHECK(r.codec > seconds{});
      }
}

TEST_CASE(
    "parallel training: a multi-token prediction module runs on the last stage, a layer, a projection and "
    "the logits more",
    "[model][parallel]") {
  const auto c = ideal();
  auto j = gpt(8, 2048, 16, 1024, 4);
  j.shape.mtp_layers = 1;
  const double h = 2048, V = 51200, T = 1024;
  // One GPU on the ideal device: the step is still the FLOP count, the module's included, over the peak, and
  // the loss over each head's logits.
  for (const auto r : {recomputation::none, recomputation::selective, recomputation::full}) {
    parallel_layout l;
    l.recompute = r;
    const auto cost = price(j, c, l);
    const double psi = parameters(j.shape);
    const double loss = 4 * 2 * (38.0 + 14.0) * T * V / 2e12;
    CHECK(cost.step.value() ==
          Approx(training_flops(j.shape, 4, 1024, r).value() / 1e15 + psi * (2.0 * 12 + 2 + 2) / 2e12 + loss)
              .epsilon(1e-9));
    // Its memory: 16 bytes a weight, the module's too; the module's layer's activations, its projection's
    // 16-bit input and its own fp32 logits beside the model's.
    const double layer = layer_activation_bytes(j, 1024, 1024, 1, 1, false, r);
    const double rebuilt = r == recomputation::none
                               ? 0.0
                               : layer_activation_bytes(j, 1024, 1024, 1, 1, false, recomputation::none) - layer;
    CHECK(cost.device_bytes.value() ==
          Approx(16.0 * psi + 9 * layer + 2 * 4.0 * T * V + 4.0 * T * h + rebuilt).epsilon(1e-12));
  }
  // Two stages of 4: the last holds the module and, beside the untied output layer, the embedding again; tied,
  // the one weight serves both.
  const auto two = price(j, c, io::parse_parallel_layout("pp=2,dp=1,zero=0"));
  CHECK(two.last_binds);
  CHECK(two.stage_parameters == 4 * layer_parameters(j.shape) + 2 * V * h + h + mtp_module_parameters(j.shape));
  auto tied = j;
  tied.shape.tied_embeddings = true;
  CHECK(price(tied, c, io::parse_parallel_layout("pp=2,dp=1,zero=0")).stage_parameters ==
        4 * layer_parameters(j.shape) + V * h + h + mtp_module_parameters(j.shape));
  // 10 layers over 4 stages bind on a middle stage of 3 with a small vocabulary (the test above); the module
  // moves the binding stage to the last, 2 layers, the module's layer and two heads.
  auto small = gpt(10, 1024, 16, 1024, 8);
  small.shape.vocabulary = 1024;
  const auto plain = price(small, ideal(), io::parse_parallel_layout("pp=4,dp=1"));
  small.shape.mtp_layers = 1;
  const auto with = price(small, ideal(), io::parse_parallel_layout("pp=4,dp=1"));
  CHECK((!plain.last_binds && plain.layers_per_stage == 3));
  CHECK((with.last_binds && with.layers_per_stage == 2));
  CHECK(with.step > plain.step);
  // Under fp8 the module's GEMM weights (all but its five norms) are kept cast too, 2 bytes more each.
  auto fast = ideal();
  fast.fp8_peak = flops_per_second{2e15};
  auto j8 = j, without8 = j;
  j8.fp8 = without8.fp8 = true;
  without8.shape.mtp_layers = 0;
  CHECK((price(j8, fast, parallel_layout{}).parameters - price(without8, fast, parallel_layout{}).parameters).value() ==
        Approx(j8.precision.parameter * mtp_module_parameters(j.shape) + 2.0 * (mtp_module_parameters(j.shape) - 5 * h))
            .epsilon(1e-12));
}

TEST_CASE(
    "parallel training: where a pipeline's first and last stages both hold the embedding, its gradient is summed "
    "between them once a step",
    "[model][parallel]") {
  const auto c = ideal();
  const auto untied = gpt(8, 2048, 16, 1024, 4);
  auto tied = untied;
  tied.shape.tied_embeddings = true;
  auto predicting = untied;
  predicting.shape.mtp_layers = 1;
  const double h = 2048, V = 51200;
  // Megatron-Core's embedding group: an all-reduce of the V·h/t gradient values over two ranks, each sending the
  // whole slice, over the link the pipeline's span reaches: 2 latencies and the slice over the bandwidth.
  for (const auto& [text, link] : {std::pair{"tp=2,pp=2,dp=1,zero=0", c.fast}, {"tp=2,pp=8,dp=1,zero=1", c.slow}}) {
    INFO(text);
    const auto l = io::parse_parallel_layout(text);
    const auto apart = price(untied, c, l), one = price(tied, c, l), module = price(predicting, c, l);
    CHECK(apart.embedding_bytes == bytes{});
    CHECK(apart.embedding_sync == seconds{});
    const double slice = V * h / 2 * untied.precision.gradient;
    for (const auto* r : {&one, &module}) {
      CHECK(r->embedding_bytes.value() == slice);
      CHECK(r->embedding_sync.value() ==
            Approx(2 * link.latency.value() + slice / link.bandwidth.value()).epsilon(1e-12));
    }
    // Tied, the last stage keeps its copy of the embedding as the untied one keeps its output layer: the same
    // weights and memory, and the step longer by the all-reduce alone.
    CHECK(one.stage_parameters == apart.stage_parameters);
    CHECK(one.device_bytes == apart.device_bytes);
    CHECK(one.step.value() == Approx((apart.step + one.embedding_sync).value()).epsilon(1e-12));
  }
  // On one stage the one weight serves both ends, once tied, and nothing is summed.
  const auto l = io::parse_parallel_layout("tp=2,dp=1,zero=0");
  const auto one = price(tied, c, l), apart = price(untied, c, l);
  CHECK(one.embedding_sync == seconds{});
  CHECK(apart.stage_parameters - one.stage_parameters == V * h / 2);
}

TEST_CASE("parallel training: the last stage pays the loss over the T·V/t logits a GPU holds, each micro-batch",
          "[model][parallel]") {
  // The ideal device's layers move no bytes: what memory-bound time a step has left is the loss's.
  const auto c = ideal();
  const auto j = gpt(16, 2048, 16, 1024, 8);
  const double per_logit = (38.0 + 14.0) / 2e12, V = 51200, T = 1024;
  // One stage, then two tensor ranks (each holds half the vocabulary's logits), then micro-batches of two.
  const auto one = price(j, c, io::parse_parallel_layout("dp=1"));
  CHECK(one.elementwise.value() == Approx(8 * T * V * per_logit).epsilon(1e-12));
  const auto tp2 = price(j, c, io::parse_parallel_layout("tp=2,dp=1"));
  CHECK(tp2.elementwise.value() == Approx(8 * T * V / 2 * per_logit).epsilon(1e-12));
  const auto mbs2 = price(j, c, io::parse_parallel_layout("dp=1,mbs=2"));
  CHECK(mbs2.elementwise.value() == Approx(4 * 2 * T * V * per_logit).epsilon(1e-12));
  // Two stages of eight layers: the last, with the logits and their loss, binds.
  const auto pp2 = price(j, c, io::parse_parallel_layout("pp=2,dp=1"));
  CHECK(pp2.last_binds);
  CHECK(pp2.elementwise.value() == Approx(8 * T * V * per_logit).epsilon(1e-12));
  // The first stage given 14 layers to the last's 2 binds instead, and it computes no loss.
  const auto first = price(j, c, io::parse_parallel_layout("pp=2,dp=1,first_stage_layers=14"));
  CHECK_FALSE(first.last_binds);
  CHECK(first.elementwise.value() == 0.0);
}

TEST_CASE(
    "parallel training: Transformer Engine's loss moves 10 bytes a logit and keeps 2, where Megatron's moves 52 "
    "and keeps 4",
    "[model][parallel]") {
  const auto c = ideal();
  auto native = gpt(16, 2048, 16, 1024, 8), te = native;
  te.cross_entropy = loss_kernel::transformer_engine;
  const double V = 51200, T = 1024;
  for (const char* layout : {"dp=1", "tp=2,dp=1,mbs=2", "pp=2,dp=1,mbs=2"}) {
    INFO(layout);
    const auto l = io::parse_parallel_layout(layout);
    const double t = static_cast<double>(l.tp), logits = 8 * T * V / t;  // a step's: eight micro-batches' worth
    const auto a = price(native, c, l), b = price(te, c, l);
    CHECK(a.elementwise.value() == Approx(logits * 52.0 / 2e12).epsilon(1e-12));
    CHECK(b.elementwise.value() == Approx(logits * 10.0 / 2e12).epsilon(1e-12));
    // The step loses exactly the 42 bytes a logit, and with two stages as much again of the bubble: the binding
    // stage's time, the loss's in it, fills (m + p - 1) slots for m micro-batches.
    const double m = 8.0 / static_cast<double>(l.micro_batch), p = static_cast<double>(l.pp);
    CHECK((a.step - b.step).value() == Approx(logits * 42.0 / 2e12 * (m + p - 1) / m).epsilon(1e-9));
    // On one stage, the GPU keeps one micro-batch's logits for the loss's backward pass, 2 bytes less each.
    if (l.pp == 1)
      CHECK((a.activations - b.activations).value() ==
            Approx(2.0 * static_cast<double>(l.micro_batch) * T * V / t).epsilon(1e-12));
  }
}

}  // namespace model_parallel_training_test
