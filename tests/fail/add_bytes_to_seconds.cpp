// Adding a size to a time is meaningless; the error must say how to convert.
// expect: cannot add quantities of different dimensions.*Fix: convert one side first
#include <trinity/units.hpp>

using namespace trinity::literals;

int main() {
  auto nonsense = 1_GB + 1_s;
  (void)nonsense;
}
