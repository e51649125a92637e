// ZeRO has no stage 4: a planner space that names one is refused with the fix.
// expect: ZeRO has stages 0 \(DDP\) to 3. Fix: use 0, 1, 2 or 3
#include <trinity/plan/space.hpp>

// Positive control: the default space and a narrower one compile.
static_assert(trinity::plan::training_space<>::stages.size() == 4, "positive control failed");
static_assert(trinity::plan::training_space<trinity::plan::zero_stages<3>>::stages[0] == 3, "positive control failed");

int main() { return trinity::plan::training_space<trinity::plan::zero_stages<2, 4>>::stages.size(); }
