// The CUDA backend is CUDA code; a plain C++ compiler is told what to do.
// expect: is CUDA code: compile this translation unit with nvcc and link trinity::cuda
#include <trinity/tiers/tier.hpp>
#include <trinity/tiers/presets.hpp>

// Positive control: the tier the CUDA backend defaults to is usable from C++.
static_assert(trinity::Tier<trinity::tiers::h100_hbm3>, "positive control failed");

#include <trinity/backends/cuda/backend.cuh>

int main() {}
