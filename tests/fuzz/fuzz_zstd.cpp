// libFuzzer target: the zstd decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC zstd
#include "fuzz_target.hpp"
