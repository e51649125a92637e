#include <trinity/trinity.hpp>

#include <cstdio>

int main() {
  using namespace trinity::literals;
  const auto deficit = trinity::model::memory_deficit(400_GB, 100_GB, 2);
  std::printf("trinity %s: deficit %s\n", trinity::version_string, trinity::to_string(deficit).c_str());
  return deficit == 200_GB ? 0 : 1;
}
