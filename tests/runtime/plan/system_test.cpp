// A preset system is built from the library's tier and link presets: it holds their descriptors (level,
// family, granule, source), not copies of a few of their fields, and where it departs from one (host memory as
// a GPU sees it over PCIe, a PCIe traversal later; half a Grace per GPU) it says so in the tier's source.
#include <catch2/catch.hpp>

#include <trinity/plan/system.hpp>
#include <trinity/presets.hpp>

#include <string>

namespace plan_system_test {

using namespace trinity;

TEST_CASE("every tier and link of a preset system is a library preset's descriptor, or says how it departs from one",
          "[plan]") {
  for (const auto name : plan::presets::names()) {
    const auto s = *plan::presets::find(name);
    INFO(name);
    for (const auto& t : s.tiers) {
      INFO(t.name);
      const auto preset = find_tier(t.name);
      REQUIRE(preset);
      CHECK(t.level == preset->level);
      CHECK(t.byte_addressable == preset->byte_addressable);
      // A GPU reaching host memory (or a pool behind the host) adds one PCIe traversal to the tier's own loads,
      // and says so.
      if (t.latency != preset->latency) {
        CHECK(t.latency == preset->latency + links::parameters::pcie_latency);
        CHECK(t.source.find("pcie") != std::string::npos);
      }
      CHECK(t.energy == preset->energy);
      const bool same = t.capacity == preset->capacity && t.bandwidth == preset->bandwidth;
      // A departure names the preset's own source after its reason.
      if (same)
        CHECK(t.source == preset->source);
      else
        CHECK(t.source.find(std::string(preset->source)) != std::string::npos);
    }
    std::vector<const plan::priced_link*> links{&s.interconnect};
    if (s.scale_out) links.push_back(&*s.scale_out);
    for (const auto* l : links) {
      INFO(l->name);
      const auto preset = find_link(l->name);
      REQUIRE(preset);
      CHECK(l->family == preset->family);
      CHECK(l->flit == preset->flit);
      CHECK(l->bandwidth == preset->bandwidth);
      CHECK(l->collective_bandwidth == preset->collective_bandwidth);
      CHECK(l->latency == preset->latency);
      CHECK(l->energy == preset->energy);
      CHECK(l->source.find(std::string(preset->source)) != std::string::npos);
    }
  }
}

TEST_CASE("a system's tier and link figures are the library's own: time and energy through the descriptor", "[plan]") {
  const auto s = *plan::presets::find("dgx-h100");
  // The descriptor's methods work on the system's copy: what the cost models call.
  CHECK(s.tiers[0].access_time(bytes{3.35e9}) == tiers::h100_hbm3::descriptor.access_time(bytes{3.35e9}));
  CHECK(s.interconnect.transfer_time(bytes{450e9}) == links::nvlink4_x18::descriptor.transfer_time(bytes{450e9}));
  CHECK(s.interconnect.transfer_time(bytes{450e9}).value() ==
        Approx(1.0 + links::nvlink4_x18::descriptor.latency.value()));
}

TEST_CASE("NVLink's presets carry what NCCL's collectives move, below the line rate, and other links their line rate",
          "[plan]") {
  // NCCL's maintainer's figures: 370 of the H100's 450 GB/s (nccl-tests#212), 230 of the A100's 300 (#149).
  CHECK(links::nvlink4_x18::descriptor.collective_rate().value() == 370e9);
  CHECK(links::nvlink3_x12::descriptor.collective_rate().value() == 230e9);
  CHECK(links::nvlink4_x18::descriptor.bandwidth.value() == 450e9);
  // InfiniBand: 47 of NDR's 50 GB/s (nccl-tests#290: 46-48), 24 of HDR's 25 (nccl#412).
  CHECK(links::infiniband_400g::descriptor.collective_rate().value() == 47e9);
  CHECK(links::infiniband_hdr200::descriptor.collective_rate().value() == 24e9);
  // None measured: the line rate.
  CHECK(links::infiniband_800g::descriptor.collective_rate() == links::infiniband_800g::descriptor.bandwidth);
  CHECK(links::nvlink5_x18::descriptor.collective_rate() == links::nvlink5_x18::descriptor.bandwidth);
  CHECK(owned(links::nvlink4_x18::descriptor).collective_bandwidth.value() == 370e9);
  // A descriptor built at run time is refused past its line rate, by field.
  auto l = owned(links::nvlink4_x18::descriptor);
  l.collective_bandwidth = bytes_per_second{451e9};
  try {
    validate(l);
    FAIL("a collective rate past the line rate was accepted");
  } catch (const invalid_input& e) {
    CHECK(std::string(e.what()).find("collective_bandwidth: ") == 0);
  }
  l.collective_bandwidth = bytes_per_second{450e9};
  CHECK_NOTHROW(validate(l));
}

}  // namespace plan_system_test
