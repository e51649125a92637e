#pragma once
//! \file
//! A serving plan's prefix cache run for real on a block-hashed trace
//! (io/block_trace.hpp), beside what the planner priced from the workload's
//! hit-rate curve: what `trinity verify` and `trinity simulate` do with an
//! llm-serve plan. The plan's pooled cache becomes a
//! cache::tiered_prefix_cache of as many blocks of the plan's KV precision as
//! its bytes hold: in device memory when the plan keeps it there, otherwise
//! in its tier below a device memory of no cache blocks (the running batch's
//! KV is priced apart), where every finished request's blocks are demoted.
//! A block is loaded back over the replica's t links to the tier at once
//! (t times one link's bandwidth, as plan::price loads a prefix), or
//! recomputed when that is faster on the replica's t devices at the
//! workload's prefill efficiency.
//!
//! The three figures compared are shares, so a trace whose prompts are
//! longer or shorter than the workload's mean still compares, and the
//! predicted hit rate is capped at the replayed trace's own bound (its hit
//! rate at infinite capacity), as the planner caps the curve at the
//! workload's: an excerpt repeats less than the whole trace its curve was
//! fitted on.
//!  - hit rate: prompt tokens served from the cache, of all prompt tokens;
//!  - KV loaded from the tier per prompt token;
//!  - prefill FLOPs the cache saved, of the trace's whole prefill.
//!
//!   const auto m = plan::replay_serving(s, w, r.chosen().plan, r.codecs, io::read_block_trace("t.jsonl"));
//!   const auto p = plan::predicted_replay(w, r.chosen(), r.codecs, m.bound);

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/tiered_prefix_cache.hpp>
#include <trinity/error.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/plan/serving.hpp>

namespace trinity::plan {

//! One request's cached prefix loaded from the cache's tier.
struct prefix_load {
  seconds at{};  //!< the request's arrival, from the trace's start
  bytes size{};  //!< KV loaded, the whole replica's
};

//! The three shares, measured by a replay or predicted by the model.
struct serving_cache_figures {
  double hit_rate = 0;       //!< prompt tokens served from the cache, of all prompt tokens
  bytes loaded_per_token{};  //!< KV loaded from the cache's tier, per prompt token
  double prefill_saved = 0;  //!< prefill FLOPs saved, of the whole prefill
};

struct serving_replay_result {
  std::uint64_t capacity_blocks = 0;  //!< the plan's cache in blocks of its KV precision
  bytes block_bytes{};
  std::size_t requests = 0;
  double prompt_tokens = 0, served_tokens = 0;
  std::uint64_t served_blocks = 0, recomputed_blocks = 0;
  bytes loaded{};
  flops prefill{}, saved{};
  std::vector<prefix_load> loads;  //!< requests that loaded a prefix from a tier below the device, in trace order
  double bound = 0;                //!< the trace's token hit rate at infinite capacity
  serving_cache_figures measured;
};

//! Bytes of one block of `block_tokens` tokens of KV in the plan's precision.
inline bytes kv_block_bytes(const serving_workload& w, const serving_plan& p,
                            const std::vector<model::compressor_cost>& codecs, std::size_t block_tokens) {
  return static_cast<double>(block_tokens) * model::kv_bytes_per_token(w.shape, kv_value_bytes(codecs.at(p.codec)));
}

inline serving_replay_result replay_serving(const system& s, const serving_workload& w, const serving_plan& p,
                                            const std::vector<model::compressor_cost>& codecs,
                                            const std::vector<cache::block_request>& trace,
                                            std::size_t block_tokens = 512) {
  trinity::detail::require(p.cache > bytes{}, "plan", "keeps no prefix cache: nothing to replay");
  trinity::detail::require(p.cache_tier < s.tiers.size(), "plan.cache_tier", "is not one of the system's tiers");
  trinity::detail::require(!trace.empty(), "trace", "has no requests");
  serving_replay_result out;
  out.block_bytes = kv_block_bytes(w, p, codecs, block_tokens);
  out.capacity_blocks = static_cast<std::uint64_t>(p.cache / out.block_bytes);
  const double t = static_cast<double>(p.tensor_parallel);
  std::vector<cache::prefix_tier> tiers{{s.tiers[0].name, p.cache_tier == 0 ? out.capacity_blocks : 0, {}, {}}};
  if (p.cache_tier != 0) {
    const auto& tier = s.tiers[p.cache_tier];
    tiers.push_back({tier.name, out.capacity_blocks, t * tier.bandwidth, tier.latency});
  }
  std::size_t deepest = 0;
  for (const auto& q : trace) deepest = std::max(deepest, q.hash_ids.size());
  const double bt = static_cast<double>(block_tokens);
  const auto by_depth = model::prefill_by_block_depth(w.shape, deepest, block_tokens);
  cache::tiered_prefix_cache kv(
      {.tiers = std::move(tiers),
       .block_bytes = out.block_bytes,
       .prefill = [&](std::size_t d) { return by_depth[d]; },
       .device_rate = t * model::prefill_rate(replica_of(s, w, p, codecs.at(p.codec)), w.prompt_tokens)});
  bytes before{};
  for (const auto& q : trace) {
    const auto r = kv.request(0, q.hash_ids);
    const double len = static_cast<double>(q.input_length);
    out.prompt_tokens += len;
    out.served_tokens += std::min(static_cast<double>(r.served_blocks) * bt, len);
    for (std::size_t d = 0; d < q.hash_ids.size(); ++d) out.prefill += by_depth[d];
    out.saved += r.saved;
    const bytes now = kv.counts().size() > 1 ? kv.counts()[1].loaded : bytes{};
    if (now > before) out.loads.push_back({seconds{static_cast<double>(q.timestamp_ms) / 1e3}, now - before});
    before = now;
  }
  out.requests = trace.size();
  for (const auto& c : kv.counts()) {
    out.served_blocks += c.hits;
    out.recomputed_blocks += c.recomputed;
    out.loaded += c.loaded;
  }
  const auto infinite =
      cache::replay_blocks(trace, {.capacity_blocks = cache::distinct_blocks(trace), .block_tokens = block_tokens});
  out.bound = infinite.token_hit_rate();
  out.measured = {out.served_tokens / out.prompt_tokens, out.loaded / out.prompt_tokens,
                  out.saved.value() / out.prefill.value()};
  return out;
}

//! The same three shares as the planner priced them, for a prompt of the workload's mean length, the hit rate
//! capped at `bound` (the replayed trace's, serving_replay_result::bound).
inline serving_cache_figures predicted_replay(const serving_workload& w, const serving_evaluated& e,
                                              const std::vector<model::compressor_cost>& codecs, double bound = 1) {
  const double h = std::min(e.cost.hit_rate, bound), prompt = w.prompt_tokens;
  const bytes per_token = model::kv_bytes_per_token(w.shape, kv_value_bytes(codecs.at(e.plan.codec)));
  const flops all = model::forward_flops(w.shape, prompt, 0);
  const flops rest = model::forward_flops(w.shape, prompt - h * prompt, h * prompt);
  return {h, e.plan.cache_tier != 0 ? h * per_token : bytes{}, 1.0 - rest.value() / all.value()};
}

}  // namespace trinity::plan
