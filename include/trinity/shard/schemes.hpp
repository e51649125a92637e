#pragma once
//! \file
//! The shard schemes: replicate (DDP: every rank holds everything), zero<1>
//! (optimizer states split), zero<2> (and gradients), zero<3> (and
//! parameters, gathered layer by layer when used), and offload<S>, which also
//! keeps S's optimizer states in a slower tier (ZeRO-Offload).
//!
//!   using scheme = trinity::shard::offload<trinity::shard::zero<2>>;

#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/shard_scheme.hpp>

namespace trinity::shard {

struct replicate {
  using shard_scheme_concept = shard_scheme_tag;
  static constexpr std::string_view name = "replicate";
  static constexpr shard_set shards{};
};

template <int Stage>
struct zero {
  static_assert(Stage >= 1 && Stage <= 3,
                "trinity: ZeRO has stages 1, 2 and 3. Fix: use zero<1>, zero<2> or zero<3>, or replicate for DDP.");
  using shard_scheme_concept = shard_scheme_tag;
  static constexpr std::string_view name = Stage == 1 ? "zero-1" : Stage == 2 ? "zero-2" : "zero-3";
  static constexpr shard_set shards{.optimizer_states = true, .gradients = Stage >= 2, .parameters = Stage >= 3};
};

template <class S>
struct offload {
  static_assert(diagnose_shard_scheme<S>(), "trinity: offload<S> wraps a ShardScheme");
  static_assert(!S::shards.offload_optimizer_states,
                "trinity: offload<offload<S>> offloads twice. Fix: write offload<S> once.");
  using shard_scheme_concept = shard_scheme_tag;
  using inner = S;
  static constexpr std::string_view name = S::name;  // the report adds "+offload"
  static constexpr shard_set shards = [] {
    shard_set s = S::shards;
    s.offload_optimizer_states = true;
    return s;
  }();
};

}  // namespace trinity::shard
