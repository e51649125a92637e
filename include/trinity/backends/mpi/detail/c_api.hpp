#pragma once
//! \file
//! <mpi.h>, its C interface only: the C++ bindings, deprecated since MPI 2.2 and
//! removed in 3.0, warn under a user's -Wextra and trinity never calls them.

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
