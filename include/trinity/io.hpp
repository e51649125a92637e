#pragma once
//! \file
//! trinity::io: systems, workloads, fabric topologies and calibration profiles
//! read from JSON, strictly (target trinity::io, which links nlohmann_json).
//! Every object is checked against the table of its keys, so a misspelt key is
//! refused with its path and the nearest valid one instead of being ignored.
//! The diffusion trace fitter (io/diffusion_trace.hpp) also needs the caches.

#include <trinity/io/device.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/parallel_calibration.hpp>
#include <trinity/io/serving_runs.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/io/priced_alike.hpp>
#include <trinity/io/profile.hpp>
#include <trinity/io/published_runs.hpp>
#include <trinity/io/read_workload.hpp>  // deprecated in 0.2.0
#include <trinity/io/system.hpp>
#include <trinity/io/topology.hpp>
#include <trinity/io/transformer_probe.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/io/write_system.hpp>
