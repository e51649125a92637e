// Built against an installed trinity by run.cmake; exits 0 only when the
// installed headers, version and models work.
#include <trinity/trinity.hpp>

#include <cstdio>

int main() {
  using namespace trinity::literals;
  constexpr trinity::model::diffusion_cache cache{50, 1e9_FLOP, 20, 2_GB};
  static_assert(cache.saved_per_request(0.6) == 1.2e10_FLOP);
  const bool ok = trinity::model::memory_deficit(400_GB, 100_GB, 2) == 200_GB && trinity::version_major >= 0;
  std::printf("trinity %s from an install: %s\n", trinity::version_string, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
