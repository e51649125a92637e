// Opting in is not enough: a Tier carries a descriptor, and the error says so.
// expect: opts into Tier but has no `static constexpr trinity::tier_descriptor descriptor`
#include <trinity/links.hpp>

struct half_a_tier {
  using tier_concept = trinity::tier_tag;
};

// Positive control: opting in is detected; only the descriptor is missing.
static_assert(trinity::opts_into_tier<half_a_tier> && !trinity::describes_tier<half_a_tier>, "positive control failed");

int main() { return trinity::link_traits<half_a_tier, trinity::tiers::nvme>::reachable ? 0 : 1; }
