// Edge streaming (issue 7): where a camera's analysis runs — on the device, split at a feature, or on a
// server fed video — priced per frame against closed forms, with the planner's laws: less uplink bandwidth
// never sends more bytes, less device memory never keeps more on the device, more device compute never does
// less work there; every choice keeps up with the frame rate.
#include <catch2/catch.hpp>

#include <trinity/plan.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace plan_edge_test {

using namespace trinity;

namespace {
constexpr plan::objective objectives[] = {plan::objective::time, plan::objective::energy, plan::objective::cost};

plan::edge_plan_result run(const plan::system& s, const plan::edge_workload& w, plan::objective o) {
  return plan::plan_edge(s, w, plan::default_feature_codecs(), {.objective = o, .link_budget = std::nullopt});
}

// A workload whose feature at the cut is small enough to send, so that all three placements compete.
plan::edge_workload small_feature() {
  auto w = plan::presets::edge_video_analytics();
  w.feature_size = bytes{64e3};
  return w;
}
}  // namespace

TEST_CASE("an edge frame costs what the closed forms say", "[plan][edge]") {
  const auto s = plan::presets::edge_5g_cloud();
  const auto w = plan::presets::edge_video_analytics();
  const auto codecs = plan::default_feature_codecs();
  const double up = 25e6 / 8, lat = 10e-3, server = 1979e12, device = 20e12;  // both at their INT8 rates

  // h264 to the server: 1920·1080·0.15/8 bytes; the server decodes (1e9) and analyses (78.9e9).
  const auto v = plan::price(s, w, codecs, {plan::placement_site::server, 0});
  CHECK(v.sent.value() == Approx(1920.0 * 1080 * 0.15 / 8));
  CHECK(v.total.time.value() == Approx(lat + 38880 / up + 79.9e9 / server).epsilon(1e-12));
  // The camera's device idles (5 W) through the whole frame interval it does no work in.
  CHECK(v.total.energy.value() == Approx(38880 * 0.8e-6 + 79.9e9 / server * 700 + 5.0 / 30).epsilon(1e-12));
  CHECK(v.dollars == Approx(38880 / 1e9 * 2.0 + 79.9e9 / server / 3600 * 6.16).epsilon(1e-12));
  CHECK(v.total.memory.value() == 0);

  // On the device: the whole network and its weights there, only results go up.
  const auto d = plan::price(s, w, codecs, {plan::placement_site::device, 0});
  CHECK(d.total.time.value() == Approx(78.9e9 / device + lat + 2400 / up).epsilon(1e-12));
  CHECK(d.tier_bytes[0].value() == Approx(51.8e6));
  CHECK(d.server_flops.value() == 0);
  CHECK(d.total.energy.value() ==
        Approx(78.9e9 / device * 15 + (1.0 / 30 - 78.9e9 / device) * 5 + 2400 * 0.8e-6).epsilon(1e-12));

  // Split with int8: the head's FLOPs on the device, the feature at a quarter of fp32 (3.88x), coded both ends.
  std::size_t int8 = 0;
  while (codecs[int8].name != "int8") ++int8;
  const auto sp = plan::price(s, w, codecs, {plan::placement_site::split, int8});
  const double feature = 512.0 * 40 * 40 * 4;
  CHECK(sp.sent.value() == Approx(feature / codecs[int8].ratio));
  CHECK(sp.device_flops.value() == Approx(0.4 * 78.9e9));
  CHECK(sp.device_time.value() ==
        Approx(0.4 * 78.9e9 / device + feature / codecs[int8].encode_rate.value()).epsilon(1e-12));
  CHECK(sp.error == codecs[int8].relative_error);
}

