// Built against an installed trinity::hnsw by run.cmake: a file that includes hnswlib itself, before trinity's
// HNSW header, uses both (hnswlib's own graph and trinity's index) in one translation unit.
#include <hnswlib/hnswlib.h>

#include <trinity/cache/hnsw/hnsw_index.hpp>

#include <cstdio>

#include "expect.hpp"
#include "hnswlib_beside_trinity.hpp"

int main() {
  std::printf("hnswlib included before trinity's HNSW header:\n");
  const auto k = search_both();
  EXPECT(k.own == 9, "hnswlib's own graph finds the nearest");
  EXPECT(k.trinity_hits == 1 && k.trinity == 2, "trinity's index finds the nearest");
  return consumer::verdict();
}
