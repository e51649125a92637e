#pragma once
//! \file
//! A lookup trace replayed through a tiered table's cache, batch by batch, into hit rate and bytes per tier at a
//! cache size: what a cache of that many rows would have served from the fast tier, and what it would have read
//! from the capacity tier. Beside it, a static cache of the trace's most looked-up rows: the ideal LFU that knows
//! the whole trace, which the planner prices with a Zipf head share. On independent draws no online cache beats
//! it by more than chance; a trace with bursts can (LRU then may).
//!
//! Rows are renumbered densely (only rows looked up take room) and replayed one value wide: a hit rate does not
//! depend on the values, and the bytes are counted at `row_bytes` a row read.
//!
//!   const auto t = io::read_dlrm_trace("traces/criteo").front();
//!   const auto r = embedding::replay({t.indices, t.offsets}, 512, 4096, embedding::cache_policy::lfu, 64);
//!   r.traffic.hit_rate(); r.traffic.bytes[1] / r.batches;       // capacity-tier bytes a batch

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/embedding/tiered_table.hpp>
#include <trinity/error.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::embedding {

//! A trace's rows renumbered 0.. in order of first use, and how many distinct rows it looks up.
struct dense_rows {
  std::vector<std::uint64_t> indices;
  std::size_t rows = 0;
};
inline dense_rows renumber(std::span<const std::uint64_t> indices) {
  dense_rows out;
  out.indices.reserve(indices.size());
  std::unordered_map<std::uint64_t, std::uint64_t> id;
  id.reserve(indices.size() / 4 + 16);
  for (const auto i : indices) out.indices.push_back(id.try_emplace(i, id.size()).first->second);
  out.rows = id.size();
  return out;
}

//! The share of `indices` that a static cache of the `cache_rows` most looked-up rows serves: the hit rate of an
//! ideal LFU that knows the trace.
inline double static_cache_hit_rate(const dense_rows& dense, std::size_t cache_rows) {
  if (dense.indices.empty()) return 0.0;
  std::vector<std::uint64_t> uses(dense.rows, 0);
  for (const auto i : dense.indices) ++uses[i];
  const std::size_t k = std::min(cache_rows, uses.size());
  std::partial_sort(uses.begin(), uses.begin() + static_cast<std::ptrdiff_t>(k), uses.end(), std::greater<>());
  std::uint64_t served = 0;
  for (std::size_t r = 0; r < k; ++r) served += uses[r];
  return static_cast<double>(served) / static_cast<double>(dense.indices.size());
}
inline double static_cache_hit_rate(std::span<const std::uint64_t> indices, std::size_t cache_rows) {
  return static_cache_hit_rate(renumber(indices), cache_rows);
}

//! A replay's result: the cache's traffic (bytes at row_bytes a row read), over `batches` batches.
struct replay_result {
  table_traffic traffic;
  std::size_t batches = 0, rows = 0;
};

//! The trace, its rows renumbered (`dense`) and bagged by `offsets` as embedding_bag takes them, replayed through a
//! tiered_table of `cache_rows` rows under `policy`, `batch_bags` bags a batch; with `prefetch`, each batch's rows
//! are brought in before its lookups, as a pipeline that knows the next batch does.
inline replay_result replay(const dense_rows& dense, std::span<const std::size_t> offsets, std::size_t row_bytes,
                            std::size_t cache_rows, cache_policy policy, std::size_t batch_bags,
                            bool prefetch = false) {
  const bag_batch trace{dense.indices, offsets};
  validate(trace, dense.rows);
  trinity::detail::require(batch_bags >= 1, "batch_bags", "must be at least 1");
  trinity::detail::require(row_bytes >= 1, "row_bytes", "must be at least 1");
  const std::size_t cached = std::min(cache_rows, dense.rows);
  const std::vector<float> values(dense.rows, 0.0f);
  place::tier_resource fast("fast", bytes{static_cast<double>(cached * sizeof(float)) + 1}),
      capacity("capacity", bytes{static_cast<double>(dense.rows * sizeof(float)) + 1});
  place::tier_resource* tiers[] = {&fast, &capacity};
  tiered_table table(dense.rows, 1, values, tiers, cached, policy);
  replay_result out;
  out.rows = dense.rows;
  const std::size_t bags = trace.offsets.size() - 1;
  std::vector<float> pooled(batch_bags);
  std::vector<std::size_t> batch;
  for (std::size_t first = 0; first < bags; first += batch_bags, ++out.batches) {
    const std::size_t last = std::min(bags, first + batch_bags);
    batch.assign(trace.offsets.begin() + static_cast<std::ptrdiff_t>(first),
                 trace.offsets.begin() + static_cast<std::ptrdiff_t>(last + 1));
    const std::size_t base = batch.front();
    for (auto& o : batch) o -= base;
    const bag_batch b{std::span<const std::uint64_t>(dense.indices).subspan(base, batch.back()), batch};
    if (prefetch) table.prefetch(b);
    table.bag(b, pooling::sum, std::span<float>(pooled).first(last - first));
  }
  out.traffic = table.traffic();
  for (std::size_t tier = 0; tier < 2; ++tier)
    out.traffic.bytes[tier] = out.traffic.reads[tier] * static_cast<double>(row_bytes);
  return out;
}
//! The same, the trace given as embedding_bag takes it (its rows renumbered here).
inline replay_result replay(const bag_batch& trace, std::size_t row_bytes, std::size_t cache_rows, cache_policy policy,
                            std::size_t batch_bags, bool prefetch = false) {
  return replay(renumber(trace.indices), trace.offsets, row_bytes, cache_rows, policy, batch_bags, prefetch);
}

}  // namespace trinity::embedding
