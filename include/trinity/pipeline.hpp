#pragma once
//! \file
//! trinity::pipeline: a data-curation pipeline run for real (paper §5.2), with
//! device-bound models co-resident on devices within their memory budgets.
//! Its model is model/coresidency.hpp; its planner workload plan/data_curation.hpp.
//! The kernels (pipeline/kernels.hpp) decode int8 frames with compress::decode.

#include <trinity/pipeline/device_memory.hpp>
#include <trinity/pipeline/executor.hpp>
#include <trinity/pipeline/kernels.hpp>
#include <trinity/pipeline/resident_model.hpp>
