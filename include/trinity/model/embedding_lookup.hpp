#pragma once
//! \file
//! What embedding-bag lookups read from each tier behind a cache of hot rows (embedding/tiered_table.hpp), and
//! what that costs:
//!  - every lookup reads its row from the fast tier through the cache (none without one);
//!  - a miss, a share 1 − h of the lookups at hit rate h, first reads its row from the capacity tier;
//!  - the time: each tier's row reads at its latency (a row is one random access) plus its bytes at its
//!    bandwidth, the tiers read one after another (model/vector_index.hpp's tier_access).
//!  - or, gathered as a batch gathers them (gather_time): the rows of one table all at once, so each tier costs one
//!    access latency a table and its bytes at bandwidth.
//! The hit rate is the replayed one (a table's traffic().hit_rate()), or a curve's at the cache's bytes
//! (model/hit_rate.hpp's power law, fitted to a replay).

#include <cstddef>
#include <span>

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

//! A batch's rows gathered in `rounds` waves (one a table), each wave's reads issued together: each tier read in a
//! wave costs its access latency once, and its bytes at its bandwidth.
inline seconds gather_time(const search_traffic& t, std::span<const tier_access> tiers, double rounds) {
  trinity::detail::require(tiers.size() == t.bytes.size(), "tiers", "one access cost a tier the traffic names");
  trinity::detail::require(rounds >= 1, "rounds", "at least one wave of reads");
  seconds s{};
  for (std::size_t i = 0; i < tiers.size(); ++i)
    if (t.reads[i] > 0) s += rounds * tiers[i].latency + bytes{t.bytes[i]} / tiers[i].bandwidth;
  return s;
}

}  // namespace trinity::model
