#pragma once
//! \file
//! Umbrella for trinity/retrieval/: memory → compute for retrieval. An IVF index and its tiered forms, whose
//! inverted lists (or product-quantized codes and vectors) live on the tiers they are placed on by access
//! frequency (the CXL report's retrieval case). The HNSW index and its tiered form are separate
//! (<trinity/retrieval/hnsw/tiered_hnsw.hpp>, target trinity::hnsw).
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/product_quantizer.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>
#include <trinity/retrieval/tiered_ivf_pq.hpp>
