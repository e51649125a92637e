#pragma once
//! \file
//! Ring reduce-scatter, all-gather and all-reduce (Patarasuk & Yuan, 2009):
//! n − 1 steps each, every rank sending S/n per step, so the all-reduce moves
//! 2(n − 1)/n · S per rank, the bandwidth optimum. Rank r ends the
//! reduce-scatter holding chunk r of comm::partition, the chunk ZeRO shards
//! on, so an all-reduce and a reduce-scatter of the same data agree bit for bit.
//!
//! The reduction order is fixed by (n, count) alone: chunk c accumulates
//! along the ring starting at rank c + 1, so every run gives the same bits,
//! and every rank gets the same bits, because each chunk is reduced once.

#include <algorithm>
#include <cstring>
#include <span>

#include <trinity/comm/detail/hooks.hpp>
#include <trinity/comm/detail/workspace.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm::ring {

//! out (chunk `rank` of the partition of in.size() over size() ranks) = op over all ranks of that chunk of in.
//! in may be the same memory as the full buffer out is a chunk of.
template <Communicator C, reducible T>
void reduce_scatter(C& c, std::span<const T> in, std::span<T> out, reduce_op op) {
  const int n = c.size(), r = c.rank();
  const partition part(in.size(), n);
  trinity::detail::require(out.size() == part.size(r), "out",
                           "a reduce-scatter's output holds this rank's chunk, partition(count, size).size(rank)");
  if (n == 1) {
    if (!out.empty() && out.data() != in.data()) std::memmove(out.data(), in.data(), out.size_bytes());
    return;
  }
  auto ws = detail::workspace<T>(2 * part.largest());
  const std::span<T> acc = ws.first(part.largest()), rx = ws.subspan(part.largest());
  const int next = detail::wrap(r + 1, n), prev = detail::wrap(r - 1, n);
  for (int s = 0; s < n - 1; ++s) {
    const int send_chunk = detail::wrap(r - s - 1, n), recv_chunk = detail::wrap(r - s - 2, n);
    const std::span<const T> send =
        s == 0 ? part.chunk(in, send_chunk) : std::span<const T>(acc.first(part.size(send_chunk)));
    const std::span<T> got = rx.first(part.size(recv_chunk));
    c.sendrecv(std::as_bytes(send), next, std::as_writable_bytes(got), prev);
    const std::span<T> dst = s == n - 2 ? out : acc.first(got.size());
    combine<T>(got, part.chunk(in, recv_chunk), dst, op);
    detail::note_reduction(c, got.size_bytes());
  }
}

//! Every rank contributes chunk `rank` (in) and receives all chunks (out, the full buffer).
//! in may already be chunk `rank` of out.
template <Communicator C, class T>
void all_gather(C& c, std::span<const T> in, std::span<T> out) {
  const int n = c.size(), r = c.rank();
  const partition part(out.size(), n);
  trinity::detail::require(in.size() == part.size(r), "in",
                           "an all-gather's input is this rank's chunk, partition(count, size).size(rank)");
  const std::span<T> mine = part.chunk(out, r);
  if (!in.empty() && in.data() != mine.data()) std::memmove(mine.data(), in.data(), in.size_bytes());
  const int next = detail::wrap(r + 1, n), prev = detail::wrap(r - 1, n);
  for (int s = 0; s < n - 1; ++s) {
    const int send_chunk = detail::wrap(r - s, n), recv_chunk = detail::wrap(r - s - 1, n);
    c.sendrecv(std::as_bytes(part.chunk(out, send_chunk)), next, std::as_writable_bytes(part.chunk(out, recv_chunk)),
               prev);
  }
}

//! data = op over all ranks of data, in place.
template <Communicator C, reducible T>
void all_reduce(C& c, std::span<T> data, reduce_op op) {
  const partition part(data.size(), c.size());
  const std::span<T> mine = part.chunk(data, c.rank());
  ring::reduce_scatter<C, T>(c, data, mine, op);
  ring::all_gather<C, T>(c, mine, data);
}

}  // namespace trinity::comm::ring
