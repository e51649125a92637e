#pragma once
// The body of the two programs that include hnswlib beside trinity's HNSW header, before it and after it
// (hnswlib_first_consumer.cpp, hnswlib_after_consumer.cpp): in one translation unit, hnswlib's own graph and
// trinity's index each find the nearest key. TRINITY_HNSWLIB_ORDER names the order.
#include <cstdio>
#include <vector>

#include "expect.hpp"

int main() {
  const char* order = TRINITY_HNSWLIB_ORDER;
  hnswlib::L2Space space(2);
  hnswlib::HierarchicalNSW<float> own(&space, 8);
  const float a[2] = {1.0f, 0.0f}, b[2] = {0.0f, 1.0f};
  own.addPoint(a, 7);
  own.addPoint(b, 9);
  const float q[2] = {0.1f, 0.9f};
  auto found = own.searchKnn(q, 1);
  trinity::cache::hnsw_index index(2);
  index.add(1, std::vector<float>{1.0f, 0.0f});
  index.add(2, std::vector<float>{0.0f, 1.0f});
  const auto hits = index.search(std::vector<float>{0.1f, 0.9f}, 1);
  std::printf("%s\n", order);
  EXPECT(!found.empty() && found.top().second == 9, "hnswlib's own graph finds the nearest");
  EXPECT(hits.size() == 1 && hits[0].id == 2, "trinity's index finds the nearest");
  return consumer::verdict();
}
