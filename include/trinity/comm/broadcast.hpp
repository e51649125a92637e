#pragma once
//! \file
//! Broadcast from a root: a binomial tree for small messages (⌈log2 n⌉
//! steps of the whole message), a pipelined chain for large ones (the message
//! cut into segments that flow down the ranks, so each link carries S once
//! and the time tends to S/B as the segments shrink).

#include <algorithm>
#include <cstddef>
#include <span>

#include <trinity/comm/detail/hooks.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

namespace binomial {
template <Communicator C>
void broadcast(C& c, std::span<std::byte> data, int root) {
  const int n = c.size(), vr = detail::wrap(c.rank() - root, n);
  int mask = 1;
  while (mask < n) {
    if (vr & mask) {
      c.recv(data, detail::wrap(vr - mask + root, n));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) c.send(std::span<const std::byte>(data), detail::wrap(vr + mask + root, n));
}
}  // namespace binomial

namespace chain {
//! Segments of `segment` bytes flow root → root+1 → ... ; each rank forwards
//! segment k while it receives segment k + 1.
template <Communicator C>
void broadcast(C& c, std::span<std::byte> data, int root, std::size_t segment = std::size_t{1} << 20) {
  const int n = c.size(), vr = detail::wrap(c.rank() - root, n);
  if (n == 1 || data.empty()) return;
  const std::size_t segments = (data.size() + segment - 1) / segment;
  const auto seg = [&](std::size_t k) {
    const std::size_t lo = k * segment;
    return data.subspan(lo, std::min(segment, data.size() - lo));
  };
  const int next = detail::wrap(c.rank() + 1, n), prev = detail::wrap(c.rank() - 1, n);
  const bool first = vr == 0, last = vr == n - 1;
  if (first) {
    for (std::size_t k = 0; k < segments; ++k) c.send(std::span<const std::byte>(seg(k)), next);
    return;
  }
  c.recv(seg(0), prev);
  for (std::size_t k = 0; k < segments; ++k) {
    if (last) {
      if (k + 1 < segments) c.recv(seg(k + 1), prev);
    } else if (k + 1 < segments) {
      c.sendrecv(std::span<const std::byte>(seg(k)), next, seg(k + 1), prev);
    } else {
      c.send(std::span<const std::byte>(seg(k)), next);
    }
  }
}
}  // namespace chain

}  // namespace trinity::comm
