#pragma once
//! \file
//! All-reduce through a compressor: spend compute to send fewer bytes. Two
//! schemes, chosen at compile time:
//!
//!  - comm::compressed_ring: a ring reduce-scatter whose every hop decodes
//!    the partial sum it receives, adds its own chunk and encodes the result,
//!    then a ring all-gather of each owner's encoded chunk (decoded by all,
//!    the owner included, so every rank ends with the same bits). For value
//!    codecs (quantize, qsgd, sign, casts, lossless): 2(n − 1)/n · S/ratio.
//!  - comm::compressed_gather: every rank encodes its whole tensor once, the
//!    frames are all-gathered, and every rank decodes all n and adds them in
//!    rank order. For sparsifiers (top-k, DGC) and low rank, whose frames
//!    cannot be added hop by hop: (n − 1) · S/ratio.
//!
//! Error feedback is built in for lossy codecs: what this rank's encodes lose
//! is added to its next contribution (Seide et al., 2014), per position, so
//! nothing is lost, only late. A codec that feeds its own error back (DGC,
//! PowerSGD) is left to it; error_feedback<C> is refused at compile time: pass
//! C, whose error the collective then feeds back per chunk and hop correctly.
//!
//!   comm::compressed_all_reduce<compress::quantize<8>, comm::compressed_ring> ar;
//!   ar(c, std::span<float>(grad));   // grad: this rank's in, the (approximate) sum out

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <trinity/comm/collectives.hpp>
#include <trinity/comm/detail/hooks.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/compress/compressor.hpp>

namespace trinity::comm {

struct compressed_ring {};
struct compressed_gather {};

namespace detail {
template <class C>
inline constexpr bool is_sparse =
    C::traits.role == compress::role::sparsifier || C::traits.error.kind == compress::error_kind::dropped_below ||
    C::traits.wire_codec == compress::codec::sparse;
template <class C>
inline constexpr bool is_delta = C::traits.wire_codec == compress::codec::delta;
template <class C>
inline constexpr bool wraps_error_feedback = requires {
  C::is_error_feedback;
};
}  // namespace detail

template <class C, class Scheme = compressed_ring>
class compressed_all_reduce {
  static_assert(diagnose_compressor<C>(), "trinity: compressed_all_reduce<C, Scheme> takes a Compressor");
  static_assert(std::is_same_v<Scheme, compressed_ring> || std::is_same_v<Scheme, compressed_gather>,
                "trinity: the scheme is comm::compressed_ring or comm::compressed_gather");
  static_assert(!std::is_same_v<Scheme, compressed_ring> || !detail::is_sparse<C>,
                "trinity: a sparsifier's frames cannot be summed hop by hop: each rank keeps different indices, "
                "and re-sparsifying a partial sum throws away what the other ranks sent. Fix: use "
                "comm::compressed_gather for top-k and DGC.");
  static_assert(!std::is_same_v<Scheme, compressed_ring> || !C::traits.needs_dense || C::traits.summable,
                "trinity: this codec's frames cannot be summed hop by hop (PowerSGD's P·Qᵀ is bilinear, a delta "
                "frame decodes only against its own stream). Fix: use comm::compressed_gather.");
  static_assert(!detail::wraps_error_feedback<C>,
                "trinity: compressed_all_reduce feeds each rank's error back itself, per position of the whole "
                "tensor; error_feedback<C> inside it would keep one error state across chunks of different hops "
                "and sizes. Fix: pass the codec itself, compressed_all_reduce<compress::int8, ...>: that is how to "
                "spell 'int8 with error feedback' in a collective (error_feedback<int8> is for one stream).");
  static_assert(!detail::is_delta<C>,
                "trinity: a delta codec's frames decode only against the previous frame of the same stream, and a "
                "collective mixes n streams. Fix: compress gradients with a stateless codec (quantize, topk, ...).");

 public:
  using compressor_type = C;
  static constexpr bool feeds_back = !C::traits.error.lossless() && !C::traits.own_error_feedback;

  compressed_all_reduce() = default;
  explicit compressed_all_reduce(C codec) : codec_(std::move(codec)) {}

  //! data: this rank's contribution in, the sum over ranks out (within the codec's error, late by what
  //! error feedback carries). Every rank passes the same count.
  template <Communicator Comm>
  void operator()(Comm& c, std::span<float> data) {
    detail::naming_the_collective("compressed all_reduce", [&] {
      prepare(data);
      if constexpr (std::is_same_v<Scheme, compressed_ring>)
        ring(c, data);
      else
        gather(c, data);
    });
  }

