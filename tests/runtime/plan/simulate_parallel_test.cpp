// A parallel layout's transfers on the system's own link hierarchy, against the step model: every group of a
// kind at once. On the DGX H100 each GPU has its own NVSwitch port and InfiniBand port, so nothing contends and
// the simulation lands where the α-β figure does, but for NVLink's packet headers (16 bytes a 256-byte packet)
// and the ring's step-by-step synchronisation; on a fabric whose nodes share one uplink the data-parallel rings
// queue behind each other, which the formula cannot see.
#include <catch2/catch.hpp>

#include <trinity/plan.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/plan/simulate_parallel.hpp>

#include <algorithm>

namespace plan_simulate_parallel_test {

using namespace trinity;

namespace {

model::parallel_layout layout(std::size_t tp, std::size_t pp, std::size_t vpp, std::size_t cp, std::size_t dp, int zero,
                              bool sp = true) {
  model::parallel_layout l;
  l.tp = tp;
  l.pp = pp;
  l.vpp = vpp;
  l.cp = cp;
  l.dp = dp;
  l.zero_stage = zero;
  l.sequence_parallel = sp;
  return l;
}

}  // namespace

TEST_CASE("a hybrid layout's transfers on the DGX H100's links land on the step model's figures",
          "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto l = layout(2, 4, 20, 2, 4, 2);  // 64 GPUs: a tensor pair, four stages and a context pair per 16
  const auto sim = plan::simulate(s, w, l);
  REQUIRE(sim.size() == 4);
  // Tensor pairs and context rings stay on NVLink: 1 to 272/256 slower (headers; latency has no header).
  CHECK_THAT(sim[0].what, Catch::Contains("32 groups of 2 at once"));
  CHECK_THAT(sim[1].what, Catch::Contains("32 rings of 2 at once"));
  for (std::size_t i : {std::size_t{0}, std::size_t{1}}) {
    INFO(sim[i].what);
    CHECK(sim[i].ratio() > 1.0);
    CHECK(sim[i].ratio() <= 272.0 / 256.0 + 1e-9);
  }
  // Stages are tp*cp*dp = 16 GPUs apart (the pipeline outermost, as Megatron-Core lays ranks out): every hop
  // crosses InfiniBand, as the step model charges it.
  CHECK_THAT(sim[2].what, Catch::Contains("16 pipelines of 4 at once"));
  CHECK(sim[2].ratio() == Approx(1.0).epsilon(0.01));
  // Data and context ranks sharing weights: 8 of them, tensor ranks apart in a stage of 16 GPUs (two nodes),
  // in tp*pp = 8 rings over InfiniBand, each GPU on its own port.
  CHECK_THAT(sim[3].what, Catch::Contains("ZeRO-2") && Catch::Contains("8 groups of 8 at once"));
  CHECK(sim[3].ratio() == Approx(1.0).epsilon(0.01));
  for (const auto& x : sim) CHECK(x.events > 0);
}

// Weights kept in fp8 alone travel at a byte: the simulated gather sends what the step model gathers, so the
// data-parallel pair stays on it, and it is shorter than the 16-bit weights' gather.
TEST_CASE("with fp8_params the simulated parameter all-gather sends the GEMM weights at a byte, as priced",
          "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  w.compute_precision = "fp8";
  auto kept = w;
  kept.fp8_params = true;
  const auto l = layout(2, 4, 20, 2, 4, 1);
  const auto cast = plan::simulate(s, w, l), alone = plan::simulate(s, kept, l);
  REQUIRE(cast.size() == 4);
  REQUIRE(alone.size() == 4);
  CHECK_THAT(alone[3].what, Catch::Contains("ZeRO-1") && Catch::Contains("parameter all-gather"));
  CHECK(alone[3].ratio() == Approx(1.0).epsilon(0.01));
  CHECK(alone[3].predicted < cast[3].predicted);
  CHECK(alone[3].simulated < cast[3].simulated);
  CHECK(alone[3].what != cast[3].what);  // the gathered bytes it names
}

TEST_CASE("one layout on the hierarchy: a group inside the domain never pays the scale-out link",
          "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  // tp=8 fills a node: its all-reduce stays on NVLink; pp=2 crosses nodes; dp is 1, so no weights group.
  const auto sim = plan::simulate(s, w, layout(8, 2, 1, 1, 1, 0, false));
  REQUIRE(sim.size() == 2);
  CHECK(sim[0].ratio() > 1.0);
  CHECK(sim[0].ratio() <= 272.0 / 256.0 + 1e-9);
  CHECK(sim[1].ratio() == Approx(1.0).epsilon(0.01));
  // tp=16 spans two nodes: the step model prices it on InfiniBand, and so does the fabric.
  const auto wide = plan::simulate(s, w, layout(16, 1, 1, 1, 1, 0, false));
  REQUIRE(wide.size() == 1);
  CHECK(wide[0].ratio() == Approx(1.0).epsilon(0.05));
  CHECK(wide[0].predicted > sim[0].predicted * 5.0);
}

TEST_CASE("on a fabric whose nodes share one uplink the data-parallel rings contend", "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto l = layout(8, 1, 1, 1, 4, 1, false);  // four nodes, eight rings across them
  // The same nodes, each reaching the others through one InfiniBand port instead of eight.
  fabric::topology t;
  const auto ib = t.add_switch("ib", link_family::infiniband);
  std::vector<std::uint32_t> gpus;
  for (int node = 0; node < 4; ++node) {
    const auto nv = t.add_switch("nvswitch" + std::to_string(node), link_family::nvlink);
    t.connect(nv, ib, links::infiniband_400g::descriptor);
    for (int g = 0; g < 8; ++g) {
      gpus.push_back(t.add_accelerator("gpu" + std::to_string(node * 8 + g)));
      t.connect(gpus.back(), nv, links::nvlink5_x18::descriptor);
    }
  }
  const auto shared = plan::simulate(s, w, l, plan::bind(std::move(t), 32, {}, "one-port-a-node"));
  const auto own = plan::simulate(s, w, l);
  REQUIRE(shared.size() == own.size());
  const auto& dp_shared = shared.back();
  const auto& dp_own = own.back();
  CHECK(dp_shared.predicted.value() == dp_own.predicted.value());
  CHECK(dp_own.ratio() == Approx(1.0).epsilon(0.01));
  // Eight rings share each node's port: about eight times as long, less the port's line rate (50 GB/s) over
  // the NCCL rate the system's own links carry (47 GB/s).
  CHECK(dp_shared.ratio() == Approx(8.0 * 47.0 / 50.0).epsilon(0.05));
}

TEST_CASE("simulate of a layout refuses a fabric of the wrong size and a system that cannot reach it",
          "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::llm_70b();
  const auto l = layout(2, 4, 20, 1, 8, 2);
  CHECK_THROWS_WITH(plan::simulate(s, w, l, plan::hierarchy_fabric(s, 32)),
                    Catch::StartsWith("fabric: places 32 ranks; the layout runs 64"));
  auto one = plan::presets::gb200_nvl72_cxl();
  CHECK_THROWS_WITH(
      plan::hierarchy_fabric(one, 80),
      Catch::StartsWith("gpus: 80 GPUs, and gb200-nvl72-cxl has 72 in one domain with no scale-out link"));
  // Within its domain the whole rack is one switch: a 72-GPU pipeline's hops are all NVLink.
  const auto rack = plan::simulate(one, w, layout(1, 9, 1, 1, 8, 2, false));
  REQUIRE(rack.size() == 2);
  CHECK(rack[0].ratio() > 1.0);
  CHECK(rack[0].ratio() <= 272.0 / 256.0 + 1e-9);
}

TEST_CASE("a mixture's all-to-all on the hierarchy: inside a node, and across nodes where the model splits it",
          "[plan][fabric][parallel][moe]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = plan::presets::mixtral_8x7b();
  // ep=8 fills a node's NVLink; ep=4 with tp=4 spans two nodes, its members 4 apart: one domain-mate a GPU
  // over NVLink, the other two over InfiniBand at the same time, the slower binding.
  for (const auto* text : {"dp=16,ep=8", "tp=4,dp=4,sp=on,ep=4"}) {
    CAPTURE(text);
    const auto l = io::parse_parallel_layout(text);
    const auto sim = plan::simulate(s, w, l);
    const auto a2a =
        std::find_if(sim.begin(), sim.end(), [](const auto& x) { return x.what.find("an expert all-to-all") == 0; });
    REQUIRE(a2a != sim.end());
    CHECK(a2a->ratio() == Approx(1.0).epsilon(0.07));
    const auto g = parallel::groups_of(l, static_cast<int>(l.gpus()), 5);
    CHECK(g.expert.size() == l.ep);
    CHECK(g.expert_data.size() == l.tp * l.dp / l.ep);
  }
}

TEST_CASE("a mixture's dispatch deduplicated by node on the hierarchy: across to the same place, forwarded within",
          "[plan][fabric][parallel][moe]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::mixtral_8x7b();
  w.shape->experts = 64, w.shape->top_k = 4;
  // ep=16 over two nodes of eight: each GPU sends its cross-node rows to the GPU with its place in the other node
  // over InfiniBand while it forwards the rows it staged to its seven domain-mates over NVLink.
  const auto l = io::parse_parallel_layout("dp=16,ep=16,dispatcher=deepep");
  const auto sim = plan::simulate(s, w, l);
  const auto d = std::find_if(sim.begin(), sim.end(), [](const auto& x) {
    return x.what.find("an expert dispatch deduplicated by node") == 0;
  });
  REQUIRE(d != sim.end());
  CHECK(d->ratio() == Approx(1.0).epsilon(0.07));
  CHECK(std::none_of(sim.begin(), sim.end(), [](const auto& x) { return x.what.find("an expert all-to-all") == 0; }));
}

TEST_CASE("a tied model's embedding all-reduce on the hierarchy: each pipeline's ends, across the nodes it spans",
          "[plan][fabric][parallel]") {
  const auto s = plan::presets::dgx_h100();
  auto w = plan::presets::llm_70b();
  const auto l = layout(2, 4, 1, 1, 4, 1);  // 32 GPUs: stages 8 GPUs apart, so a pipeline's ends are nodes apart
  const auto untied = plan::simulate(s, w, l);
  CHECK(std::none_of(untied.begin(), untied.end(),
                     [](const auto& x) { return x.what.find("the embedding group") == 0; }));
  w.shape->tied_embeddings = true;
  const auto sim = plan::simulate(s, w, l);
  const auto e =
      std::find_if(sim.begin(), sim.end(), [](const auto& x) { return x.what.find("the embedding group") == 0; });
  REQUIRE(e != sim.end());
  CHECK_THAT(e->what, Catch::Contains("the first and last stage of 8 pipelines at once"));
  CHECK(e->ratio() == Approx(1.0).epsilon(0.01));
  CHECK(e->events > 0);
}

}  // namespace plan_simulate_parallel_test
