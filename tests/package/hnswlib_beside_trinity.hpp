#pragma once
// What the two programs that include hnswlib beside trinity's HNSW header, before it and after it
// (hnswlib_first_consumer.cpp, hnswlib_after_consumer.cpp), each ask in one translation unit: the nearest key
// hnswlib's own graph finds and the one trinity's index finds, for the same two points and query.
#include <cstddef>
#include <vector>

struct nearest_keys {
  std::size_t own = 0;      //!< hnswlib's graph: 9 is the key nearest the query
  std::size_t trinity = 0;  //!< trinity's index: 2 is
  std::size_t trinity_hits = 0;
};

inline nearest_keys search_both() {
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
  nearest_keys k;
  if (!found.empty()) k.own = found.top().second;
  k.trinity_hits = hits.size();
  if (!hits.empty()) k.trinity = hits[0].id;
  return k;
}
