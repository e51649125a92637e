#pragma once
//! \file
//! What one search of a tiered IVF index (retrieval/tiered_ivf.hpp) reads from each tier, and what that costs:
//!  - the centroids, lists·d·4 bytes, from the fast tier, once a search;
//!  - each inverted list l, its n_l·(12 + 4d) bytes (ids, squared norms, vectors), from the tier it lives in, with the
//!  probability p_l that a
//!    query's nprobe nearest centroids include it (measured on queries: retrieval::probe_frequency; or, with
//!    nothing measured, nprobe/lists each);
//!  - the time: each tier's reads at its latency (a list is one random access, then a sequential scan) plus its
//!    bytes at its bandwidth, the tiers read one after another.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! Expected bytes and reads per tier of one search.
struct search_traffic {
  std::vector<double> bytes, reads;
};

//! `list_bytes`, `probe_probability` and `tier_of` hold one entry a list; tier 0 holds the centroids.
inline search_traffic ivf_search_traffic(double centroid_bytes, std::span<const double> list_bytes,
                                         std::span<const double> probe_probability,
                                         std::span<const std::size_t> tier_of, std::size_t tiers) {
  trinity::detail::require(list_bytes.size() == probe_probability.size() && list_bytes.size() == tier_of.size(),
                           "lists", "list_bytes, probe_probability and tier_of need one entry a list each");
  trinity::detail::require(tiers >= 1, "tiers", "at least one");
  search_traffic t{std::vector<double>(tiers, 0.0), std::vector<double>(tiers, 0.0)};
  t.bytes[0] = centroid_bytes;
  t.reads[0] = 1;
  for (std::size_t l = 0; l < list_bytes.size(); ++l) {
    trinity::detail::require(tier_of[l] < tiers, "tier_of",
                             [&] { return "list " + std::to_string(l) + " names no tier"; });
    t.bytes[tier_of[l]] += probe_probability[l] * list_bytes[l];
    t.reads[tier_of[l]] += probe_probability[l];
  }
  return t;
}

//! A tier as a search sees it: one random access, then a stream.
struct tier_access {
  seconds latency{};
  bytes_per_second bandwidth{};
};

//! The search's time on the tiers it reads: reads at latency, bytes at bandwidth, tier after tier.
inline seconds search_time(const search_traffic& t, std::span<const tier_access> tiers) {
  trinity::detail::require(tiers.size() == t.bytes.size(), "tiers", "one access cost a tier the traffic names");
  seconds s{};
  for (std::size_t i = 0; i < tiers.size(); ++i)
    s += t.reads[i] * tiers[i].latency + bytes{t.bytes[i]} / tiers[i].bandwidth;
  return s;
}

}  // namespace trinity::model