  //! The reduce-scatter alone (ZeRO's gradient step): out = chunk `rank` of the sum (comm::partition), each
  //! hop's partial sum compressed; in is left as it was. With compressed_gather every frame is gathered
  //! and decoded, and this rank keeps its chunk.
  template <Communicator Comm>
  void reduce_scatter(Comm& c, std::span<const float> in, std::span<float> out) {
    const partition part(in.size(), c.size());
    trinity::detail::require(out.size() == part.size(c.rank()), "out",
                             "a reduce-scatter's output holds this rank's chunk, partition(count, size).size(rank)");
    detail::naming_the_collective("compressed reduce_scatter", [&] {
      work_.assign(in.begin(), in.end());
      prepare(work_);
      if constexpr (std::is_same_v<Scheme, compressed_ring>) {
        if (c.size() > 1) ring_reduce_scatter(c, std::span<float>(work_));
        // This rank's own chunk was summed exactly, error included: nothing of it is carried on.
        if constexpr (feeds_back) {
          const auto own = part.chunk(std::span<float>(error_), c.rank());
          std::fill(own.begin(), own.end(), 0.0f);
        }
      } else {
        gather(c, std::span<float>(work_));
      }
      const auto mine = part.chunk(std::span<const float>(work_), c.rank());
      std::copy(mine.begin(), mine.end(), out.begin());
    });
  }

  //! What this rank's encodes lost and will add to its next contribution.
  [[nodiscard]] std::span<const float> carried_error() const noexcept { return error_; }
  //! Bytes this rank's frames held, over the dense bytes they stood for, in the last call.
  [[nodiscard]] std::uint64_t frame_bytes() const noexcept { return frame_bytes_; }
  [[nodiscard]] std::uint64_t dense_bytes() const noexcept { return dense_bytes_; }
  [[nodiscard]] C& codec() noexcept { return codec_; }

 private:
  void prepare(std::span<float> data) {
    if constexpr (feeds_back) {
      if (error_.size() != data.size()) {
        trinity::detail::require(error_.empty(), "data",
                                 "a compressed_all_reduce carries error for one tensor; use one per tensor");
        error_.assign(data.size(), 0.0f);
      }
      for (std::size_t i = 0; i < data.size(); ++i) data[i] += error_[i];
    }
    frame_bytes_ = dense_bytes_ = 0;
  }

  // Encodes `in`; where feeding back, records in - decode(frame) at error positions [at, at + in.size()).
  void encode(std::span<const float> in, std::size_t at) {
    frame_.clear();
    if constexpr (feeds_back) {
      codec_.encode(in, frame_, std::span<float>(error_).subspan(at, in.size()));
    } else {
      codec_.encode(in, frame_);
    }
    frame_bytes_ += frame_.size();
    dense_bytes_ += in.size_bytes();
  }

  void decode_into(std::span<const std::byte> frame, std::span<float> out) {
    compress::decoder rx;
    rx.decode_into(frame, out);
  }

  // Frames vary in size, so each send is preceded by its size (8 bytes) on the same link.
  template <Communicator Comm>
  std::span<const std::byte> pass(Comm& c, std::span<const std::byte> out, int next, int prev) {
    std::uint64_t mine = out.size(), theirs = 0;
    c.sendrecv(std::as_bytes(std::span<const std::uint64_t>(&mine, 1)), next,
               std::as_writable_bytes(std::span<std::uint64_t>(&theirs, 1)), prev);
    trinity::detail::require(theirs <= (std::uint64_t{1} << 40), "frame", "a peer announced an impossible frame size");
    incoming_.resize(static_cast<std::size_t>(theirs));
    c.sendrecv(out, next, std::span<std::byte>(incoming_), prev);
    return incoming_;
  }

  template <Communicator Comm>
  void ring(Comm& c, std::span<float> data) {
    if (c.size() == 1) {
      if constexpr (feeds_back) std::fill(error_.begin(), error_.end(), 0.0f);
      return;
    }
    ring_reduce_scatter(c, data);
    ring_all_gather(c, data);
  }

