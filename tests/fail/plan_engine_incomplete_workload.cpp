// A workload handed to the planning engine without what it needs is refused with the list of what to define.
// expect: this workload does not give the engine what it needs. Fix: define plan_type, cost_type
#include <trinity/plan/engine.hpp>

struct half_a_workload {
  using plan_type = int;
  using cost_type = int;
};

// Positive control: the concept itself is usable in a constant expression.
static_assert(!trinity::plan::planning_problem<half_a_workload>, "positive control failed");

int main() { return static_cast<int>(trinity::plan::solve(half_a_workload{}, {}).candidates.size()); }