TEST_CASE("the edge preset's plan keeps up, fits, and the preset's 3.3 MB feature cannot cross a 5G uplink",
          "[plan][edge]") {
  const auto s = plan::presets::edge_5g_cloud();
  const auto w = plan::presets::edge_video_analytics();
  for (const auto o : objectives) {
    const auto r = run(s, w, o);
    const auto& c = r.chosen();
    INFO(plan::to_string(o));
    REQUIRE(c.fits());
    CHECK(c.cost.sent / w.frame_interval() <= s.interconnect.bandwidth);
    CHECK(c.cost.device_time <= w.frame_interval());
    CHECK(c.cost.server_time <= w.frame_interval());
    CHECK(c.cost.tier_bytes[0] <= s.tiers[0].capacity);
    CHECK(std::find(r.pareto.begin(), r.pareto.end(), r.choice) != r.pareto.end());
    for (const auto& e : r.candidates) {
      if (e.plan.where == plan::placement_site::split) CHECK_THAT(e.violation, Catch::Contains("5g-uplink rate"));
      if (e.fits())
        CHECK(plan::detail::score(e.cost.total.time, e.cost.total.energy, e.cost.dollars, o) >=
              plan::detail::score(c.cost.total.time, c.cost.total.energy, c.cost.dollars, o));
    }
    CHECK_FALSE(r.explanation.binding_before.empty());
    CHECK(r.explanation.rejected.size() == r.candidates.size() - 1);
  }
  // Latency: the generative codec's 100x decoder FLOPs are nothing to an H100 next to 29 kB saved on 5G.
  CHECK(run(s, w, plan::objective::time).chosen().plan == plan::edge_plan{plan::placement_site::server, 2});
  // Cost: a frame analysed on an owned device beats renting a GPU and paying for the bytes.
  CHECK(run(s, w, plan::objective::cost).chosen().plan.where == plan::placement_site::device);
}

TEST_CASE("law: less uplink bandwidth never sends more bytes per frame", "[plan][edge][laws]") {
  for (const auto& w : {plan::presets::edge_video_analytics(), small_feature()})
    for (const auto o : objectives) {
      auto s = plan::presets::edge_5g_cloud();
      double last = INFINITY;
      std::size_t places = 0;
      plan::placement_site seen = plan::placement_site::server;
      for (double mbit = 10'000; mbit >= 0.5; mbit /= 1.5) {
        s.interconnect.bandwidth = bytes_per_second{mbit * 1e6 / 8};
        plan::edge_plan_result r;
        try {
          r = run(s, w, o);
        } catch (const invalid_input&) {
          break;  // nothing keeps up any more; narrower links only shrink the feasible set further
        }
        INFO(plan::to_string(o) << " at " << mbit << " Mbit/s");
        CHECK(r.chosen().cost.sent.value() <= last);
        last = r.chosen().cost.sent.value();
        places += r.chosen().plan.where != seen;
        seen = r.chosen().plan.where;
      }
      if (o == plan::objective::time) CHECK(places >= 1);  // the sweep does move the choice
    }
}

TEST_CASE("law: less device memory never keeps more on the device", "[plan][edge][laws]") {
  const auto w = small_feature();
  for (const auto o : objectives) {
    auto s = plan::presets::edge_5g_cloud();
    s.interconnect.bandwidth = bytes_per_second{1e9};  // every placement keeps up; memory decides
    double last = INFINITY;
    for (double mb = 100; mb >= 1; mb /= 1.3) {
      s.tiers[0].capacity = bytes{mb * 1e6};
      const auto r = run(s, w, o);
      INFO(plan::to_string(o) << " at " << mb << " MB");
      CHECK(r.chosen().cost.tier_bytes[0] <= s.tiers[0].capacity);
      CHECK(r.chosen().cost.tier_bytes[0].value() <= last);
      last = r.chosen().cost.tier_bytes[0].value();
    }
    CHECK(last == 0);  // at 1 MB no part of a 52 MB network fits
  }
}

TEST_CASE("law: more device compute never does less work on the device", "[plan][edge][laws]") {
  const auto w = small_feature();
  auto s = plan::presets::edge_5g_cloud();
  s.interconnect.bandwidth = bytes_per_second{50e6};
  s.device.compute_by_precision.clear();  // one rate for every precision: the one swept
  double last = -1;
  for (double tops = 0.5; tops <= 2000; tops *= 1.5) {
    s.device.compute = flops_per_second{tops * 1e12};
    const auto r = run(s, w, plan::objective::time);
    INFO(tops << " TOPS");
    CHECK(r.chosen().cost.device_flops.value() >= last);
    last = r.chosen().cost.device_flops.value();
  }
  CHECK(last == Approx(78.9e9));  // a fast enough device runs it all
}

