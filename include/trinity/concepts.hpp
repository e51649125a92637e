#pragma once
//! \file
//! Umbrella for trinity/concepts/.
#include <trinity/concepts/backend.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/concepts/link.hpp>
#include <trinity/concepts/opt_in.hpp>
#include <trinity/concepts/resource.hpp>
#include <trinity/concepts/shard_scheme.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/concepts/tier.hpp>
#include <trinity/concepts/tradeoff_policy.hpp>
