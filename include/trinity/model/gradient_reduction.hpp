#pragma once
//! \file
//! One step's gradient reduction over n ranks, with or without a gradient
//! codec: DDP's all-reduce (ZeRO stage 0) or ZeRO's reduce-scatter (stages
//! 1-3), what each rank sends, the collective's ring time, and the time spent
//! encoding and decoding. Both planners price the data-parallel gradient with
//! it: the data-parallel one (plan/training.hpp) and the layout search's step
//! model (model/parallel_training.hpp), so a codec costs the same in both.
//!
//! What comm/compressed.hpp runs per rank, in units of S (the fp32 gradient):
//!  - summable frames (bf16, int8 with error feedback) ride the ring: its
//!    reduce-scatter encodes and decodes a chunk at each of its n − 1 hops,
//!    (n − 1)/n of S each; DDP's all-gather then encodes the rank's own chunk
//!    and decodes all n. Each hop sends the frame's size first, a second
//!    message;
//!  - frames that cannot be summed on the way (top-k, PowerSGD) are
//!    all-gathered whole, for DDP and ZeRO alike: one encode of S, n frames
//!    decoded, (n − 1) frames sent.
//! The parameters' all-gathers of ZeRO are not the gradient's and are left to
//! the caller: no codec touches them.

#include <cstddef>

#include <trinity/model/collectives.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! The gradient as the trainer holds it, sent as it is: the untraded choice, at no coding time (the rates only
//! have to be valid ones).
inline compressor_cost uncoded_gradient() {
  return {"identity", 1.0, bytes_per_second{1e15}, bytes_per_second{1e15}, 0.0, true, false};
}

//! Whether `c` sends the gradient as the trainer holds it.
inline bool is_uncoded(const compressor_cost& c) { return c.name == "identity"; }

struct gradient_reduction_cost {
  bytes sent{};      //!< per rank
  seconds comm{};    //!< the collective, with the frames' size messages
  seconds coding{};  //!< encoding and decoding, per rank
};

//! The gradient of `elements` values, held at `held_bytes` each (2 for bf16 gradients), reduced over n ranks
//! under ZeRO stage `stage` through codec `c` (whose ratio is against fp32).
inline gradient_reduction_cost gradient_reduction(std::size_t n, double elements, double held_bytes, int stage,
                                                  const compressor_cost& c, const collective_link& link) {
  gradient_reduction_cost r;
  if (n <= 1) return r;
  const bool coded = !is_uncoded(c);
  const bytes frame{elements * (coded ? 4.0 / c.ratio : held_bytes)};
  const double ranks = static_cast<double>(n), share = (ranks - 1.0) / ranks;
  if (c.gathered) {
    r.sent = (ranks - 1.0) * frame;
    r.comm = ring_all_gather_time(n, ranks * frame, link);
  } else if (stage == 0) {
    r.sent = 2.0 * share * frame;
    r.comm = ring_all_reduce_time(n, frame, link);
  } else {
    r.sent = share * frame;
    r.comm = ring_reduce_scatter_time(n, frame, link);
  }
  if (coded) {
    const bytes fp32{elements * 4.0};
    const double encodes = c.gathered || stage == 0 ? 1.0 : share;
    const double decodes = c.gathered ? ranks : share + (stage == 0 ? 1.0 : 0.0);
    r.coding = encodes * (fp32 / c.encode_rate) + decodes * (fp32 / c.decode_rate);
    const double size_messages = c.gathered ? 0.0 : (stage == 0 ? 2.0 : 1.0) * (ranks - 1.0);
    r.comm += size_messages * link.latency;
  }
  return r;
}

}  // namespace trinity::model
