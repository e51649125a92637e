// libFuzzer target: the cast decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC cast
#include "fuzz_target.hpp"
