// A bare number has no unit, so adding one to a size is refused.
// expect: cannot add a bare number to a quantity.*Fix: give it one
#include <trinity/units.hpp>

using namespace trinity::literals;

int main() {
  auto nonsense = 1_GB + 3.0;
  (void)nonsense;
}
