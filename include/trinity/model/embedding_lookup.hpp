#pragma once
//! \file
//! What embedding-bag lookups read from each tier behind a cache of hot rows (embedding/tiered_table.hpp), and
//! what that costs:
//!  - every lookup reads its row from the fast tier through the cache (none without one);
//!  - a miss, a share 1 − h of the lookups at hit rate h, first reads its row from the capacity tier;
//!  - the time: each tier's row reads at its latency (a row is one random access) plus its bytes at its
//!    bandwidth, the tiers read one after another (model/vector_index.hpp's tier_access).
//! The hit rate is the replayed one (a table's traffic().hit_rate()), or a curve's at the cache's bytes
//! (model/hit_rate.hpp's power law, fitted to a replay).

#include <cstddef>

#include <trinity/error.hpp>
#include <trinity/model/vector_index.hpp>

namespace trinity::model {

//! Expected bytes and reads per tier (0 fast, 1 capacity) of `lookups` row lookups of `row_bytes` each.
inline search_traffic embedding_lookup_traffic(double lookups, double row_bytes, double hit_rate, bool cached) {
  trinity::detail::require(lookups >= 0 && row_bytes > 0, "lookups", "must not be negative, with rows of bytes");
  trinity::detail::require(hit_rate >= 0 && hit_rate <= 1, "hit_rate", "must lie in [0, 1]");
  const double misses = cached ? lookups * (1.0 - hit_rate) : lookups;
  return {{cached ? lookups * row_bytes : 0.0, misses * row_bytes}, {cached ? lookups : 0.0, misses}};
}

}  // namespace trinity::model
