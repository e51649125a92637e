#pragma once
//! \file
//! Umbrella for trinity/parallel/: the mechanisms of model parallelism, over any Communicator (a group of
//! a larger world: comm/group.hpp). Tensor parallelism's column- and row-parallel linear layers and where a slice of
//! one sits in the whole; the pipeline executor over any schedule model/pipeline_schedule.hpp registers; ring attention
//! for context parallelism; the mixture-of-experts layer over expert-parallel ranks (its all-to-all dispatch, and
//! DeepEP's dispatch deduplicated by node); and the scheme type that composes them with a ZeRO stage.
#include <trinity/parallel/context_parallel.hpp>
#include <trinity/parallel/expert_parallel.hpp>
#include <trinity/parallel/node_dispatch.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/pipeline_schedule.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/parallel/tensor_slice.hpp>
