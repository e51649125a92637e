#pragma once
//! \file
//! Umbrella for trinity/cache/: memory → compute. The approximate cache of
//! diffusion latents (similarity → reuse depth), the exact prefix cache of LLM
//! serving, their indexes and eviction policies, and trace replay.
//! The HNSW index is separate (<trinity/cache/hnsw/hnsw_index.hpp>, target trinity::hnsw).
#include <trinity/cache/approximate_cache.hpp>
#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/eviction.hpp>
#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/fvecs.hpp>
#include <trinity/cache/metric.hpp>
#include <trinity/cache/prefix_cache.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/reuse_table.hpp>
#include <trinity/cache/synchronized.hpp>
#include <trinity/cache/tiered_kv_store.hpp>
#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/concepts/similarity_index.hpp>
// The literals its documented examples use (10_GB, 1e9_FLOP, 2_MiB).
#include <trinity/units/literals.hpp>
