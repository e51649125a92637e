// Built against an installed trinity::hnsw by run.cmake: a file that includes hnswlib itself after trinity's HNSW
// header, where hnswlib's #pragma once makes that include empty, uses both (hnswlib's own graph and trinity's
// index) in one translation unit.
#include <trinity/cache/hnsw/hnsw_index.hpp>

#include <hnswlib/hnswlib.h>

#define TRINITY_HNSWLIB_ORDER "hnswlib included after trinity's HNSW header:"
#include "hnswlib_beside_trinity.hpp"
