// libFuzzer target: the block_quant decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC block_quant
#include "fuzz_target.hpp"
