#pragma once
//! \file
//! The MPI datatype and operation for a C++ element type and comm::reduce_op,
//! for comparing with MPI's own collectives.

#include <cstdint>
#include <type_traits>

#include <trinity/backends/mpi/detail/c_api.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/detail/always_false.hpp>

namespace trinity::mpi {

template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return MPI_INT8_T;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return MPI_UINT8_T;
  else
    static_assert(trinity::detail::always_false<T>,
                  "trinity::mpi::datatype: no MPI datatype for this type. Fix: use "
                  "float, double or a fixed-width integer.");
}

inline MPI_Op operation(comm::reduce_op op) {
  switch (op) {
    case comm::reduce_op::sum:
      return MPI_SUM;
    case comm::reduce_op::max:
      return MPI_MAX;
    case comm::reduce_op::min:
      return MPI_MIN;
  }
  return MPI_SUM;
}

}  // namespace trinity::mpi
