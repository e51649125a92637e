#pragma once
//! \file
//! Umbrella for the simulated backend.
#include <trinity/backends/sim/backend.hpp>
#include <trinity/backends/sim/communicator.hpp>
