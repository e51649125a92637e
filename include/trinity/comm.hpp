#pragma once
//! \file
//! Umbrella for trinity/comm/: collectives over any Communicator, compressed
//! ones included, and the in-process backend. MPI lives in
//! <trinity/backends/mpi.hpp> (trinity::mpi).
#include <trinity/comm/agreed.hpp>
#include <trinity/comm/all_to_all.hpp>
#include <trinity/comm/async.hpp>
#include <trinity/comm/broadcast.hpp>
#include <trinity/comm/collectives.hpp>
#include <trinity/comm/compressed.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/comm/halving_doubling.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/comm/thread_world.hpp>
