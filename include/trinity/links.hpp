#pragma once
//! \file
//! Umbrella for trinity/links/: descriptors, presets, pairwise link traits.
#include <trinity/links/link.hpp>
#include <trinity/links/link_descriptor.hpp>
#include <trinity/links/link_traits.hpp>
#include <trinity/links/parameters.hpp>
#include <trinity/links/presets.hpp>
