// Opting in is not enough: a Tier carries a descriptor, and the error says so.
// expect: opts into Tier but has no `static constexpr trinity::tier_descriptor descriptor`
#include <trinity/links.hpp>

struct half_a_tier {
  using tier_concept = trinity::tier_tag;
};

int main() { return trinity::link_traits<half_a_tier, trinity::tiers::nvme>::reachable ? 0 : 1; }
