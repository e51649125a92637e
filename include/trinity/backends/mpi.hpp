#pragma once
//! \file
//! Umbrella for the MPI backend (target trinity::mpi, which links MPI).
#include <trinity/backends/mpi/communicator.hpp>
#include <trinity/backends/mpi/datatype.hpp>
#include <trinity/backends/mpi/environment.hpp>
