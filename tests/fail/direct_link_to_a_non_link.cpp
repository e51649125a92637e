// Relating two tiers "directly" over something that is not a Link is refused.
// expect: this type is not a Link\. Fix: add `using link_concept = trinity::link_tag;`
#include <trinity/links/link_traits.hpp>

struct my_pool {
  using tier_concept = trinity::tier_tag;
  static constexpr trinity::tier_descriptor descriptor = trinity::tiers::cxl_capacity::descriptor;
};
struct my_cable {};  // forgot to opt in

template <>
struct trinity::direct_link<trinity::tiers::host_ddr, my_pool> {
  using type = my_cable;
};

// Positive control: the preset routes still resolve.
static_assert(trinity::link_traits<trinity::tiers::host_ddr, trinity::tiers::nvme>::direct, "positive control failed");

int main() { return trinity::link_traits<trinity::tiers::host_ddr, my_pool>::reachable ? 0 : 1; }
