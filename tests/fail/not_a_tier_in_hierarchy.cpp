// A type that is not a Tier where a tier is expected names the fix.
// expect: this type is not a Tier\. Fix: add `using tier_concept = trinity::tier_tag;`
#include <trinity/tiers.hpp>

struct not_a_tier {};

// Positive control: a hierarchy of presets alone compiles.
static_assert(trinity::tier_hierarchy<trinity::tiers::gb200_hbm3e>::size == 1, "positive control failed");

int main() {
  using broken = trinity::tier_hierarchy<trinity::tiers::gb200_hbm3e, not_a_tier>;
  return static_cast<int>(broken::size);
}
