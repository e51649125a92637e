#pragma once
//! \file
//! Umbrella for the NUMA backend (target trinity::numa, which links libnuma).
#include <trinity/backends/numa/resource.hpp>