  template <Communicator Comm>
  void ring_reduce_scatter(Comm& c, std::span<float> data) {
    const int n = c.size(), r = c.rank();
    const partition part(data.size(), n);
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    std::vector<float> got(part.largest()), partial(part.largest());
    // Reduce-scatter: the partial sum of a chunk travels encoded; each hop decodes, adds its own, re-encodes.
    for (int s = 0; s < n - 1; ++s) {
      const int send_chunk = (r - s - 1 + 2 * n) % n, recv_chunk = (r - s - 2 + 2 * n) % n;
      const std::span<const float> send = s == 0 ? std::span<const float>(part.chunk(data, send_chunk))
                                                 : std::span<const float>(partial.data(), part.size(send_chunk));
      encode(send, part.begin(send_chunk));
      const auto frame = pass(c, std::span<const std::byte>(frame_.data(), frame_.size()), next, prev);
      const std::span<float> into(got.data(), part.size(recv_chunk));
      decode_into(frame, into);
      const std::span<float> dst =
          s == n - 2 ? part.chunk(data, recv_chunk) : std::span<float>(partial.data(), into.size());
      combine<float>(into, part.chunk(data, recv_chunk), dst, reduce_op::sum);
      detail::note_reduction(c, into.size_bytes());
    }
  }

  template <Communicator Comm>
  void ring_all_gather(Comm& c, std::span<float> data) {
    const int n = c.size(), r = c.rank();
    const partition part(data.size(), n);
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    // All-gather: the owner encodes its reduced chunk once; everyone, the owner too, decodes the same frame.
    std::vector<std::byte> carried;
    encode(part.chunk(data, r), part.begin(r));
    carried.assign(frame_.data(), frame_.data() + frame_.size());
    decode_into(carried, part.chunk(data, r));
    for (int s = 0; s < n - 1; ++s) {
      const int recv_chunk = (r - s - 1 + n) % n;
      const auto frame = pass(c, carried, next, prev);
      decode_into(frame, part.chunk(data, recv_chunk));
      carried.assign(frame.begin(), frame.end());  // forwarded unchanged: no error compounds on the way round
    }
  }

  template <Communicator Comm>
  void gather(Comm& c, std::span<float> data) {
    const int n = c.size();
    encode(data, 0);
    // Sizes first (one word per rank), then every frame padded to the largest.
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(n));
    const std::uint64_t mine = frame_.size();
    ring::all_gather<Comm, std::uint64_t>(c, std::span<const std::uint64_t>(&mine, 1), std::span<std::uint64_t>(sizes));
    const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    trinity::detail::require(largest <= (std::uint64_t{1} << 40), "frame", "a peer announced an impossible frame size");
    const auto stride = static_cast<std::size_t>(largest);
    std::vector<std::byte> all(stride * static_cast<std::size_t>(n));
    std::vector<std::byte> padded(stride);
    if (!frame_.empty()) std::memcpy(padded.data(), frame_.data(), frame_.size());
    ring::all_gather<Comm, std::byte>(c, std::span<const std::byte>(padded), std::span<std::byte>(all));
    std::vector<float> each(data.size());
    std::fill(data.begin(), data.end(), 0.0f);
    for (int q = 0; q < n; ++q) {  // in rank order: every rank adds the same numbers in the same order
      decode_into(std::span<const std::byte>(all).subspan(static_cast<std::size_t>(q) * stride,
                                                          static_cast<std::size_t>(sizes[static_cast<std::size_t>(q)])),
                  each);
      combine<float>(data, each, data, reduce_op::sum);
      detail::note_reduction(c, data.size_bytes());
    }
  }

  C codec_{};
  std::vector<float> work_;
  compress::frame_buffer frame_;
  std::vector<std::byte> incoming_;
  std::vector<float> error_;
  std::uint64_t frame_bytes_ = 0, dense_bytes_ = 0;
};

//! shard::data_parallel's gradient reduction through a codec: one compressed_all_reduce per layer, each
//! carrying its own error, for the all-reduce of DDP and the reduce-scatter of ZeRO alike.
//!
//!   shard::data_parallel<shard::zero<2>, Comm, comm::compressed_reduction<compress::int8>> dp(...);
template <class C, class Scheme = compressed_ring>
class compressed_reduction {
 public:
  static constexpr bool compresses = true;
  using collective = compressed_all_reduce<C, Scheme>;

  template <Communicator Comm>
  void all_reduce(Comm& c, std::size_t layer, std::span<float> gradient) {
    at(layer)(c, gradient);
  }
  template <Communicator Comm>
  void reduce_scatter(Comm& c, std::size_t layer, std::span<const float> gradient, std::span<float> mine) {
    at(layer).reduce_scatter(c, gradient, mine);
  }
  [[nodiscard]] std::size_t layers() const noexcept { return per_layer_.size(); }

 private:
  collective& at(std::size_t layer) {
    if (layer >= per_layer_.size()) per_layer_.resize(layer + 1);
    return per_layer_[layer];
  }
  std::vector<collective> per_layer_;
};

}  // namespace trinity::comm
