#pragma once
//! \file
//! Umbrella for trinity/embedding/: bandwidth → memory for recommendation. Embedding-bag lookups, and a table
//! whose rows live in a capacity tier behind an LRU or LFU cache of hot rows in the fast tier.
#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/embedding/tiered_table.hpp>
#include <trinity/embedding/trace_replay.hpp>