TEST_CASE("the error budget bars a lossy feature codec, by name", "[plan][edge]") {
  auto w = small_feature();
  w.error_budget = 0;
  const auto r = run(plan::presets::edge_5g_cloud(), w, plan::objective::time);
  bool named = false;
  for (const auto& e : r.candidates)
    if (e.plan.where == plan::placement_site::split && r.codecs[e.plan.option].name == "int8") {
      CHECK_THAT(e.violation, Catch::Contains("error budget: int8"));
      named = true;
    }
  CHECK(named);
  CHECK(r.chosen().cost.error == 0);
}

TEST_CASE("edge input is refused by name", "[plan][edge]") {
  const auto w = plan::presets::edge_video_analytics();
  CHECK_THROWS_WITH(run(plan::presets::h100_infiniband(), w, plan::objective::time),
                    Catch::Contains("server") && Catch::Contains("Fix"));
  auto bad = w;
  bad.head_fraction = 1;
  CHECK_THROWS_WITH(run(plan::presets::edge_5g_cloud(), bad, plan::objective::time),
                    Catch::Contains("workload.head_fraction"));
  bad = w;
  bad.encodings[1].bits_per_pixel = -1;
  CHECK_THROWS_WITH(run(plan::presets::edge_5g_cloud(), bad, plan::objective::time),
                    Catch::Contains("workload.encodings[1].bits_per_pixel"));
  bad = w;
  bad.frames_per_second = 100'000;  // nothing analyses a frame in 10 us
  CHECK_THROWS_WITH(run(plan::presets::edge_5g_cloud(), bad, plan::objective::time),
                    Catch::Contains("no placement keeps up") && Catch::Contains("Fix"));
  auto unpriced = plan::presets::edge_5g_cloud();
  unpriced.interconnect.price_per_gb = 0;
  unpriced.server->price_per_hour = 0;
  CHECK_THROWS_WITH(run(unpriced, w, plan::objective::cost), Catch::Contains("objective") && Catch::Contains("price"));
}

TEST_CASE("the edge plan's frames cross the simulated uplink in the predicted time, and queue when they cannot",
          "[plan][edge][simulate]") {
  const auto s = plan::presets::edge_5g_cloud();
  const auto w = plan::presets::edge_video_analytics();
  auto r = run(s, w, plan::objective::time);
  const auto sim = plan::simulate(s, w, r);
  REQUIRE(sim.size() == 1);
  CHECK(sim[0].ratio() == Approx(1.0).epsilon(1e-9));
  CHECK(sim[0].events > 0);
  // Force a plan the uplink cannot keep up with: h264 needing twice the link's rate. Frames pile up and share the
  // link max-min fairly, i.e. processor sharing: the reference below replays that queue by hand.
  auto slow = s;
  slow.interconnect.bandwidth = bytes_per_second{38880.0 * 30 / 2};
  r.choice = r.baseline;
  r.candidates[r.baseline].cost = plan::price(slow, w, r.codecs, r.candidates[r.baseline].plan);
  const auto q = plan::simulate(slow, w, r);
  std::vector<double> left(30, 1.0 / 15), done(30, -1);  // each frame needs 1/15 s of the whole link
  double t = 0;
  for (;;) {
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < 30; ++i)
      if (i / 30.0 <= t + 1e-15 && done[i] < 0) active.push_back(i);
    const double next = [&] {
      for (std::size_t i = 0; i < 30; ++i)
        if (i / 30.0 > t + 1e-15) return i / 30.0;
      return std::numeric_limits<double>::infinity();
    }();
    if (active.empty()) {
      if (std::isinf(next)) break;
      t = next;
      continue;
    }
    const double n = static_cast<double>(active.size());
    double least = INFINITY;
    for (const auto i : active) least = std::min(least, left[i]);
    const double dt = std::min(least * n, next - t);
    t += dt;
    for (const auto i : active)
      if ((left[i] -= dt / n) < 1e-12) done[i] = t;
  }
  double worst = 0;
  for (std::size_t i = 0; i < 30; ++i) worst = std::max(worst, done[i] - i / 30.0);
  CHECK(q[0].simulated.value() == Approx(10e-3 + worst).epsilon(1e-9));
  CHECK(q[0].ratio() > 10);
}

}  // namespace plan_edge_test
