#pragma once
//! \file
//! The α-β cost of the collectives (Thakur, Rabenseifner & Gropp, 2005) and
//! nccl-tests' bus bandwidth, beside the mechanisms in comm/ but blind to
//! them. S is the whole buffer in bytes, n the ranks, α the per-message
//! latency, B a rank's port bandwidth, R the rate at which a rank reduces.
//!   ring all-reduce          2(n − 1)·α + 2(n − 1)/n · S/B + (n − 1)/n · S/R
//!   ring reduce-scatter      (n − 1)·α + (n − 1)/n · S/B + (n − 1)/n · S/R
//!   ring all-gather          (n − 1)·α + (n − 1)/n · S/B
//!   halving-doubling (n = 2^k) 2·log2(n)·α + 2(n − 1)/n · S/B + (n − 1)/n · S/R
//! The formulas assume S divides evenly; the mechanism's uneven chunks cost at
//! most one element more per step.

#include <bit>
#include <cstddef>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

struct collective_link {
  seconds latency{};               //!< α, per message
  bytes_per_second bandwidth{};    //!< B, per rank and direction
  bytes_per_second reduce_rate{};  //!< R; zero means reductions are free
};

//! Throws invalid_input naming the field unless the link's figures can be used.
constexpr void validate(const collective_link& l) {
  trinity::detail::require(l.bandwidth > bytes_per_second{} && trinity::detail::is_finite(l.bandwidth.value()),
                           "bandwidth", "must be positive and finite");
  trinity::detail::require(l.latency >= seconds{} && trinity::detail::is_finite(l.latency.value()), "latency",
                           "must be finite and not negative");
  trinity::detail::require(l.reduce_rate >= bytes_per_second{} && trinity::detail::is_finite(l.reduce_rate.value()),
                           "reduce_rate", "must be finite and not negative (zero: reductions are free)");
}

namespace detail {
constexpr void check(const collective_link& l, std::size_t ranks, bytes size) {
  trinity::detail::require(ranks >= 1, "ranks", "must be at least 1");
  trinity::detail::require(size >= bytes{} && trinity::detail::is_finite(size.value()), "size",
                           "must be finite and not negative");
  validate(l);
}
constexpr seconds reduce_time(const collective_link& l, bytes b) {
  return l.reduce_rate > bytes_per_second{} ? b / l.reduce_rate : seconds{};
}
constexpr double share(std::size_t n) { return static_cast<double>(n - 1) / static_cast<double>(n); }
}  // namespace detail

constexpr seconds ring_reduce_scatter_time(std::size_t ranks, bytes size, const collective_link& l) {
  detail::check(l, ranks, size);
  const double steps = static_cast<double>(ranks - 1);
  return steps * l.latency + detail::share(ranks) * (size / l.bandwidth) +
         detail::reduce_time(l, detail::share(ranks) * size);
}

constexpr seconds ring_all_gather_time(std::size_t ranks, bytes size, const collective_link& l) {
  detail::check(l, ranks, size);
  return static_cast<double>(ranks - 1) * l.latency + detail::share(ranks) * (size / l.bandwidth);
}

constexpr seconds ring_all_reduce_time(std::size_t ranks, bytes size, const collective_link& l) {
  return ring_reduce_scatter_time(ranks, size, l) + ring_all_gather_time(ranks, size, l);
}

//! The pairwise all-to-all (comm/all_to_all.hpp) of `size` bytes per rank, size/n to each rank: n − 1 steps,
//! each one block each way; nothing is reduced.
constexpr seconds pairwise_all_to_all_time(std::size_t ranks, bytes size, const collective_link& l) {
  detail::check(l, ranks, size);
  return static_cast<double>(ranks - 1) * l.latency + detail::share(ranks) * (size / l.bandwidth);
}

//! For a power-of-two rank count; other counts add a fold and an unfold of the whole buffer.
constexpr seconds halving_doubling_all_reduce_time(std::size_t ranks, bytes size, const collective_link& l) {
  detail::check(l, ranks, size);
  const std::size_t p = std::bit_floor(ranks);
  const double steps = 2.0 * static_cast<double>(std::countr_zero(p));
  seconds t = steps * l.latency + 2.0 * detail::share(p) * (size / l.bandwidth) +
              detail::reduce_time(l, detail::share(p) * size);
  if (p != ranks) t += 2.0 * (l.latency + size / l.bandwidth) + detail::reduce_time(l, size);
  return t;
}

//! nccl-tests' bus bandwidth: algbw (S / time) times the factor that makes it comparable with a link's
//! speed: 2(n − 1)/n for all-reduce, (n − 1)/n for reduce-scatter and all-gather, 1 for broadcast.
enum class collective_kind { all_reduce, reduce_scatter, all_gather, broadcast };

constexpr double bus_bandwidth_factor(collective_kind k, std::size_t ranks) {
  trinity::detail::require(ranks >= 1, "ranks", "must be at least 1");
  switch (k) {
    case collective_kind::all_reduce:
      return 2.0 * detail::share(ranks);
    case collective_kind::reduce_scatter:
    case collective_kind::all_gather:
      return detail::share(ranks);
    case collective_kind::broadcast:
      return 1.0;
  }
  return 1.0;
}

constexpr bytes_per_second bus_bandwidth(collective_kind k, std::size_t ranks, bytes size, seconds time) {
  trinity::detail::require(time > seconds{}, "time", "must be positive");
  return bus_bandwidth_factor(k, ranks) * (size / time);
}

}  // namespace trinity::model
