// A policy that spends and saves the same resource is rejected with the reason.
// expect: spends and saves the same resource, so it trades nothing
#include <trinity/concepts/tradeoff_policy.hpp>

struct circular {
  using policy_concept = trinity::tradeoff_policy_tag;
  using spends = trinity::resources::memory;
  using saves = trinity::resources::memory;
  struct input {};
  trinity::priced_trade<spends, saves> price(const input&) const { return {}; }
};

static_assert(trinity::diagnose_tradeoff_policy<circular>());
int main() {}
