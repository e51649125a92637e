// The 15 behaviours the CXL report asks of a fabric (its §4.2 and §6, at the
// lines each test names), one test case each (11 and 13, the spill rule and rate-limited
// migration, are in tests/runtime/place), plus max-min sharing and the
// thousand-accelerator all-reduce.
#include <catch2/catch.hpp>

#include <trinity/fabric.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/literals.hpp>

#include <numeric>

namespace fabric_behaviours_test {

using namespace trinity;
using namespace trinity::literals;
using fabric::node_kind;

namespace {
double ns(seconds s) { return s.value() * 1e9; }
}  // namespace

TEST_CASE("1. a load through one CXL switch costs 100-250 ns, over RDMA more than 1 us", "[fabric]") {
  const auto t = fabric::presets::cxl_single_switch();
  const double cxl = ns(t.idle_latency(t.find("host0"), t.find("tray0")));
  CHECK(cxl >= 100);
  CHECK(cxl <= 250);
  const auto r = fabric::presets::rdma_cluster();
  CHECK(ns(r.idle_latency(r.find("host0"), r.find("memserver0"))) > 1000);
}

TEST_CASE("2. latency rises strictly with every CXL switch hop", "[fabric]") {
  double previous = 0;
  for (int switches = 0; switches <= 4; ++switches) {
    fabric::topology t({.cxl_version = 3, .pbr = true});
    auto at = t.add_host("host");
    for (int s = 0; s < switches; ++s) {
      const auto sw = t.add_switch("sw" + std::to_string(s));
      t.connect(at, sw, links::cxl3_x16::descriptor);
      at = sw;
    }
    t.connect(at, t.add_memory("tray", 1_TB), links::cxl3_x16::descriptor);
    t.validate();
    const double now = ns(t.idle_latency(t.find("host"), t.find("tray")));
    INFO(switches << " switches: " << now << " ns");
    CHECK(now > previous);
    CHECK(t.switch_hops(t.find("host"), t.route(t.find("host"), t.find("tray"))) == static_cast<std::size_t>(switches));
    previous = now;
  }
}

TEST_CASE("3. latency order: CXL <= NVLink < UALink < RDMA, and tier-2 far below storage", "[fabric]") {
  const auto cxl = fabric::presets::cxl_single_switch();
  const auto nvl = fabric::presets::nvl72_cxl();
  const auto ual = fabric::presets::ualink_pod(8);
  const auto rdma = fabric::presets::rdma_cluster();
  const double t_cxl = ns(cxl.idle_latency(cxl.find("host0"), cxl.find("tray0")));
  const double t_nvl = ns(nvl.idle_latency(nvl.find("gpu0"), nvl.find("gpu1")));
  const double t_ual = ns(ual.idle_latency(ual.find("acc0"), ual.find("acc1")));
  const double t_rdma = ns(rdma.idle_latency(rdma.find("host0"), rdma.find("host1")));
  CHECK(t_cxl <= t_nvl);
  CHECK(t_nvl < t_ual);
  CHECK(t_ual < t_rdma);
  CHECK(t_nvl < 500);
  CHECK(t_ual < 1000);
  CHECK(t_cxl * 100 < ns(tiers::nvme::descriptor.latency));
}

TEST_CASE("4. a bulk transfer takes its wire bytes over the link's bandwidth plus the latency", "[fabric]") {
  struct case_t {
    link_descriptor link;
    double gbps;
  };
  for (const auto& c : {case_t{links::cxl3_x16::descriptor, 128}, case_t{links::ualink1::descriptor, 100},
                        case_t{links::nvlink5::descriptor, 50}}) {
    fabric::topology t;
    const auto a = t.add_host("a"), b = t.add_memory("b", 1_TB);
    t.connect(a, b, c.link);
    fabric::simulator sim(t);
    const auto f = sim.transfer(a, b, 1_GB);
    sim.run();
    INFO(c.link.name);
    CHECK(c.link.bandwidth.value() == Approx(c.gbps * 1e9));
    CHECK(sim.finish(f).value() == Approx(c.link.latency.value() + sim.wire_bytes(f) / (c.gbps * 1e9)));
    CHECK(sim.wire_bytes(f) >= 1e9);  // headers and padding are paid for
  }
}

TEST_CASE("5. messages travel as whole flits and packets", "[fabric]") {
  using fabric::packetize;
  using fabric::wire_format;
  CHECK(packetize(wire_format::nvlink, 1).bytes == 48);     // a 1-byte NVLink message still costs a 48 B packet
  CHECK(packetize(wire_format::nvlink, 256).bytes == 272);  // the largest packet
  CHECK(packetize(wire_format::nvlink, 257).units == 2);
  CHECK(packetize(wire_format::cxl_hbr, 64).bytes == 68);
  CHECK(packetize(wire_format::cxl_hbr, 65).bytes == 136);
  CHECK(packetize(wire_format::cxl_pbr, 241).bytes == 512);
  CHECK(packetize(wire_format::ualink, 641).bytes == 1280);
  // The simulator charges the same: a 1-byte message over NVLink moves 48 B.
  fabric::topology t;
  const auto a = t.add_accelerator("a"), b = t.add_accelerator("b");
  t.connect(a, b, links::nvlink5::descriptor);
  fabric::simulator sim(t);
  CHECK(sim.wire_bytes(sim.transfer(a, b, 1_B)) == 48);
}

TEST_CASE("6. CXL version gates refuse what a version cannot do, naming the rule", "[fabric]") {
  auto cascaded = [](int version) {
    fabric::topology t({.cxl_version = version, .pbr = version == 3});
    const auto h = t.add_host("h"), s1 = t.add_switch("s1"), s2 = t.add_switch("s2");
    t.connect(h, s1, links::cxl2_x16::descriptor);
    t.connect(s1, s2, links::cxl2_x16::descriptor);
    t.connect(s2, t.add_memory("m", 1_TB), links::cxl2_x16::descriptor);
    return t;
  };
  CHECK_THROWS_WITH(cascaded(2).validate(), Catch::Contains("cxl2.switching.single_level"));
  CHECK_NOTHROW(cascaded(3).validate());
  CHECK_THROWS_WITH(cascaded(1).validate(), Catch::Contains("cxl1.switching"));
  CHECK_THROWS_WITH(fabric::topology({.cxl_version = 2, .pbr = true}).validate(), Catch::Contains("cxl.pbr"));
  // 257 memory devices below one root port: too many for 2.0, fine for 3.0.
  for (int version : {2, 3}) {
    fabric::topology t({.cxl_version = version});
    const auto h = t.add_host("h"), s = t.add_switch("s");
    t.connect(h, s, links::cxl2_x16::descriptor);
    for (int m = 0; m < 257; ++m)
      t.connect(s, t.add_memory("m" + std::to_string(m), 1_TB), links::cxl2_x16::descriptor);
    if (version == 2)
      CHECK_THROWS_WITH(t.validate(), Catch::Contains("cxl2.memory_devices_per_root_port"));
    else
      CHECK_NOTHROW(t.validate());
  }
  // Memory shared by two hosts needs 3.0.
  const auto pool = fabric::presets::cxl_single_switch(2, 1, 2);
  fabric::memory_model mem(pool);
  CHECK_THROWS_WITH(mem.add_region(fabric::region_kind::coherent, {pool.find("host0"), pool.find("host1")}, 8),
                    Catch::Contains("cxl2.sharing"));
}

TEST_CASE("7. scale limits: 256 coherent accelerators, 576 NVLink GPUs, 1,024 UALink accelerators", "[fabric]") {
  CHECK_NOTHROW(fabric::presets::ualink_pod(1024).validate());
  CHECK_THROWS_WITH(fabric::presets::ualink_pod(1025).validate(), Catch::Contains("ualink.cluster"));
  CHECK_NOTHROW(fabric::presets::nvl72_cxl().validate());
  CHECK_THROWS_WITH(fabric::presets::nvl72_cxl(578).validate(), Catch::Contains("nvlink.domain"));
  // The limit is per domain: two of 400 GPUs joined by InfiniBand are two domains; joined by NVLink, one of 800.
  fabric::topology two;
  const auto ib = two.add_switch("ib", link_family::infiniband);
  std::vector<std::uint32_t> nv;
  for (int d = 0; d < 2; ++d) {
    nv.push_back(two.add_switch("nvswitch" + std::to_string(d), link_family::nvlink));
    for (int g = 0; g < 400; ++g) {
      const auto gpu = two.add_accelerator("gpu" + std::to_string(d) + "-" + std::to_string(g));
      two.connect(gpu, nv.back(), links::nvlink5_x18::descriptor);
      two.connect(gpu, ib, links::infiniband_400g::descriptor);
    }
  }
  CHECK_NOTHROW(two.validate());
  two.connect(nv[0], nv[1], links::nvlink5_x18::descriptor);
  CHECK_THROWS_WITH(two.validate(), Catch::Contains("800 GPUs in one NVLink domain"));
  fabric::topology t;
  const auto s = t.add_switch("s");
  for (int a = 0; a < 257; ++a) t.connect(t.add_accelerator("a" + std::to_string(a)), s, links::cxl3_x16::descriptor);
  CHECK_THROWS_WITH(t.validate(), Catch::Contains("cxl.coherent_accelerators"));
}

TEST_CASE("8. XLink partitions are not coherent: a write is unseen until an explicit copy, mixing XLinks is refused",
          "[fabric]") {
  const auto t = fabric::presets::nvl72_cxl(4, 1);
  fabric::memory_model mem(t);
  const auto a = t.find("gpu0"), b = t.find("gpu1");
  const auto part = mem.add_region(fabric::region_kind::xlink_partition, {a}, 16);
  mem.store(a, part, 3, 41);
  CHECK(mem.load(b, part, 3) == 41);  // a read of a partition b does not own: an XLink transfer
  CHECK(mem.xlink_transfers() == 1);
  mem.store(a, part, 3, 42);
  CHECK(mem.load(b, part, 3) == 41);  // b's cached copy is stale
  mem.copy(b, part);
  CHECK(mem.load(b, part, 3) == 42);  // until it copies
  CHECK_THROWS_WITH(mem.store(b, part, 3, 7), Catch::Contains("does not own"));
  fabric::topology mixed;
  const auto g = mixed.add_accelerator("g");
  mixed.connect(g, mixed.add_switch("nv", link_family::nvlink), links::nvlink5::descriptor);
  mixed.connect(g, mixed.add_switch("ua", link_family::ualink), links::ualink1::descriptor);
  CHECK_THROWS_WITH(mixed.validate(), Catch::Contains("xlink.mixed"));
}

TEST_CASE("9. a coherent region invalidates the other copies on a write", "[fabric]") {
  const auto t = fabric::presets::cxl_two_level();
  fabric::memory_model mem(t);
  const auto h0 = t.find("host0"), h1 = t.find("host1");
  const auto shared = mem.add_region(fabric::region_kind::coherent, {h0, h1}, 16);
  mem.store(h0, shared, 5, 1);
  CHECK(mem.load(h1, shared, 5) == 1);
  mem.store(h0, shared, 5, 2);  // back-invalidates h1's copy
  CHECK(mem.invalidations() == 1);
  CHECK(mem.load(h1, shared, 5) == 2);
}

TEST_CASE("10. under HBR a segment has one host, PBR lets several map it", "[fabric]") {
  const auto hbr = [] {
    fabric::topology t({.cxl_version = 3, .pbr = false});
    const auto s = t.add_switch("s");
    t.connect(t.add_host("h0"), s, links::cxl3_x16::descriptor);
    t.connect(t.add_host("h1"), s, links::cxl3_x16::descriptor);
    t.connect(s, t.add_memory("m", 1_TB), links::cxl3_x16::descriptor);
    return t;
  }();
  fabric::memory_model mem(hbr);
  CHECK_THROWS_WITH(mem.add_region(fabric::region_kind::coherent, {hbr.find("h0"), hbr.find("h1")}, 4),
                    Catch::Contains("hbr.static_partition"));
  CHECK_NOTHROW(mem.add_region(fabric::region_kind::coherent, {hbr.find("h0")}, 4));
  const auto pbr = fabric::presets::cxl_two_level();
  fabric::memory_model shared(pbr);
  CHECK_NOTHROW(shared.add_region(fabric::region_kind::coherent, {pbr.find("host0"), pbr.find("host1")}, 4));
  // PBR moves 256 B flits, HBR 68 B ones.
  fabric::simulator a(hbr), b(pbr);
  CHECK(a.wire_bytes(a.transfer(hbr.find("h0"), hbr.find("m"), 240_B)) == 4 * 68);
  CHECK(b.wire_bytes(b.transfer(pbr.find("host0"), pbr.find("tray0.0"), 240_B)) == 256);
}

TEST_CASE("12. exclusive-cache mode: a block lives in exactly one tier, tier-2 only by bulk moves", "[fabric]") {
  fabric::exclusive_cache cache(4, 16);
  for (std::size_t b : {0u, 1u, 2u, 3u, 4u, 0u, 5u, 1u, 9u, 9u}) cache.access(b);
  for (std::size_t b = 0; b < 16; ++b) REQUIRE(cache.in_tier1(b) != cache.in_tier2(b));
  CHECK(cache.hits() == 1);
  CHECK(cache.bulk_moves() == 9 + 5);  // nine blocks came up; five went back down to make room
  CHECK_THROWS_WITH(cache.load_from_tier2(7), Catch::Contains("bulk CXL.io moves"));
}

TEST_CASE("14. a cross-domain access pays the bridge's conversion unless its cache has the request", "[fabric]") {
  fabric::bridge_cache bridge(2);
  CHECK(bridge.cross(0x1000) == fabric::parameters::bridge_conversion);
  CHECK(bridge.cross(0x1000) == fabric::parameters::bridge_cache_hit);
  bridge.cross(0x2000);
  bridge.cross(0x3000);  // evicts 0x1000
  CHECK(bridge.cross(0x1000) == fabric::parameters::bridge_conversion);
  CHECK(fabric::parameters::bridge_cache_hit < fabric::parameters::bridge_conversion);
}

TEST_CASE("15. coherent shared loads cut a halo exchange's communication time several times over RDMA", "[fabric]") {
  // 8 neighbours, 4 KiB halos each. RDMA: a copy and a completion flag per neighbour, both paying the
  // RDMA latency; coherent CXL: the neighbour's halo is written to a shared region and loaded from it.
  const int neighbours = 8;
  const bytes halo = 4_KiB;
  const auto rdma = fabric::presets::rdma_cluster(neighbours + 1, 0);
  fabric::simulator net(rdma);
  std::vector<std::size_t> copies;
  for (int k = 1; k <= neighbours; ++k)
    copies.push_back(net.transfer(rdma.find("host0"), rdma.find("host" + std::to_string(k)), halo));
  net.run();
  double rdma_time = 0;
  for (auto f : copies) rdma_time = std::max(rdma_time, net.finish(f).value());
  rdma_time += rdma.idle_latency(rdma.find("host1"), rdma.find("host0")).value();  // the sync back
  const auto cxl = fabric::presets::cxl_two_level(neighbours + 1, 1, 1);
  fabric::simulator pool(cxl);
  const auto tray = cxl.find("tray0.0");
  const auto put = pool.transfer(cxl.find("host0"), tray, halo * static_cast<double>(neighbours));
  pool.run();
  std::vector<std::size_t> loads;
  for (int k = 1; k <= neighbours; ++k)
    loads.push_back(pool.transfer(cxl.find("host" + std::to_string(k)), tray, halo));
  pool.run();
  double cxl_time = pool.finish(put).value();
  double load_end = 0;
  for (auto f : loads) load_end = std::max(load_end, pool.finish(f).value());
  cxl_time = load_end;
  INFO("RDMA " << rdma_time * 1e6 << " us, coherent CXL " << cxl_time * 1e6 << " us");
  CHECK(rdma_time / cxl_time >= 3.0);  // the report's runs: 3.57x (CFD) and 6.46x (PIC)
}

TEST_CASE("links are shared max-min fairly", "[fabric]") {
  // Two flows share link A (10 GB/s); one of them also crosses link B (2 GB/s): it gets 2, the other 8.
  fabric::topology t;
  const auto h1 = t.add_host("h1"), h2 = t.add_host("h2"), s = t.add_switch("s", link_family::ethernet),
             s2 = t.add_switch("s2", link_family::ethernet), m1 = t.add_memory("m1", 1_TB),
             m2 = t.add_memory("m2", 1_TB);
  link_descriptor wide = links::ethernet_400g::descriptor, narrow = wide;
  wide.bandwidth = 10_GBps;
  wide.latency = seconds{};
  narrow.bandwidth = 2_GBps;
  narrow.latency = seconds{};
  t.connect(h1, s, wide);
  t.connect(h2, s, wide);
  t.connect(s, s2, wide);  // link A: both flows
  t.connect(s2, m1, wide);
  t.connect(s2, m2, narrow);  // link B: only the second
  fabric::simulator sim(t);
  const auto f1 = sim.transfer(h1, m1, 8_GB), f2 = sim.transfer(h2, m2, 2_GB);
  sim.run();
  CHECK(sim.finish(f1).value() == Approx(1.0).epsilon(1e-6));  // 8 GB at 8 GB/s
  CHECK(sim.finish(f2).value() == Approx(1.0).epsilon(1e-6));  // 2 GB at 2 GB/s
}

TEST_CASE("a loaded link raises a small access's latency, idle it costs the idle latency", "[fabric]") {
  auto probe_under = [](int background) {
    const auto t = fabric::presets::cxl_single_switch(1, 1, 2);
    fabric::simulator sim(t);
    for (int k = 0; k < background; ++k) sim.transfer(t.find("host0"), t.find("tray0"), 1_GB);
    const auto probe = sim.transfer(t.find("host0"), t.find("tray0"), 64_B);
    sim.run();
    return sim.finish(probe).value();
  };
  const auto t = fabric::presets::cxl_single_switch(1, 1, 2);
  const double idle = t.idle_latency(t.find("host0"), t.find("tray0")).value();
  CHECK(probe_under(0) == Approx(idle + 68 / 64e9));
  CHECK(probe_under(4) > probe_under(1));
  CHECK(probe_under(1) > probe_under(0));
}

// How fast it simulates (target: under 2 s, at least 5 million events per second) is measured by
// trinity-bench-place (fabric/ring_allreduce/1024), not asserted here: a wall-clock bound fails on a loaded
// or sanitized build without the simulator being wrong.
TEST_CASE("a ring all-reduce over 1,024 UALink accelerators takes the time and the events the ring implies",
          "[fabric]") {
  const auto t = fabric::presets::ualink_pod(1024);
  const auto ranks = t.of_kind(node_kind::accelerator);
  const auto r = fabric::ring_all_reduce(t, ranks, 1_GB);
  // No link is shared in a ring on a star: each step is the latency plus a chunk's wire bytes at 100 GB/s.
  const double chunk_wire = fabric::packetize(fabric::wire_format::ualink, 1e9 / 1024).bytes;
  const double expected = 2.0 * 1023 * (800e-9 + chunk_wire / 100e9);
  CHECK(r.time.value() == Approx(expected).epsilon(0.01));
  CHECK(r.events == 2u * 1023 * 1024 * 2);
}

TEST_CASE("a ring collective's steps simulated once and counted give the step-by-step replay's time and events",
          "[fabric]") {
  // Under contention (rings that share the pod's uplinks under PBR, where a flow's path is chosen by the load it
  // meets) and without: each step starts on an idle fabric with the same flows, so one step stands for all.
  for (const bool shared : {false, true}) {
    const auto t = fabric::presets::ualink_pod(16);
    const auto ranks = t.of_kind(node_kind::accelerator);
    std::vector<std::vector<std::uint32_t>> rings;
    if (shared)
      rings = {{ranks[0], ranks[5], ranks[10], ranks[15]}, {ranks[1], ranks[6], ranks[11], ranks[12]}};
    else
      rings = {ranks};
    for (const std::size_t steps : {std::size_t{1}, std::size_t{7}, std::size_t{30}}) {
      const auto replayed = fabric::ring_steps(t, rings, 3_MB, steps);
      const auto counted = fabric::repeated_ring_steps(t, rings, 3_MB, steps);
      INFO((shared ? "two rings" : "one ring") << ", " << steps << " steps");
      CHECK(counted.time.value() == Approx(replayed.time.value()).epsilon(1e-12));
      CHECK(counted.events == replayed.events);
    }
  }
  CHECK(fabric::repeated_ring_steps(fabric::presets::ualink_pod(4), {{0, 1}}, 1_MB, 0).events == 0);
}

TEST_CASE("10b. port-based routing spreads flows over parallel paths, hierarchy-based routing does not", "[fabric]") {
  auto two_paths = [](bool pbr) {
    fabric::topology t({.cxl_version = 3, .pbr = pbr});
    const auto h = t.add_host("h"), s1 = t.add_switch("s1"), s2 = t.add_switch("s2"), m = t.add_memory("m", 1_TB);
    for (auto s : {s1, s2}) {
      t.connect(h, s, links::cxl3_x16::descriptor);
      t.connect(s, m, links::cxl3_x16::descriptor);
    }
    return t;
  };
  for (const bool pbr : {false, true}) {
    const auto t = two_paths(pbr);
    CHECK(t.routes(t.find("h"), t.find("m")).size() == 2);
    fabric::simulator sim(t);
    const auto a = sim.transfer(t.find("h"), t.find("m"), 1_GB), b = sim.transfer(t.find("h"), t.find("m"), 1_GB);
    sim.run();
    const double alone = sim.wire_bytes(a) / 128e9;
    INFO((pbr ? "PBR" : "HBR"));
    // PBR: each flow on its own path, at full speed; HBR: both on one path, at half.
    CHECK(sim.finish(b).value() == Approx((pbr ? 1 : 2) * alone).epsilon(0.01));
  }
}

}  // namespace fabric_behaviours_test
