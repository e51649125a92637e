// Interleaved model chunks need pipeline stages to interleave across: refused with the fix.
// expect: interleaving needs pipeline stages. Fix: pipeline<P, V> with P > 1
#include <trinity/parallel/scheme.hpp>

// Positive control: interleaving over stages compiles.
static_assert(trinity::parallel::pipeline<2, 3>::virtual_stages == 3, "positive control failed");

int main() { return static_cast<int>(trinity::parallel::pipeline<1, 2>::virtual_stages); }
