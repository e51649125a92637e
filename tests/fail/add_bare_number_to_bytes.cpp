// A bare number has no unit, so adding one to a size is refused.
// expect: cannot add a bare number to a quantity.*Fix: give it one
#include <trinity/units.hpp>

using namespace trinity::literals;

// Positive control: scaling by a number is allowed; only adding one is not.
static_assert(1_GB * 3.0 == 3_GB, "positive control failed");

int main() {
  auto nonsense = 1_GB + 3.0;
  (void)nonsense;
}
