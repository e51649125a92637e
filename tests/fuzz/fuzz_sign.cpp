// libFuzzer target: the sign decoder on hostile bytes (see fuzz_target.hpp).
#define TRINITY_FUZZ_CODEC sign
#include "fuzz_target.hpp"
