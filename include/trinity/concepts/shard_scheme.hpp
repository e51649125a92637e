#pragma once
//! \file
//! ShardScheme: which training states a data-parallel group splits across its
//! ranks instead of replicating them (ZeRO, Rajbhandari et al., SC'20), and
//! whether optimizer states live in a slower tier. A scheme is a policy type;
//! shard/schemes.hpp has replicate (DDP), zero<1..3> and offload<S>.
//!
//!   struct my_scheme {
//!     using shard_scheme_concept = trinity::shard_scheme_tag;
//!     static constexpr std::string_view name = "mine";
//!     static constexpr trinity::shard_set shards{.optimizer_states = true};
//!   };

#include <concepts>
#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>

namespace trinity {

//! What a scheme splits across ranks, and whether optimizer states are offloaded.
struct shard_set {
  bool optimizer_states = false;
  bool gradients = false;
  bool parameters = false;
  bool offload_optimizer_states = false;

  //! The ZeRO stage these flags make, or -1 when they make none (parameters split but gradients kept whole).
  [[nodiscard]] constexpr int zero_stage() const noexcept {
    if (parameters) return gradients && optimizer_states ? 3 : -1;
    if (gradients) return optimizer_states ? 2 : -1;
    return optimizer_states ? 1 : 0;
  }
};

template <class S>
concept opts_into_shard_scheme = requires {
  typename S::shard_scheme_concept;
}
&&std::same_as<typename S::shard_scheme_concept, shard_scheme_tag>;

template <class S>
concept declares_shards = requires {
  { S::shards } -> std::convertible_to<const shard_set&>;
};

//! ZeRO's stages nest: whoever splits parameters splits gradients, whoever splits gradients splits optimizer
//! states. Any other mix saves less memory than a stage at the same traffic.
template <class S>
concept nests_like_zero = declares_shards<S> &&(S::shards.zero_stage() >= 0);

template <class S>
concept ShardScheme = opts_into_shard_scheme<S> && names_itself<S> && declares_shards<S> && nests_like_zero<S>;

//! A composition that carries a ShardScheme as its `shard` (parallel::scheme does): not one itself, and the
//! fix is to pass that member rather than to opt the composition in.
template <class S>
concept carries_shard_scheme = requires {
  typename S::shard;
}
&&opts_into_shard_scheme<typename S::shard>;

template <class S>
consteval bool diagnose_shard_scheme() {
  static_assert(!carries_shard_scheme<S> || opts_into_shard_scheme<S>,
                "trinity: this is a composition (a parallel::scheme), not a ShardScheme. Fix: pass its shard scheme, "
                "`typename MyScheme::shard` (e.g. data_parallel<MyScheme::shard, Comm>).");
  static_assert(opts_into_shard_scheme<S> || carries_shard_scheme<S>,
                "trinity: this type is not a ShardScheme. Fix: add `using shard_scheme_concept = "
                "trinity::shard_scheme_tag;`.");
  if constexpr (opts_into_shard_scheme<S>) {
    static_assert(names_itself<S>,
                  "trinity: a ShardScheme names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(declares_shards<S>,
                  "trinity: a ShardScheme says what it splits. Fix: add `static constexpr trinity::shard_set shards`.");
    if constexpr (declares_shards<S>)
      static_assert(nests_like_zero<S>,
                    "trinity: splitting parameters needs split gradients, and splitting gradients needs split "
                    "optimizer states (ZeRO's stages nest). Fix: set the flags of a stage: trinity::shard::zero<1>, "
                    "<2> or <3>.");
  }
  return ShardScheme<S>;
}

}  // namespace trinity
