// Built against an installed trinity::hnsw by run.cmake: the nearest of three keys.
#include <trinity/cache/hnsw/hnsw_index.hpp>

#include <cstdio>
#include <vector>

#include "expect.hpp"

int main() {
  trinity::cache::hnsw_index index(2);
  index.add(1, std::vector<float>{1.0f, 0.0f});
  index.add(2, std::vector<float>{0.0f, 1.0f});
  index.add(3, std::vector<float>{-1.0f, 0.0f});
  const auto hits = index.search(std::vector<float>{0.1f, 0.9f}, 1);
  std::printf("trinity::hnsw from an install:\n");
  EXPECT(hits.size() == 1 && hits[0].id == 2, "the nearest of three keys is found");
  return consumer::verdict();
}
