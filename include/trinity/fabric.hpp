#pragma once
//! \file
//! Umbrella for trinity/fabric/: the simulated CXL / XLink / RDMA fabric.
#include <trinity/fabric/coherence.hpp>
#include <trinity/fabric/collectives.hpp>
#include <trinity/fabric/packetization.hpp>
#include <trinity/fabric/parameters.hpp>
#include <trinity/fabric/presets.hpp>
#include <trinity/fabric/simulator.hpp>
#include <trinity/fabric/topology.hpp>
