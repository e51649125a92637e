#include <catch2/catch.hpp>

#include <trinity/links.hpp>

namespace links_link_traits_test {

using namespace trinity;
using namespace trinity::literals;

TEST_CASE("a direct transfer costs the link's latency plus bytes over its bandwidth", "[links]") {
  using t = link_traits<tiers::gb200_hbm3e, tiers::grace_lpddr5x>;
  REQUIRE(t::direct);
  CHECK(t::transfer_time(900_GB) == 1_s + links::nvlink_c2c::descriptor.latency);
}

TEST_CASE("a staged transfer pays both latencies and runs at the slower hop", "[links]") {
  using t = link_traits<tiers::gb200_hbm3e, tiers::nvme>;
  REQUIRE(t::staged);
  // HBM -> Grace over NVLink-C2C (900 GB/s), Grace -> NVMe over PCIe 5 x4 (16 GB/s).
  const seconds expected =
      links::nvlink_c2c::descriptor.latency + links::pcie5_x4::descriptor.latency + 16_GB / 16_GBps;
  CHECK(t::transfer_time(16_GB).value() == Approx(expected.value()).epsilon(1e-15));
  // Symmetric.
  CHECK(link_traits<tiers::nvme, tiers::gb200_hbm3e>::transfer_time(16_GB) == t::transfer_time(16_GB));
}

TEST_CASE("a copy within a tier reads and writes through its bandwidth", "[links]") {
  using t = link_traits<tiers::host_ddr, tiers::host_ddr>;
  CHECK(t::transfer_time(307.2_GB) == tiers::host_ddr::descriptor.latency + 2_s);
}

TEST_CASE("the report's two tiers are linked as §6.3 describes", "[links][cxl]") {
  // Tier-1 reaches tier-2 pools over CXL, directly (bulk CXL.io, L2140-2142).
  CHECK(std::is_same_v<link_traits<tiers::gb200_hbm3e, tiers::cxl_capacity>::link, links::cxl3_x16>);
  // Tier-1 coherent memory exchanges with tier-2 only through the accelerator.
  CHECK(std::is_same_v<link_traits<tiers::cxl_coherent, tiers::cxl_capacity>::staging, tiers::gb200_hbm3e>);
}

}  // namespace links_link_traits_test
