#pragma once
//! \file
//! Replaying a block-hashed request trace (Mooncake's FAST'25 format: each
//! request's prompt as a chain of block ids, equal ids being reusable prefix
//! KV blocks) through cache::prefix_cache, in file order. The semantics:
//!  - a request hits the longest prefix of its chain whose blocks are all cached;
//!  - then every block of its chain is cached and stamped with the request's
//!    index (the request's own blocks are held while it is inserted);
//!  - over capacity, the policy's first block goes: under lru the block with
//!    the oldest stamp, ties to the deepest, so a parent never leaves before its
//!    child (prefix_cache.hpp names the other policies). A chain longer than the
//!    whole capacity keeps its first capacity_blocks blocks.
//! A request's token hit is min(hit blocks × block_tokens, input_length); the
//! token hit rate is their sum over the sum of input lengths, the block hit
//! rate hit blocks over blocks looked up.
//!
//!   const auto trace = io::read_block_trace("mooncake_conversation_trace.jsonl");
//!   const auto r = cache::replay_blocks(trace, {.capacity_blocks = 10'000});
//!   r.block_hit_rate(); r.token_hit_rate();

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/cache/prefix_cache.hpp>
#include <trinity/error.hpp>

namespace trinity::cache {

//! One request of a block-hashed trace.
struct block_request {
  std::uint64_t timestamp_ms = 0;  //!< arrival, from the trace's start
  std::uint64_t input_length = 0;  //!< prompt tokens
  std::uint64_t output_length = 0;
  std::vector<token> hash_ids;  //!< the prompt's blocks, first block first
};

struct block_replay_options {
  std::uint64_t capacity_blocks = 0;
  std::size_t block_tokens = 512;  //!< tokens per block (Mooncake's traces: 512)
  prefix_eviction eviction{};
};

struct block_replay_result {
  std::uint64_t capacity_blocks = 0;
  std::uint64_t requests = 0, blocks = 0, hit_blocks = 0, tokens = 0, hit_tokens = 0;
  std::uint64_t inserted_blocks = 0, evicted_blocks = 0;
  [[nodiscard]] double block_hit_rate() const noexcept {
    return blocks ? static_cast<double>(hit_blocks) / static_cast<double>(blocks) : 0.0;
  }
  [[nodiscard]] double token_hit_rate() const noexcept {
    return tokens ? static_cast<double>(hit_tokens) / static_cast<double>(tokens) : 0.0;
  }
};

//! The trace through a prefix cache of capacity_blocks blocks, with the semantics above.
inline block_replay_result replay_blocks(std::span<const block_request> trace, const block_replay_options& o) {
  trinity::detail::require(o.block_tokens >= 1, "block_tokens", "must be at least 1");
  // One cache token per block id: a chain of ids is a token sequence of one-token blocks, and the cache's tree
  // of blocks is the trace's tree of prefixes.
  prefix_cache kv({.block_tokens = 1,
                   .block_size = bytes{1},
                   .capacity = bytes{static_cast<double>(o.capacity_blocks)},
                   .eviction = o.eviction});
  block_replay_result r;
  r.capacity_blocks = o.capacity_blocks;
  for (const auto& q : trace) {
    const auto held = kv.insert(0, q.hash_ids);
    // The blocks it found lead the path, the ones it created follow: the hit is the found prefix.
    const std::uint64_t hit = held.blocks() - held.created();
    ++r.requests;
    r.blocks += q.hash_ids.size();
    r.hit_blocks += hit;
    r.tokens += q.input_length;
    r.hit_tokens += std::min<std::uint64_t>(hit * o.block_tokens, q.input_length);
  }
  r.inserted_blocks = kv.stats().inserted_blocks;
  r.evicted_blocks = kv.stats().evicted_blocks;
  return r;
}

//! Distinct blocks of the trace: the capacity that never evicts, whose replay is the infinite-capacity bound.
inline std::uint64_t distinct_blocks(std::span<const block_request> trace) {
  std::vector<token> ids;
  for (const auto& q : trace) ids.insert(ids.end(), q.hash_ids.begin(), q.hash_ids.end());
  std::sort(ids.begin(), ids.end());
  return static_cast<std::uint64_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

}  // namespace trinity::cache
