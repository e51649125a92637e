#pragma once
//! \file
//! What a collective split into buckets leaves exposed when each bucket starts
//! as soon as its tensors are ready: the gradient's reduction under the
//! backward pass (Megatron-LM's --overlap-grad-reduce, PyTorch DDP's buckets,
//! shard::schedule{.overlap}), the parameters' all-gather under the forward
//! pass (--overlap-param-gather).
//!
//! n buckets of equal size; bucket i is ready at (i + 1)/n of a window W (the
//! pass that produces or consumes them, layer by layer) and the buckets go
//! one after another on one communication stream, c = C/n each. Bucket i ends
//! at f_i = max(f_{i−1}, (i + 1)·W/n) + c, so what outlasts the window is
//!   exposed = f_{n−1} − W = max(c, C − W·(n − 1)/n):
//! the last bucket's own time when the stream keeps up with the pass, and
//! otherwise everything the first n − 1 buckets' share of the window cannot
//! hide. A gather runs the same schedule mirrored: the first bucket must
//! arrive before the pass starts, the rest ahead of the layers that need them.
//! The model leaves out the slowdown of the compute that shares the device
//! with the collective (its SMs and memory bandwidth).

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! Megatron-Core's bucket, in parameters, with --overlap-grad-reduce: max(40M, 1M · data-parallel ranks)
//! (DistributedDataParallelConfig: "bucket_size = max(40000000, 1000000 * dp_size)"), so that large groups
//! send messages large enough to run near the link's bandwidth.
inline double megatron_bucket_parameters(std::size_t data_parallel) {
  return std::max(40e6, 1e6 * static_cast<double>(data_parallel));
}

//! Buckets of `bucket` parameters that `parameters` fill: at least one.
inline double bucket_count(double parameters, double bucket) { return std::max(1.0, std::ceil(parameters / bucket)); }

//! The time `comm` leaves exposed past a window of `window`, in `buckets` buckets (see above).
inline seconds exposed_after_overlap(seconds comm, seconds window, double buckets) {
  if (comm <= seconds{}) return seconds{};
  const double n = std::max(1.0, buckets);
  const seconds last = comm / n;
  const seconds rest = comm - window * ((n - 1.0) / n);
  return rest > last ? rest : last;
}

}  // namespace trinity::model
