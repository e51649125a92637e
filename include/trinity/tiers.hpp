#pragma once
//! \file
#include <trinity/tiers/hierarchy.hpp>
#include <trinity/tiers/parameters.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/tiers/tier.hpp>
#include <trinity/tiers/tier_descriptor.hpp>
