// A reuse table whose depth rises as similarity falls would let a less similar prompt skip more steps.
// expect: static_reuse: the table is invalid.*Fix: thresholds in \[-1, 1\) falling, depths positive and falling
#include <trinity/cache/reuse_table.hpp>

namespace c = trinity::cache;
constexpr c::reuse_table rising{{{{0.9, 5}, {0.8, 10}}}, 2};

// Positive control: the paper's table and a falling one compile.
static_assert(c::static_reuse<c::paper_table_1>::depth(0.97) == 25, "positive control failed");
static_assert(c::static_reuse<c::make_reuse_table({{0.9, 10}, {0.8, 5}})>::depth(0.85) == 5, "positive control failed");

int main() { return c::static_reuse<rising>::depth(0.95); }
