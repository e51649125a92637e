// Built against an installed trinity::hnsw by run.cmake: a file that includes hnswlib itself, before trinity's
// HNSW header, uses both (hnswlib's own graph and trinity's index) in one translation unit.
#include <hnswlib/hnswlib.h>

#include <trinity/cache/hnsw/hnsw_index.hpp>

#define TRINITY_HNSWLIB_ORDER "hnswlib included before trinity's HNSW header:"
#include "hnswlib_beside_trinity.hpp"
