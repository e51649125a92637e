#pragma once
//! \file
//! The collectives as customization points: all_reduce, reduce_scatter,
//! all_gather, broadcast and barrier over any Communicator. Each one uses the
//! communicator's own member of the same name when it has one (a fast path,
//! such as MPI's shared-memory window) and the generic algorithm otherwise;
//! algorithm::ring or algorithm::halving_doubling forces the generic one.
//!
//!   comm::all_reduce(c, std::span<float>(grad), comm::reduce_op::sum);
//!   comm::all_reduce(c, in, out, comm::reduce_op::max);        // out of place
//!
//! Every rank must pass the same count, op and algorithm; a mismatch or a
//! rank that never arrives ends in an error (comm/errors.hpp), not a hang.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include <trinity/comm/broadcast.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/comm/halving_doubling.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

enum class algorithm : std::uint8_t {
  automatic,         //!< the communicator's fast path if it has one, else by size (small_message_bytes)
  ring,              //!< bandwidth-optimal; 2(n − 1) steps
  halving_doubling,  //!< latency-optimal; 2·log2(n) steps
  //! The communicator's own collective (MPI's shared-memory window, an NCCL call) if it has one, else the
  //! ring: never halving-doubling, so on the threads, simulated and MPI backends the bits are the ring's
  //! (a reduce-scatter's chunk equals the all-reduce's). What data_parallel uses.
  native_or_ring,
};

//! Below this many bytes, and on more than two ranks, automatic picks halving-doubling: its 2·log2(n)
//! latencies beat the ring's 2(n − 1) while the bytes are too few to matter. Measured on the in-process
//! backend (4, 6 and 8 ranks as threads on 2 cores, 1 KiB to 512 KiB): halving-doubling was faster at
//! every size up to 128 KiB (by 1.2-2.3x), the ring at 512 KiB on 6 ranks. The α-β model agrees in
//! shape: for n not a power of two the fold costs 2·S/B, which the ring's extra latencies pay for only
//! while S < (n − 2 − log2 p)·α·B.
inline constexpr std::size_t small_message_bytes = std::size_t{128} << 10;

namespace detail {
template <class C, class T>
concept has_all_reduce = requires(C& c, std::span<T> d, reduce_op op) {
  c.all_reduce(d, op);
};
template <class C, class T>
concept has_reduce_scatter = requires(C& c, std::span<const T> in, std::span<T> out, reduce_op op) {
  c.reduce_scatter(in, out, op);
};
template <class C, class T>
concept has_all_gather = requires(C& c, std::span<const T> in, std::span<T> out) {
  c.all_gather(in, out);
};
template <class C>
concept has_broadcast = requires(C& c, std::span<std::byte> d, int root) {
  c.broadcast(d, root);
};
}  // namespace detail

//! data = op over all ranks, in place.
template <Communicator C, reducible T>
void all_reduce(C& c, std::span<T> data, reduce_op op, algorithm how = algorithm::automatic) {
  detail::naming_the_collective("all_reduce", [&] {
    if (how == algorithm::automatic || how == algorithm::native_or_ring) {
      if constexpr (detail::has_all_reduce<C, T>) return c.all_reduce(data, op);
      if (how == algorithm::automatic)
        how = data.size_bytes() < small_message_bytes && c.size() > 2 ? algorithm::halving_doubling : algorithm::ring;
    }
    if (how == algorithm::halving_doubling) return halving_doubling::all_reduce<C, T>(c, data, op);
    return ring::all_reduce<C, T>(c, data, op);
  });
}

//! out = op over all ranks of in; in is left as it was.
template <Communicator C, reducible T>
void all_reduce(C& c, std::span<const T> in, std::span<T> out, reduce_op op, algorithm how = algorithm::automatic) {
  trinity::detail::require(in.size() == out.size(), "out", "an all-reduce's output has its input's size");
  if (!in.empty() && in.data() != out.data()) std::memmove(out.data(), in.data(), in.size_bytes());
  all_reduce<C, T>(c, out, op, how);
}

//! out = chunk `rank` (comm::partition) of op over all ranks of in.
template <Communicator C, reducible T>
void reduce_scatter(C& c, std::span<const T> in, std::span<T> out, reduce_op op, algorithm how = algorithm::automatic) {
  detail::naming_the_collective("reduce_scatter", [&] {
    if constexpr (detail::has_reduce_scatter<C, T>)
      if (how == algorithm::automatic || how == algorithm::native_or_ring) return c.reduce_scatter(in, out, op);
    ring::reduce_scatter<C, T>(c, in, out, op);
  });
}

//! out (all chunks) from every rank's chunk `rank` (in).
template <Communicator C, class T>
void all_gather(C& c, std::span<const T> in, std::span<T> out, algorithm how = algorithm::automatic) {
  detail::naming_the_collective("all_gather", [&] {
    if constexpr (detail::has_all_gather<C, T>)
      if (how == algorithm::automatic || how == algorithm::native_or_ring) return c.all_gather(in, out);
    ring::all_gather<C, T>(c, in, out);
  });
}

//! Chunk sizes above which broadcast pipelines down a chain instead of a binomial tree.
inline constexpr std::size_t chain_broadcast_bytes = std::size_t{256} << 10;

//! data on every rank = data on root.
template <Communicator C>
void broadcast(C& c, std::span<std::byte> data, int root, algorithm how = algorithm::automatic) {
  trinity::detail::require(root >= 0 && root < c.size(), "root", "must be a rank of the communicator");
  detail::naming_the_collective("broadcast", [&] {
    if constexpr (detail::has_broadcast<C>)
      if (how == algorithm::automatic || how == algorithm::native_or_ring) return c.broadcast(data, root);
    if (data.size() >= chain_broadcast_bytes) return chain::broadcast(c, data, root);
    binomial::broadcast(c, data, root);
  });
}
template <Communicator C, class T>
requires(!std::is_const_v<T>) void broadcast(C& c, std::span<T> data, int root, algorithm how = algorithm::automatic) {
  broadcast(c, std::as_writable_bytes(data), root, how);
}

//! Returns only when every rank has called it (a dissemination barrier: ⌈log2 n⌉ rounds).
template <Communicator C>
void barrier(C& c) {
  detail::naming_the_collective("barrier", [&] {
    const int n = c.size(), r = c.rank();
    for (int d = 1; d < n; d *= 2)
      c.sendrecv(std::span<const std::byte>{}, detail::wrap(r + d, n), std::span<std::byte>{}, detail::wrap(r - d, n));
  });
}

}  // namespace trinity::comm
