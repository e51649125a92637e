#pragma once
// TRINITY_FUZZ_REQUIRE(cond): the fuzz targets' assertion. Unlike assert() it
// holds in optimised builds too; a failure prints the condition and aborts,
// which libFuzzer and the replay driver both report as a finding.

#include <cstdio>
#include <cstdlib>

#define TRINITY_FUZZ_REQUIRE(cond)                                                                 \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: TRINITY_FUZZ_REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)
