#pragma once
//! \file
//! Deprecated in 0.2.0: this header moved to <trinity/cache/hnsw/hnsw_index.hpp> (trinity::hnsw). It forwards there,
//! with a warning, for the 0.2 releases and goes in 0.3.0 (CHANGELOG.md).
#pragma GCC warning \
    "<trinity/cache/hnsw_index.hpp> is deprecated: include <trinity/cache/hnsw/hnsw_index.hpp> (CHANGELOG.md, 0.2.0)"
#include <trinity/cache/hnsw/hnsw_index.hpp>
