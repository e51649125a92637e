// libFuzzer target: the identity decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC identity
#include "fuzz_target.hpp"
