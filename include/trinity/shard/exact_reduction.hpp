#pragma once
//! \file
//! How data_parallel sums gradients across ranks: a policy with an
//! all-reduce (DDP) and a reduce-scatter (ZeRO), per layer. exact_reduction
//! is the communicator's own collective where it has one (MPI's shared-memory
//! window, an NCCL call), else the ring, in fp32, with no loss;
//! comm::compressed_reduction<Codec>
//! (comm/compressed.hpp) spends compute to send fewer bytes.
//!
//!   struct my_reduction {
//!     template <class Comm> void all_reduce(Comm&, std::size_t layer, std::span<float> gradient);
//!     template <class Comm> void reduce_scatter(Comm&, std::size_t layer, std::span<const float> gradient,
//!                                               std::span<float> my_chunk);
//!   };

#include <cstddef>
#include <span>

#include <trinity/comm/collectives.hpp>

namespace trinity::shard {

struct exact_reduction {
  static constexpr bool compresses = false;
  //! T: float, or a 16-bit float of the working precision (each sum rounded to it).
  template <class Comm, class T>
  void all_reduce(Comm& c, std::size_t, std::span<T> gradient) {
    comm::all_reduce(c, gradient, comm::reduce_op::sum, comm::algorithm::native_or_ring);
  }
  template <class Comm, class T>
  void reduce_scatter(Comm& c, std::size_t, std::span<const T> gradient, std::span<T> mine) {
    comm::reduce_scatter(c, gradient, mine, comm::reduce_op::sum, comm::algorithm::native_or_ring);
  }
};

}  // namespace trinity::shard
