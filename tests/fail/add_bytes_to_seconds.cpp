// Adding a size to a time is meaningless; the error must say how to convert.
// expect: cannot add quantities of different dimensions.*Fix: convert one side first
#include <trinity/units.hpp>

using namespace trinity::literals;

// Positive control: like dimensions add, and bytes over a rate is a time.
static_assert(1_GB + 1_GB == 2_GB, "positive control failed");
static_assert(100_GB / 400_Gbps == 2_s, "positive control failed");

int main() {
  auto nonsense = 1_GB + 1_s;
  (void)nonsense;
}
