#pragma once
//! \file
//! all_to_all and all_to_allv over any Communicator: every rank sends a block to every rank, as MPI_Alltoall and
//! MPI_Alltoallv do; what expert parallelism's token dispatch and combine run (a token goes to the rank that holds
//! its expert, and its result comes back).
//!
//!   comm::all_to_all(c, std::span<const float>(in), std::span<float>(out));   // n equal blocks each way
//!   comm::all_to_allv(c, in, send_counts, send_offsets, out, recv_counts, recv_offsets);
//!
//! Pairwise exchange: in step k (1 ≤ k < n) rank r sends to r + k and receives from r − k, so every pair meets
//! once and each step is one sendrecv per rank, n − 1 in all (Thakur et al. 2005's pairwise algorithm for
//! long messages); a rank's own block is copied. Counts are elements; offsets are elements from the span's
//! start, as MPI's displacements. Every rank must agree: the count rank r sends to rank j is the count j
//! receives from r. A disagreement is the backend's size mismatch, an error (comm/errors.hpp), not a hang.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <trinity/comm/detail/hooks.hpp>
#include <trinity/comm/errors.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

namespace detail {

// Each block [offsets[j], offsets[j] + counts[j]) lies in a span of `size` elements; one count and offset per rank.
inline void check_blocks(std::span<const std::size_t> counts, std::span<const std::size_t> offsets, std::size_t size,
                         int ranks, const char* counts_name, const char* offsets_name) {
  const auto n = static_cast<std::size_t>(ranks);
  trinity::detail::require(
      counts.size() == n, counts_name,
      "has " + std::to_string(counts.size()) + " entries; give one per rank (" + std::to_string(n) + ")");
  trinity::detail::require(
      offsets.size() == n, offsets_name,
      "has " + std::to_string(offsets.size()) + " entries; give one per rank (" + std::to_string(n) + ")");
  for (std::size_t j = 0; j < n; ++j)
    trinity::detail::require(offsets[j] <= size && counts[j] <= size - offsets[j], counts_name,
                             "block " + std::to_string(j) + " (" + std::to_string(counts[j]) + " elements at " +
                                 std::to_string(offsets[j]) + ") runs past the span's " + std::to_string(size) +
                                 " elements");
}

template <class T>
std::span<const std::byte> block_bytes(std::span<const T> s, std::size_t offset, std::size_t count) {
  return std::as_bytes(s.subspan(offset, count));
}
template <class T>
std::span<std::byte> block_bytes(std::span<T> s, std::size_t offset, std::size_t count) {
  return std::as_writable_bytes(s.subspan(offset, count));
}

}  // namespace detail

//! Rank r sends in[send_offsets[j] .. + send_counts[j]) to rank j and receives rank j's block for it into
//! out[recv_offsets[j] .. + recv_counts[j]). `in` and `out` must not overlap.
template <Communicator C, class T>
requires std::is_trivially_copyable_v<T>
void all_to_allv(C& c, std::span<const T> in, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_offsets, std::span<T> out, std::span<const std::size_t> recv_counts,
                 std::span<const std::size_t> recv_offsets) {
  const int n = c.size(), r = c.rank();
  detail::check_blocks(send_counts, send_offsets, in.size(), n, "send_counts", "send_offsets");
  detail::check_blocks(recv_counts, recv_offsets, out.size(), n, "recv_counts", "recv_offsets");
  const auto me = static_cast<std::size_t>(r);
  trinity::detail::require(send_counts[me] == recv_counts[me], "recv_counts",
                           "the block a rank keeps is as long as the one it sends itself: send_counts[" +
                               std::to_string(me) + "] is " + std::to_string(send_counts[me]) + ", recv_counts[" +
                               std::to_string(me) + "] " + std::to_string(recv_counts[me]));
  detail::naming_the_collective("all_to_allv", [&] {
    if (send_counts[me])
      std::memcpy(out.data() + recv_offsets[me], in.data() + send_offsets[me], send_counts[me] * sizeof(T));
    for (int k = 1; k < n; ++k) {
      const auto to = static_cast<std::size_t>(detail::wrap(r + k, n));
      const auto from = static_cast<std::size_t>(detail::wrap(r - k, n));
      c.sendrecv(detail::block_bytes(in, send_offsets[to], send_counts[to]), static_cast<int>(to),
                 detail::block_bytes(out, recv_offsets[from], recv_counts[from]), static_cast<int>(from));
    }
  });
}

//! n blocks of in.size() / n elements each way: block j of `in` goes to rank j, rank j's block for this rank
//! lands in block j of `out`.
template <Communicator C, class T>
requires std::is_trivially_copyable_v<T>
void all_to_all(C& c, std::span<const T> in, std::span<T> out) {
  const auto n = static_cast<std::size_t>(c.size());
  trinity::detail::require(in.size() % n == 0, "in",
                           "has " + std::to_string(in.size()) + " elements, not a multiple of the " +
                               std::to_string(n) + " ranks; give all_to_allv counts for uneven blocks");
  trinity::detail::require(out.size() == in.size(), "out",
                           "has " + std::to_string(out.size()) +
                               " elements; all_to_all receives as many as it sends (" + std::to_string(in.size()) +
                               ")");
  const std::size_t block = in.size() / n;
  std::vector<std::size_t> counts(n, block), offsets(n);
  for (std::size_t j = 0; j < n; ++j) offsets[j] = j * block;
  all_to_allv(c, in, std::span<const std::size_t>(counts), std::span<const std::size_t>(offsets), out,
              std::span<const std::size_t>(counts), std::span<const std::size_t>(offsets));
}

//! Anything but a Communicator as `c`: instead of "the required type is invalid", the Communicator ladder
//! (concepts/communicator.hpp) names what the type lacks and the fix.
template <class C, class... Args>
requires(!Communicator<C>) void all_to_allv(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(), "trinity: comm::all_to_allv(c, ...) takes a Communicator as c");
}
template <class C, class... Args>
requires(!Communicator<C>) void all_to_all(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(), "trinity: comm::all_to_all(c, in, out) takes a Communicator as c");
}

}  // namespace trinity::comm
