// libFuzzer target: the lz4 decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC lz4
#include "fuzz_target.hpp"
