#pragma once
//! \file
//! The simulated fabric's communicator: ranks run as threads and move real
//! bytes (so results can be checked), while each keeps a virtual clock that
//! the α-β cost of every message advances, plus the reduction's compute. A
//! message from a rank whose clock reads t arrives at t + α + bytes/B; a
//! receiver's clock moves to the later of its own and the arrival. Ports are
//! full duplex: a sendrecv costs one message time, not two. So a ring
//! all-reduce of S bytes on n ranks takes exactly
//!   2(n − 1)·α + 2(n − 1)/n · S/B + (n − 1)/n · S/R
//! (R the reduction rate; model/collectives.hpp), whatever the host's speed.

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

#include <trinity/comm/thread_world.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/links/link_descriptor.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::sim {

//! What one rank's port costs. reduce_rate zero means the reduction is free.
struct fabric_link {
  seconds latency{};
  bytes_per_second bandwidth{};
  bytes_per_second reduce_rate{};

  static constexpr fabric_link from(const link_descriptor& l, bytes_per_second reduce_rate = {}) {
    return {l.latency, l.bandwidth, reduce_rate};
  }
};

constexpr void validate(const fabric_link& l) {
  trinity::detail::require(l.bandwidth > bytes_per_second{} && trinity::detail::is_finite(l.bandwidth.value()),
                           "bandwidth", "must be positive and finite");
  trinity::detail::require(l.latency >= seconds{} && trinity::detail::is_finite(l.latency.value()), "latency",
                           "must be finite and not negative");
  trinity::detail::require(l.reduce_rate >= bytes_per_second{} && trinity::detail::is_finite(l.reduce_rate.value()),
                           "reduce_rate", "must be finite and not negative (zero: reductions are free)");
}

class communicator {
 public:
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "sim";

  communicator(comm::thread_world& world, int rank, fabric_link link) : inner_(world, rank), link_(link) {
    validate(link);
  }

  [[nodiscard]] int rank() const noexcept { return inner_.rank(); }
  [[nodiscard]] int size() const noexcept { return inner_.size(); }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return inner_.bytes_sent(); }
  //! This rank's virtual clock.
  [[nodiscard]] seconds now() const noexcept { return seconds{clock_}; }
  void advance(seconds dt) noexcept { clock_ += dt.value(); }

  void send(std::span<const std::byte> out, int dest) { sendrecv(out, dest, {}, -1); }
  void recv(std::span<std::byte> in, int source) { sendrecv({}, -1, in, source); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    const double start = clock_;
    const double sent_at = inner_.exchange(out, dest, in, source, start);
    double done = start;
    if (dest >= 0) done = start + message_time(out.size());
    if (source >= 0) done = std::max(done, sent_at + message_time(in.size()));
    clock_ = done;
  }
  //! Called by the generic algorithms for each reduction they perform.
  void account_reduction(std::size_t bytes) noexcept {
    if (link_.reduce_rate.value() > 0) clock_ += static_cast<double>(bytes) / link_.reduce_rate.value();
  }

 private:
  [[nodiscard]] double message_time(std::size_t n) const noexcept {
    return link_.latency.value() + static_cast<double>(n) / link_.bandwidth.value();
  }

  comm::thread_communicator inner_;
  fabric_link link_;
  double clock_ = 0.0;
};

}  // namespace trinity::sim
