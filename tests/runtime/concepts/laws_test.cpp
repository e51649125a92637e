// Laws every model of a concept obeys (STYLE.md: law checkers per concept).
// Each preset runs the same body, so a new preset is checked by adding it to
// the list.
#include <catch2/catch.hpp>

#include <trinity/concepts.hpp>
#include <trinity/links.hpp>
#include <trinity/model.hpp>
#include <trinity/tiers.hpp>

#include <tuple>

namespace concepts_laws_test {

using namespace trinity;
using namespace trinity::literals;

using all_tiers =
    std::tuple<tiers::gb200_hbm3e, tiers::h100_hbm3, tiers::h200_hbm3e, tiers::grace_lpddr5x, tiers::host_ddr,
               tiers::cxl_coherent, tiers::cxl_capacity, tiers::nvme, tiers::remote_storage>;
using all_links =
    std::tuple<links::nvlink5, links::nvlink5_x18, links::nvlink_c2c, links::ualink1, links::cxl2_x16, links::cxl3_x16,
               links::pcie5_x16, links::pcie5_x4, links::pcie6_x16, links::infiniband_400g, links::infiniband_800g,
               links::ethernet_400g, links::ethernet_800g, links::rdma>;

TEMPLATE_LIST_TEST_CASE("tier law: reading n bytes takes at least latency and n / bandwidth", "[laws][tiers]",
                        all_tiers) {
  STATIC_REQUIRE(Tier<TestType>);
  constexpr const tier_descriptor& d = TestType::descriptor;
  for (const bytes n : {0_B, 64_B, 1_MB, 1_GB}) {
    CHECK(d.access_time(n) >= d.latency);
    CHECK(d.access_time(n) >= n / d.bandwidth);
    CHECK(d.access_energy(n) >= 0_J);
  }
  // Twice the bytes never costs less, and costs at most twice.
  CHECK(d.access_time(2_GB) >= d.access_time(1_GB));
  CHECK(d.access_time(2_GB) <= 2.0 * d.access_time(1_GB));
  // Tiers are described from the documents, not invented silently.
  CHECK_FALSE(d.source.empty());
}

TEMPLATE_LIST_TEST_CASE("link law: a message costs its latency plus size over bandwidth", "[laws][links]", all_links) {
  STATIC_REQUIRE(Link<TestType>);
  constexpr const link_descriptor& d = TestType::descriptor;
  CHECK(d.transfer_time(0_B) == d.latency);
  for (const bytes n : {1_B, 1_KiB, 1_GB}) {
    CHECK(d.transfer_time(n) >= n / d.bandwidth);
    CHECK(d.transfer_time(n) > d.transfer_time(0_B));
  }
  CHECK(d.flit > 0_B);
  CHECK_FALSE(d.source.empty());
}

TEMPLATE_LIST_TEST_CASE("route law: every reachable pair moves bytes no faster than its slowest link", "[laws][links]",
                        all_tiers) {
  // Against the GB200 HBM: direct routes pay one link, staged routes two.
  using route = link_traits<tiers::gb200_hbm3e, TestType>;
  if constexpr (route::reachable) {
    const seconds t = route::transfer_time(10_GB);
    CHECK(t > 0_s);
    if constexpr (route::direct) {
      CHECK(t == route::link::descriptor.transfer_time(10_GB));
    }
    if constexpr (route::staged) {
      using first = typename link_traits<tiers::gb200_hbm3e, typename route::staging>::link;
      using second = typename link_traits<typename route::staging, TestType>::link;
      CHECK(t >= 10_GB / first::descriptor.bandwidth);
      CHECK(t >= 10_GB / second::descriptor.bandwidth);
      CHECK(t >= first::descriptor.latency + second::descriptor.latency);
    }
  } else {
    SUCCEED("not reachable from HBM in the preset topology");
  }
}

TEST_CASE("policy law: a trade of nothing spends nothing and saves nothing", "[laws][policies]") {
  const model::memory_for_compute cache{{50, 1e9_FLOP, 20, 2_GB}};
  const auto c = cache.price({0_B, 0.0});
  CHECK(c.spent() == 0_B);
  CHECK(c.saved() == 0_FLOP);
  CHECK_FALSE(c.pays());

  const model::bandwidth_for_memory stream{0.5, 16_GB, 1.0};
  const auto d = stream.price({200_GB, 100_GB, 2});  // everything fits: no deficit
  CHECK(d.spent() == 0_B);
  CHECK(d.saved() == 0_B);

  const model::compute_for_bandwidth<> codec{model::paper_video_frontier(), 921600_px};
  const auto f = codec.price({1e10_FLOP, 1e10_FLOP});
  CHECK(f.spent() == 0_FLOP);
  CHECK(f.saved() == 0_B);
}

TEST_CASE("policy law: spending more never saves less", "[laws][policies]") {
  const model::compute_for_bandwidth<> codec{model::paper_video_frontier(), 921600_px};
  bytes previous{};
  for (double c = 1e9; c <= 1e11; c *= 2) {
    const bytes saved = codec.price({1e9_FLOP, flops{c}}).saved();
    CHECK(saved >= previous);
    previous = saved;
  }
  const model::memory_for_compute cache{{50, 1e9_FLOP, 20, 2_GB}};
  const model::power_law h{per_byte{1e-10}, 0.6};
  flops last{};
  for (double g = 1; g < 1e4; g *= 3) {
    const flops saved = cache.price({bytes{g * 1e9}, h(bytes{g * 1e9})}).saved();
    CHECK(saved >= last);
    last = saved;
  }
}

}  // namespace concepts_laws_test
