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
#include <trinity/model/collectives.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::sim {

//! What one rank's port costs: α, B and the reduction rate R (zero: reductions are free). The model's
//! own type, so the simulation and the formula it must reproduce read the same figures.
using fabric_link = model::collective_link;

//! The α and B of a link preset.
constexpr fabric_link port_of(const link_descriptor& l, bytes_per_second reduce_rate = {}) {
  return {l.latency, l.bandwidth, reduce_rate};
}

class communicator {
 public:
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "sim";

  communicator(comm::thread_world& world, int rank, fabric_link link) : inner_(world, rank), link_(link) {
    model::validate(link);
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
