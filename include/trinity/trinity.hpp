#pragma once
//! \file
//! Everything in trinity that needs no optional dependency. Backends with
//! their own dependencies (MPI, CUDA) are included separately.
#include <trinity/backends/cpu.hpp>
#include <trinity/backends/sim.hpp>
#include <trinity/cache.hpp>
#include <trinity/comm.hpp>
#include <trinity/concepts.hpp>
#include <trinity/error.hpp>
#include <trinity/fabric.hpp>
#include <trinity/links.hpp>
#include <trinity/model.hpp>
#include <trinity/parallel.hpp>
#include <trinity/pipeline.hpp>
#include <trinity/plan.hpp>
#include <trinity/place.hpp>
#include <trinity/presets.hpp>
#include <trinity/resources.hpp>
#include <trinity/shard.hpp>
#include <trinity/tiers.hpp>
#include <trinity/units.hpp>
#include <trinity/version.hpp>
