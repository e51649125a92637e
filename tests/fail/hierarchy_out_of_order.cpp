// Spill order runs fastest first; a slower tier before a faster one is refused.
// expect: lists tiers fastest first\. Fix: order them by falling bandwidth
#include <trinity/tiers.hpp>

int main() {
  using backwards = trinity::tier_hierarchy<trinity::tiers::cxl_capacity, trinity::tiers::gb200_hbm3e>;
  return static_cast<int>(backwards::size);
}
