// libFuzzer target: the sparse decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC sparse
#include "fuzz_target.hpp"
