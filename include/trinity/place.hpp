#pragma once
//! \file
//! Umbrella for trinity/place/: static placement of objects into tiers.
#include <trinity/place/dynamic_tiering.hpp>
#include <trinity/place/exact.hpp>
#include <trinity/place/host_resource.hpp>
#include <trinity/place/greedy.hpp>
#include <trinity/place/problem.hpp>
#include <trinity/place/spill.hpp>
#include <trinity/place/tier_allocator.hpp>
#include <trinity/place/tier_resource.hpp>
#include <trinity/place/tiered_store.hpp>
// The literals its documented examples use (64_GB, 1_MiB).
#include <trinity/units/literals.hpp>
