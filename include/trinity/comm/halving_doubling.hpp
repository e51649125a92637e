#pragma once
//! \file
//! Recursive halving-doubling all-reduce (Rabenseifner, 2004; Thakur et al.,
//! 2005): reduce-scatter by recursive halving, all-gather by recursive
//! doubling. 2·log2(p) steps instead of the ring's 2(n − 1), for the same
//! bytes when n is a power of two, so it wins where latency dominates: small
//! messages on many ranks. For other n the first 2·(n − p) ranks fold in
//! pairs first (p the largest power of two ≤ n) and unfold at the end.
//! Each element is reduced on one rank in an order fixed by (n, count), so
//! every rank and every run gets the same bits.

#include <bit>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include <trinity/comm/detail/hooks.hpp>
#include <trinity/comm/detail/workspace.hpp>
#include <trinity/comm/reduce_op.hpp>
#include <trinity/concepts/communicator.hpp>

namespace trinity::comm::halving_doubling {

template <Communicator C, reducible T>
void all_reduce(C& c, std::span<T> data, reduce_op op) {
  const int n = c.size(), r = c.rank();
  if (n == 1) return;
  const int p = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const int folded = n - p;  // ranks below 2·folded pair up: even ones hand their data to the odd one
  auto tmp = detail::workspace<T>(data.size());
  int me = -1;  // rank among the p that take part in the halving
  if (r < 2 * folded) {
    if (r % 2 == 0) {
      c.send(std::as_bytes(std::span<const T>(data)), r + 1);
    } else {
      c.recv(std::as_writable_bytes(tmp.first(data.size())), r - 1);
      combine<T>(tmp.first(data.size()), data, data, op);
      detail::note_reduction(c, data.size_bytes());
      me = r / 2;
    }
  } else {
    me = r - folded;
  }
  const auto real = [folded](int v) { return v < folded ? 2 * v + 1 : v + folded; };

  if (me >= 0) {
    struct range {
      std::size_t lo, hi;
    };
    std::vector<range> parents;
    range mine{0, data.size()};
    for (int d = p / 2; d >= 1; d /= 2) {
      const int partner = real(me ^ d);
      const std::size_t mid = mine.lo + (mine.hi - mine.lo) / 2;
      const bool low = (me & d) == 0;
      const range keep = low ? range{mine.lo, mid} : range{mid, mine.hi};
      const range give = low ? range{mid, mine.hi} : range{mine.lo, mid};
      const std::span<T> kept = data.subspan(keep.lo, keep.hi - keep.lo);
      const std::span<T> got = tmp.first(kept.size());
      c.sendrecv(std::as_bytes(std::span<const T>(data.subspan(give.lo, give.hi - give.lo))), partner,
                 std::as_writable_bytes(got), partner);
      combine<T>(got, kept, kept, op);
      detail::note_reduction(c, kept.size_bytes());
      parents.push_back(mine);
      mine = keep;
    }
    for (int d = 1; d < p; d *= 2) {
      const int partner = real(me ^ d);
      const range parent = parents.back();
      parents.pop_back();
      const range theirs = mine.lo == parent.lo ? range{mine.hi, parent.hi} : range{parent.lo, mine.lo};
      c.sendrecv(std::as_bytes(std::span<const T>(data.subspan(mine.lo, mine.hi - mine.lo))), partner,
                 std::as_writable_bytes(data.subspan(theirs.lo, theirs.hi - theirs.lo)), partner);
      mine = parent;
    }
  }
  if (r < 2 * folded) {
    if (r % 2 == 1)
      c.send(std::as_bytes(std::span<const T>(data)), r - 1);
    else
      c.recv(std::as_writable_bytes(data), r + 1);
  }
}

}  // namespace trinity::comm::halving_doubling
