#pragma once
//! \file
//! Opt-in tags. A type models a trinity concept only when it says so, by
//! naming the tag: `using tier_concept = trinity::tier_tag;`. Structural
//! look-alikes do not match by accident, and the diagnostics can tell "forgot
//! to opt in" from "opted in but is missing a member".

namespace trinity {

struct resource_tag {};
struct tier_tag {};
struct link_tag {};
struct tradeoff_policy_tag {};
struct backend_tag {};
struct compressor_tag {};
struct communicator_tag {};
struct shard_scheme_tag {};
struct similarity_index_tag {};
struct eviction_policy_tag {};

}  // namespace trinity
