// A trade is priced in Resources; anything else is refused with the list to choose from.
// expect: this type is not a Resource\. Fix: use one of trinity::resources::compute
#include <trinity/resources/priced_trade.hpp>

// Positive control: a trade between two Resources compiles.
static_assert(trinity::priced_trade<trinity::resources::memory, trinity::resources::compute>{}.saved() ==
                  trinity::flops{},
              "positive control failed");

int main() {
  trinity::priced_trade<trinity::resources::memory, double> nonsense{};
  (void)nonsense;
}
