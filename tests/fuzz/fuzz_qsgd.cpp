// libFuzzer target: the qsgd decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC qsgd
#include "fuzz_target.hpp"
