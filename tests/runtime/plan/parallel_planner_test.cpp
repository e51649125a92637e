// The layout search: its space checked against a brute-force walk of every tuple, its choice against the
// step model called directly, and the plans it makes for the clusters.
#include <catch2/catch.hpp>

#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

namespace plan_parallel_planner_test {

using namespace trinity;

namespace {

// A small Llama-like model: 8 layers, 8 heads, 2 KV heads, 1,024 sequences of 512 tokens.
plan::training_workload small() {
  auto w = plan::presets::llm_7b();
  w.name = "small";
  w.parameters = 0.2e9;
  w.layers = 8;
  w.hidden = 1024;
  w.sequence = 512;
  w.shape = model::transformer_shape{8, 1024, 2816, 8, 2, 32000, true, false};
  w.global_batch = 64;
  return w;
}

using key = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, int, int, int, int,
                       std::string, std::size_t>;
key key_of(const model::parallel_layout& l) {
  return {l.tp,
          l.pp,
          l.vpp,
          l.cp,
          l.dp,
          l.micro_batch,
          static_cast<int>(l.recompute),
          l.sequence_parallel ? 1 : 0,
          l.zero_stage,
          l.offload ? 1 : 0,
          l.codec,
          l.recompute_layers.value_or(0)};
}

}  // namespace

TEST_CASE("layout search: the space is every layout the step model runs, with the search's stated rules",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = small();
  for (const bool flash : {true, false}) {
    w.flash_attention = flash;
    const auto r = plan::plan_parallel(s, w, {.gpus = 16});
    const auto job = plan::job_of(w, 16);
    std::set<key> searched;
    for (const auto& e : r.candidates) {
      CHECK(e.plan.layout.gpus() == 16);
      CHECK_FALSE(model::check_layout(job, e.plan.layout));
      CHECK(searched.insert(key_of(e.plan.layout)).second);  // no layout twice
    }
    // Every tuple of degrees up to 16, filtered by the step model and the search's own rules (equal
    // interleaved chunks, micro-batches up to 8, no ZeRO without ranks to shard over, no selective
    // recomputation under FlashAttention), each with its optimizer on the device and offloaded, and where ranks
    // share weights with each of the H100's gradient codecs (bf16, int8-ef) as well as uncoded.
    std::set<key> expected;
    const std::vector<std::string> codecs{"", "bf16", "int8-ef"};
    REQUIRE(r.codecs.size() == codecs.size());
    model::parallel_layout l;
    for (l.tp = 1; l.tp <= 16; ++l.tp)
      for (l.pp = 1; l.pp <= 16; ++l.pp)
        for (l.vpp = 1; l.vpp <= 8; ++l.vpp)
          for (l.cp = 1; l.cp <= 16; ++l.cp)
            for (l.dp = 1; l.dp <= 16; ++l.dp) {
              if (l.gpus() != 16) continue;  // the loops below leave the degrees alone
              for (l.micro_batch = 1; l.micro_batch <= 8; l.micro_batch *= 2)
                for (const auto rc :
                     {model::recomputation::none, model::recomputation::selective, model::recomputation::full})
                  for (const bool sp : {false, true})
                    for (int z = 0; z <= 3; ++z)
                      for (const bool off : {false, true})  // dgx-h100 has a host tier to offload to
                        for (const auto& codec : codecs) {
                          l.codec = codec;
                          l.recompute = rc;
                          l.sequence_parallel = sp;
                          l.zero_stage = z;
                          l.offload = off;
                          if (l.gpus() != 16 || model::check_layout(job, l)) continue;
                          if (l.vpp > 1 && w.shape->layers % (l.pp * l.vpp) != 0) continue;
                          if (z > 0 && l.dp * l.cp == 1) continue;
                          if (flash && rc == model::recomputation::selective) continue;
                          if (!codec.empty() && l.dp * l.cp == 1) continue;
                          expected.insert(key_of(l));
                        }
            }
    CHECK(searched == expected);
    CHECK(searched.size() > 500);
  }
}

TEST_CASE("layout search: the choice is the fastest layout that fits, as the step model prices it",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_a100();
  const auto w = plan::presets::llm_70b();
  const auto r = plan::plan_parallel(s, w, {.gpus = 64});
  const auto job = plan::job_of(w, 64);
  const auto c = plan::cluster_of(s, w);
  double best = 1e300;
  std::size_t fits = 0;
  for (const auto& e : r.candidates) {
    const auto& codec = plan::gradient_codec(r.codecs, e.plan.layout.codec);
    const auto m = model::price(job, c, e.plan.layout, codec);
    CHECK(e.cost.total.time.value() == m.step.value());
    CHECK(e.cost.total.memory.value() == m.device_bytes.value());
    CHECK(e.fits() == (m.device_bytes <= c.memory && codec.relative_error <= w.error_budget));
    if (e.fits()) {
      ++fits;
      best = std::min(best, m.step.value());
    }
  }
  REQUIRE(fits > 0);
  CHECK(r.chosen().fits());
  CHECK(r.chosen().cost.total.time.value() == best);
  CHECK(std::find(r.pareto.begin(), r.pareto.end(), r.choice) != r.pareto.end());
  // Energy: the busy GPU at its power, waiting at idle, and the bytes each link carried.
  const auto& x = r.chosen().cost;
  CHECK(x.total.energy.value() > (x.step.gemm * s.device.power).value());
  CHECK(x.total.energy.value() < (x.step.step * s.device.power).value() + 1e3);
}

TEST_CASE("layout search: a 70B model on 64 H100s or A100s takes model parallelism, inside the NVLink node",
          "[plan][parallel]") {
  for (const auto& s : {plan::presets::dgx_h100(), plan::presets::dgx_a100()}) {
    const auto r = plan::plan_parallel(s, plan::presets::llm_70b(), {.gpus = 64});
    const auto& l = r.chosen().plan.layout;
    INFO(s.name << ": " << model::to_string(l));
    // Pure data parallelism holds 16 bytes per parameter plus activations on every GPU: it cannot fit.
    CHECK(r.baseline == 0);
    CHECK(!r.candidates[r.baseline].fits());
    CHECK(r.candidates[r.baseline].plan.layout.dp == 64);
    CHECK(l.tp * l.pp > 1);
    CHECK(l.tp * l.cp <= 8);  // the tensor (and context) groups stay inside the 8-GPU NVLink domain
    CHECK(r.explanation.binding_before.find("capacity: needs") != std::string::npos);
    REQUIRE(!r.explanation.trades.empty());
    CHECK(r.explanation.trades.front().find("inside a scale-up domain of 8") != std::string::npos);
    // A tensor group across nodes (tp=16 where the heads allow) prices itself out against tp=8.
    for (const auto& e : r.candidates) {
      if (e.plan.layout.tp != 16) continue;
      auto inside = e.plan.layout;
      inside.tp = 8;
      inside.dp *= 2;
      const auto job = plan::job_of(plan::presets::llm_70b(), 64);
      if (model::check_layout(job, inside)) continue;
      CHECK(plan::price(job, plan::cluster_of(s, plan::presets::llm_70b()), inside, r.codecs).tp_comm <
            e.cost.step.tp_comm);
    }
  }
}

TEST_CASE("layout search: a 7B model on one H100 node stays data parallel, a 70B on GB200 NVL72 does not",
          "[plan][parallel]") {
  {
    const auto r = plan::plan_parallel(plan::presets::dgx_h100(), plan::presets::llm_7b());
    const auto& l = r.chosen().plan.layout;
    CHECK(l.gpus() == 8);
    CHECK(l.tp == 1);
    CHECK(l.pp == 1);
    CHECK(l.zero_stage >= 1);  // 16 bytes a parameter do not fit 80 GB unsharded
  }
  {
    const auto s = plan::presets::gb200_nvl72_cxl();
    const auto r = plan::plan_parallel(s, plan::presets::llm_70b());
    const auto& l = r.chosen().plan.layout;
    CHECK(l.gpus() == 72);
    // 1,024 sequences do not split 72 ways: the untraded layout is the fewest stages that let them (9).
    CHECK(r.candidates[r.baseline].plan.layout.pp == 9);
    CHECK(r.candidates[r.baseline].plan.layout.dp == 8);
    CHECK(l.tp * l.pp > 1);
    CHECK(r.chosen().fits());
  }
}

TEST_CASE("layout search: a budget of bytes sent is kept, and what cannot run is refused by name", "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto free = plan::plan_parallel(s, w, {.gpus = 64});
  const bytes budget = free.chosen().cost.total.bandwidth / 2.0;
  const auto tight = plan::plan_parallel(s, w, {.gpus = 64, .link_budget = budget});
  CHECK(tight.chosen().cost.total.bandwidth <= budget);
  CHECK(tight.chosen().cost.total.time >= free.chosen().cost.total.time);

  CHECK_THROWS_WITH(plan::plan_parallel(s, w, {.gpus = 1}),
                    Catch::Contains("no layout of 1 GPUs fits") && Catch::Contains("Fix: more GPUs"));
  CHECK_THROWS_WITH(plan::plan_parallel(plan::presets::gb200_nvl72_cxl(), w, {.gpus = 144}),
                    Catch::Contains("gpus") && Catch::Contains("no scale-out link"));
  auto shapeless = w;
  shapeless.shape.reset();
  CHECK_THROWS_WITH(plan::plan_parallel(s, shapeless, {.gpus = 64}), Catch::Contains("no transformer shape"));
  CHECK_THROWS_WITH(plan::plan_parallel(plan::presets::dgx_a100(), w, {.gpus = 64, .objective = plan::objective::cost}),
                    Catch::Contains("cost needs prices"));
}

TEST_CASE("layout search: memory headroom keeps a share of device memory free, and the choice moves to fit the rest",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto tight = plan::plan_parallel(s, w, {.gpus = 64});
  const auto roomy = plan::plan_parallel(s, w, {.gpus = 64, .memory_headroom = 0.15});
  const bytes usable = s.tiers[0].capacity * 0.85;
  // Every layout that fits with headroom leaves 15% free; the choice without it does not, so the choice moves.
  for (const auto& e : roomy.candidates)
    if (e.fits()) CHECK(e.cost.total.memory <= usable);
  CHECK(tight.chosen().cost.total.memory > usable);
  CHECK(roomy.chosen().plan.layout != tight.chosen().plan.layout);
  CHECK(roomy.chosen().cost.total.time >= tight.chosen().cost.total.time);
  // The same layouts fit or not by the one rule: within the usable bytes. The blocks of recomputed layers the
  // search adds are the fewest that fit each memory, so the two searches are matched by layout; every layout
  // but those is in both.
  std::map<std::string, const plan::parallel_evaluated*> tight_of;
  for (const auto& e : tight.candidates) tight_of[model::to_string(e.plan.layout)] = &e;
  std::size_t both = 0, matched = 0;
  for (const auto& e : roomy.candidates) {
    const auto it = tight_of.find(model::to_string(e.plan.layout));
    if (it == tight_of.end()) {
      CHECK(e.plan.layout.recompute_layers.has_value());
      continue;
    }
    ++matched;
    CHECK(e.fits() == (it->second->fits() && it->second->cost.total.memory <= usable));
    both += e.fits();
  }
  CHECK(both > 0);
  CHECK(matched > roomy.candidates.size() / 2);
  CHECK_THAT(roomy.candidates[roomy.baseline].violation, Catch::Contains("of 72.26 GB (85.02 GB less 15% headroom)"));
  CHECK_THROWS_WITH(plan::plan_parallel(s, w, {.gpus = 64, .memory_headroom = 1.0}),
                    Catch::StartsWith("memory_headroom: is the fraction of device memory kept free"));
}

// Block recomputation (recompute_layers): the search adds, beside each layout that recomputes every layer, the
// fewest layers of each chunk that fit, wherever recomputing none does not fit and every layer does; and no
// other block. Checked against the step model called directly, layout by layout.
TEST_CASE("layout search: a block of recomputed layers is the fewest of each chunk that fit, where none does not",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto r = plan::plan_parallel(s, w, {.gpus = 64});
  const auto job = plan::job_of(w, 64);
  const auto c = plan::cluster_of(s, w);
  const auto fits = [&](const model::parallel_layout& l) {
    return model::price(job, c, l, plan::gradient_codec(r.codecs, l.codec)).device_bytes <= c.memory;
  };
  std::set<std::string> blocks;
  for (const auto& e : r.candidates)
    if (e.plan.layout.recompute_layers && e.plan.layout.recompute_method == model::recompute_method::block)
      blocks.insert(model::to_string(e.plan.layout));
  REQUIRE(blocks.size() > 100);
  std::set<std::string> expected;
  for (const auto& e : r.candidates) {
    auto l = e.plan.layout;
    if (l.recompute != model::recomputation::full || l.recompute_layers) continue;
    auto none = l;
    none.recompute = model::recomputation::none;
    if (fits(none) || !e.fits()) continue;
    const auto stages = model::pipeline_stage_layers(job.shape.layers, l);
    const std::size_t v = l.pp > 1 ? l.vpp : 1,
                      chunk = (std::max({stages.first, stages.middle, stages.last}) + v - 1) / v;
    // The fewest n below a chunk's layers that fits, found by walking up from 1.
    for (std::size_t n = 1; n < chunk; ++n) {
      l.recompute_layers = n;
      if (fits(l)) {
        expected.insert(model::to_string(l));
        break;
      }
    }
  }
  CHECK(blocks == expected);
  // Each block recomputes part of every chunk: less memory than none, more time, less than every layer.
  for (const auto& e : r.candidates)
    if (e.plan.layout.recompute_layers && e.plan.layout.recompute_method == model::recompute_method::block) {
      auto full = e.plan.layout;
      full.recompute_layers.reset();
      const auto all = model::price(job, c, full, plan::gradient_codec(r.codecs, full.codec));
      CHECK(e.cost.step.recompute < all.recompute);
      CHECK(e.cost.total.memory > all.device_bytes);
    }
}

// The uniform method (recompute_method=uniform): where recomputing every layer alone does not fit, the search adds
// the group size that holds least of those that fit, and nowhere else. Checked against the step model called
// directly, every size from 2 to a chunk's layers.
TEST_CASE("layout search: the uniform method's group is the leanest that fits, where every layer alone does not",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  w.flash_attention = false;  // the attention scores make recomputation worth more than its time
  const auto r = plan::plan_parallel(s, w, {.gpus = 64});
  const auto job = plan::job_of(w, 64);
  const auto c = plan::cluster_of(s, w);
  const auto held = [&](const model::parallel_layout& l) {
    return model::price(job, c, l, plan::gradient_codec(r.codecs, l.codec)).device_bytes;
  };
  std::set<std::string> groups, expected;
  for (const auto& e : r.candidates)
    if (e.plan.layout.recompute_method == model::recompute_method::uniform) {
      groups.insert(model::to_string(e.plan.layout));
      CHECK(e.fits());
    }
  for (const auto& e : r.candidates) {
    auto l = e.plan.layout;
    if (l.recompute != model::recomputation::full || l.recompute_layers || e.fits()) continue;
    const auto stages = model::pipeline_stage_layers(job.shape.layers, l);
    const std::size_t v = l.pp > 1 ? l.vpp : 1,
                      chunk = (std::max({stages.first, stages.middle, stages.last}) + v - 1) / v;
    l.recompute_method = model::recompute_method::uniform;
    std::optional<std::size_t> best;
    bytes least{};
    for (std::size_t n = 2; n <= chunk; ++n) {
      l.recompute_layers = n;
      const bytes b = held(l);
      if (b <= c.memory && (!best || b < least)) best = n, least = b;
    }
    if (!best) continue;
    l.recompute_layers = best;
    expected.insert(model::to_string(l));
    // The same time as every layer alone, in less memory.
    const auto& same = e;
    CHECK(model::price(job, c, l, plan::gradient_codec(r.codecs, l.codec)).step == same.cost.step.step);
    CHECK(least < same.cost.total.memory);
  }
  REQUIRE(!expected.empty());
  CHECK(groups == expected);
}

// Weights kept in fp8 alone (fp8_params) need the distributed optimizer (Megatron-Core's --fp8-param-gather):
// the search trades from data parallelism at ZeRO-1, and offers no layout at ZeRO-0; without fp8_params it does.
TEST_CASE("layout search: fp8_params trades from ZeRO-1 and never offers ZeRO-0", "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  w.compute_precision = "fp8";
  const auto cast = plan::plan_parallel(s, w, {.gpus = 64});
  w.fp8_params = true;
  const auto alone = plan::plan_parallel(s, w, {.gpus = 64});
  CHECK(cast.candidates[cast.baseline].plan.layout.zero_stage == 0);
  CHECK(alone.candidates[alone.baseline].plan.layout.zero_stage == 1);
  CHECK(std::any_of(cast.candidates.begin(), cast.candidates.end(),
                    [](const auto& e) { return e.plan.layout.zero_stage == 0; }));
  CHECK(std::none_of(alone.candidates.begin(), alone.candidates.end(),
                     [](const auto& e) { return e.plan.layout.zero_stage == 0; }));
  REQUIRE(alone.chosen().fits());
  // Its weights take what 16-bit ones take, 2 bytes less a GEMM weight than fp8 casts beside 16-bit copies:
  // the fastest layout that fits is no slower.
  CHECK(alone.chosen().cost.total.time <= cast.chosen().cost.total.time);
}

TEST_CASE("layout search: optimizer offload is a slot, taken where device memory binds and the host tier holds it",
          "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  // On one node nothing without offload fits a 70B model's states and activations in 8 x 80 GB.
  const auto r = plan::plan_parallel(s, w, {.gpus = 8});
  const auto& chosen = r.chosen();
  CHECK(chosen.plan.layout.offload);
  bool any_without = false;
  for (const auto& e : r.candidates) any_without = any_without || (e.fits() && !e.plan.layout.offload);
  CHECK_FALSE(any_without);
  CHECK(chosen.cost.step.offloaded <= s.tiers[1].capacity);
  CHECK_THAT(r.explanation.trades.back(), Catch::Contains("optimizer states offloaded to host-ddr5"));
  // Every layout that offloads more than the host tier holds is refused by name.
  auto small_host = s;
  small_host.tiers[1].capacity = bytes{10e9};
  const auto tight = plan::plan_parallel(small_host, w, {.gpus = 64});
  std::size_t refused = 0;
  for (const auto& e : tight.candidates)
    if (e.plan.layout.offload && e.cost.step.offloaded > bytes{10e9}) {
      CHECK_FALSE(e.fits());
      refused += e.violation.find("host-ddr5 capacity: offloads") != std::string::npos;
    }
  CHECK(refused > 0);
  // A system with one tier offers no offload.
  auto hbm_only = s;
  hbm_only.tiers.resize(1);
  for (const auto& e : plan::plan_parallel(hbm_only, w, {.gpus = 64}).candidates) CHECK_FALSE(e.plan.layout.offload);
}

TEST_CASE("layout search: the gradient codec is a slot, held to the workload's error budget", "[plan][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  // On 64 GPUs a stage's 2·4 ranks share a node and reduce over NVLink, where coding costs more than it
  // saves; on 128 a stage's 2·8 ranks span two nodes.
  CHECK(plan::plan_parallel(s, w, {.gpus = 64}).chosen().plan.layout.codec.empty());
  const auto r = plan::plan_parallel(s, w, {.gpus = 128});
  const auto& l = r.chosen().plan.layout;
  INFO(model::to_string(l));
  CHECK(model::span(l, model::layout_group::stage) > s.scale_up_domain);
  // Where a step's reduction crosses InfiniBand, int8 with error feedback (0.65% error, under the 1% default)
  // halves its bytes for a few milliseconds of coding on the GPU.
  CHECK(l.codec == "int8-ef");
  auto uncoded = l;
  uncoded.codec.clear();
  const auto it =
      std::find_if(r.candidates.begin(), r.candidates.end(), [&](const auto& e) { return e.plan.layout == uncoded; });
  REQUIRE(it != r.candidates.end());
  CHECK(r.chosen().cost.total.time < it->cost.total.time);
  CHECK(r.chosen().cost.total.bandwidth < it->cost.total.bandwidth);
  CHECK(r.explanation.trades.back().find("int8-ef gradients over the data-parallel group (compute for bandwidth)") !=
        std::string::npos);

  // Below int8's error the same layout goes uncoded, and the coded one is refused for its error.
  w.error_budget = 0.001;
  const auto strict = plan::plan_parallel(s, w, {.gpus = 128});
  CHECK(strict.chosen().plan.layout.codec.empty());
  for (const auto& e : strict.candidates)
    if (!e.plan.layout.codec.empty()) CHECK(e.violation.find("error budget: ") == 0);

  // The codecs are the options' when given: a slow one is priced and loses.
  const model::compressor_cost crawl{"int8-ef", 3.9,  bytes_per_second{1e8}, bytes_per_second{1e8}, 0.0065,
                                     false,     false};
  w.error_budget = 0.01;
  const auto slow = plan::plan_parallel(s, w, {.gpus = 128, .codecs = {model::uncoded_gradient(), crawl}});
  CHECK(slow.codecs.size() == 2);
  CHECK(slow.chosen().plan.layout.codec.empty());
  CHECK_THROWS_WITH(plan::plan_parallel(s, w, {.gpus = 64, .codecs = {crawl}}), Catch::Contains("identity"));
  CHECK_THROWS_WITH(plan::gradient_codec(r.codecs, "int8"), Catch::Contains("did you mean \"int8-ef\""));
}

TEST_CASE("the step model sends over each level at what NCCL's collectives move: NVLink below its line rate",
          "[plan][parallel]") {
  const auto w = plan::presets::llm_70b();
  for (const auto& [s, rate] :
       {std::pair{plan::presets::dgx_h100(), 370e9}, std::pair{plan::presets::dgx_a100(), 230e9}}) {
    INFO(s.name);
    const auto c = plan::cluster_of(s, w);
    CHECK(c.fast.bandwidth.value() == rate);
    CHECK(c.slow.bandwidth == s.scale_out->collective_rate());  // InfiniBand: 47 of 50 GB/s (NDR), 24 of 25 (HDR)
    CHECK(c.slow.bandwidth < s.scale_out->bandwidth);
    // The same system at the line rate: a tensor group's collectives take longer at NCCL's rate, by at most the
    // ratio of the rates (its latency and reduction do not change).
    auto line = s;
    line.interconnect.collective_bandwidth = {};
    model::parallel_layout l;
    l.tp = 8;
    l.dp = 8;
    l.sequence_parallel = true;
    const auto job = plan::job_of(w, 64);
    REQUIRE_FALSE(model::check_layout(job, l));
    const auto at_rate = model::price(job, c, l).tp_comm,
               at_line = model::price(job, plan::cluster_of(line, w), l).tp_comm;
    CHECK(at_rate > at_line);
    CHECK(at_rate.value() <= at_line.value() * s.interconnect.bandwidth.value() / rate * (1 + 1e-12));
  }
}

}  // namespace plan_parallel_planner_test
