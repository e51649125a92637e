#pragma once
//! \file
//! Umbrella for trinity/shard/: ZeRO-style sharding over any Communicator.
#include <trinity/shard/adam.hpp>
#include <trinity/shard/checkpoint.hpp>
#include <trinity/shard/data_parallel.hpp>
#include <trinity/shard/layer_values.hpp>
#include <trinity/shard/ledger.hpp>
#include <trinity/shard/schemes.hpp>
