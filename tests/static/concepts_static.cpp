// Which types model which concepts, and which do not, with the piece missing.
#include <trinity/trinity.hpp>

using namespace trinity;

// Presets model their concepts.
static_assert(Tier<tiers::gb200_hbm3e> && Tier<tiers::h100_hbm3> && Tier<tiers::h200_hbm3e> &&
              Tier<tiers::grace_lpddr5x> && Tier<tiers::host_ddr> && Tier<tiers::cxl_coherent> &&
              Tier<tiers::cxl_capacity> && Tier<tiers::nvme> && Tier<tiers::remote_storage>);
static_assert(Link<links::nvlink5> && Link<links::nvlink_c2c> && Link<links::ualink1> && Link<links::cxl2_x16> &&
              Link<links::cxl3_x16> && Link<links::pcie5_x16> && Link<links::pcie6_x16> &&
              Link<links::infiniband_400g> && Link<links::infiniband_800g> && Link<links::ethernet_400g> &&
              Link<links::ethernet_800g> && Link<links::rdma>);
static_assert(Resource<resources::compute> && Resource<resources::bandwidth> && Resource<resources::memory> &&
              Resource<resources::energy> && Resource<resources::time>);
static_assert(Backend<cpu::backend> && Backend<sim::backend<>> && Backend<sim::backend<tiers::gb200_hbm3e>>);
static_assert(TradeoffPolicy<model::memory_for_compute> && TradeoffPolicy<model::bandwidth_for_memory> &&
              TradeoffPolicy<model::compute_for_bandwidth<>>);
static_assert(model::HitRateModel<model::exponential_saturation> && model::HitRateModel<model::power_law>);

// A tier is not a link, a link is not a tier: the opt-in tags keep them apart.
static_assert(!Tier<links::nvlink5> && !Link<tiers::gb200_hbm3e>);
static_assert(!Tier<int> && !Link<int> && !Resource<int> && !Backend<int> && !TradeoffPolicy<int>);

// A look-alike that did not opt in is not a Tier, and the sub-concepts say why.
struct looks_like_a_tier {
  static constexpr tier_descriptor descriptor = tiers::host_ddr::descriptor;
};
static_assert(describes_tier<looks_like_a_tier> && !opts_into_tier<looks_like_a_tier> && !Tier<looks_like_a_tier>);

struct opted_in_without_descriptor {
  using tier_concept = tier_tag;
};
static_assert(opts_into_tier<opted_in_without_descriptor> && !describes_tier<opted_in_without_descriptor>);

// A policy that spends and saves the same resource trades nothing.
struct trades_nothing {
  using policy_concept = tradeoff_policy_tag;
  using spends = resources::memory;
  using saves = resources::memory;
  struct input {};
  priced_trade<spends, saves> price(const input&) const { return {}; }
};
static_assert(declares_trade<trades_nothing> && !trades_distinct_resources<trades_nothing> &&
              !TradeoffPolicy<trades_nothing>);

// A backend without a clock is not a Backend.
struct clockless {
  using backend_concept = backend_tag;
  using memory_tier = tiers::host_ddr;
  static constexpr std::string_view name = "clockless";
  void* allocate(bytes, std::size_t);
  void deallocate(void*, bytes, std::size_t);
  void copy(void*, const void*, bytes);
  void upload(void*, const void*, bytes);
  void download(void*, const void*, bytes);
};
static_assert(allocates<clockless> && copies<clockless> && moves_host_data<clockless> && !keeps_time<clockless> &&
              !Backend<clockless>);

// Pairwise link traits: direct, staged, symmetric, unreachable.
using hbm = tiers::gb200_hbm3e;
static_assert(std::is_same_v<link_traits<hbm, tiers::grace_lpddr5x>::link, links::nvlink_c2c>);
static_assert(std::is_same_v<link_traits<tiers::grace_lpddr5x, hbm>::link, links::nvlink_c2c>);
static_assert(std::is_same_v<link_traits<hbm, tiers::nvme>::staging, tiers::grace_lpddr5x>);
static_assert(std::is_same_v<link_traits<tiers::nvme, hbm>::staging, tiers::grace_lpddr5x>);
static_assert(link_traits<hbm, tiers::nvme>::hops == 2 && link_traits<hbm, hbm>::hops == 0);
static_assert(!link_traits<tiers::nvme, tiers::cxl_coherent>::reachable);

// Hierarchies list tiers fastest first.
using rack = tier_hierarchy<tiers::gb200_hbm3e, tiers::cxl_coherent, tiers::cxl_capacity>;
static_assert(rack::size == 3 && rack::spill_order()[2].name == "cxl-capacity");
