#pragma once
// The consumers' assertion, without a test framework (the install brings none): EXPECT prints each promise
// with its verdict and counts the broken ones; main returns consumer::verdict(), which run.cmake turns into a
// failure naming the program. Not assert(): the consumers build in Release, where NDEBUG would erase it.
#include <cstdio>

namespace consumer {
inline int broken = 0;
inline void expect(bool kept, const char* promise) {
  std::printf("  %-72s %s\n", promise, kept ? "ok" : "WRONG");
  broken += kept ? 0 : 1;
}
inline int verdict() { return broken == 0 ? 0 : 1; }
}  // namespace consumer

#define EXPECT(promise, what) ::consumer::expect(static_cast<bool>(promise), what)
