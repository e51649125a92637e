#pragma once
//! \file
//! trinity::pipeline: a data-curation pipeline run for real (paper §5.2), with
//! device-bound models co-resident on devices within their memory budgets.
//! Its model is model/coresidency.hpp; its planner workload plan/data_curation.hpp.
//! The kernels (pipeline/kernels.hpp) decode with the codecs: include them from
//! trinity::compress.

#include <trinity/pipeline/device_memory.hpp>
#include <trinity/pipeline/executor.hpp>
#include <trinity/pipeline/resident_model.hpp>
