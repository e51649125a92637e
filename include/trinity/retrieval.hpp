#pragma once
//! \file
//! Umbrella for trinity/retrieval/: memory → compute for retrieval. An IVF index and its tiered form, whose
//! inverted lists live on the tiers they are placed on by access frequency (the CXL report's retrieval case).
#include <trinity/retrieval/ivf_index.hpp>
#include <trinity/retrieval/tiered_ivf.hpp>
