#pragma once
//! \file
//! Every concept of trinity, each defined beside its entity (a concept in a lower folder never includes a
//! higher one): the vocabulary in concepts/, Compressor in compress/, Tier in tiers/, Link in links/, Backend in
//! backends/.
#include <trinity/backends/backend.hpp>
#include <trinity/compress/compressor.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>
#include <trinity/concepts/shard_scheme.hpp>
#include <trinity/concepts/similarity_index.hpp>
#include <trinity/concepts/tradeoff_policy.hpp>
#include <trinity/links/link.hpp>
#include <trinity/tiers/tier.hpp>
