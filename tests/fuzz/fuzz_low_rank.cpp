// libFuzzer target: the low_rank decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC low_rank
#include "fuzz_target.hpp"
