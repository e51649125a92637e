#pragma once
//! \file
//! Umbrella for trinity/parallel/: the mechanisms of model parallelism, over any Communicator (a group of
//! a larger world: comm/group.hpp). Today: tensor parallelism's column- and row-parallel linear layers.
#include <trinity/parallel/tensor_parallel.hpp>
