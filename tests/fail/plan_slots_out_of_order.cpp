// The planner's slots go in order: stages, then offload, then recompute.
// expect: the first slot takes the ZeRO stages. Fix: plan::zero_stages
#include <trinity/plan/space.hpp>

// Positive control: in order, it compiles.
static_assert(
    sizeof(trinity::plan::training_space<trinity::plan::zero_stages<0>, trinity::plan::offload_choices<false>>) > 0,
    "positive control failed");

int main() { return sizeof(trinity::plan::training_space<trinity::plan::offload_choices<false>>); }
