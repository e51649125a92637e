// Spill order runs fastest first; a slower tier before a faster one is refused.
// expect: lists tiers fastest first\. Fix: order them by falling bandwidth
#include <trinity/tiers.hpp>

// Positive control: the same tiers in the right order form a hierarchy.
static_assert(trinity::tier_hierarchy<trinity::tiers::gb200_hbm3e, trinity::tiers::cxl_capacity>::size == 2,
              "positive control failed");

int main() {
  using backwards = trinity::tier_hierarchy<trinity::tiers::cxl_capacity, trinity::tiers::gb200_hbm3e>;
  return static_cast<int>(backwards::size);
}
