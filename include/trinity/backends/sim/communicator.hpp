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
//!
//! Built on a fabric::topology instead of one link, each pair of ranks costs
//! its own route: α the route's idle latency (per-hop and switch latencies),
//! B its narrowest link. Ranks sit at the topology's nodes the caller names.
//!
//!   auto t = fabric::presets::nvl72_cxl(8);
//!   auto at = t.of_kind(fabric::node_kind::accelerator);
//!   sim::communicator c(world, rank, t, at);    // rank r at node at[r]

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/comm/thread_world.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/fabric/topology.hpp>
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

  //! Ranks at nodes of a fabric: rank r at `places[r]`; every pair's messages cost that pair's route.
  communicator(comm::thread_world& world, int rank, const fabric::topology& t, std::span<const std::uint32_t> places,
               bytes_per_second reduce_rate = {})
      : inner_(world, rank), link_{{}, bytes_per_second{1}, reduce_rate} {
    trinity::detail::require(places.size() == static_cast<std::size_t>(world.size()), "places",
                             std::to_string(places.size()) + " nodes for " + std::to_string(world.size()) +
                                 " ranks; name one node of the topology per rank");
    for (const auto p : places)
      trinity::detail::require(p < t.nodes(), "places", std::to_string(p) + " is not a node of the topology");
    const auto me = places[static_cast<std::size_t>(rank)];
    to_.resize(places.size());
    from_.resize(places.size());
    for (std::size_t q = 0; q < places.size(); ++q) {
      if (places[q] == me) {
        to_[q] = from_[q] = {seconds{}, bytes_per_second{1e18}, reduce_rate};  // the same node: a local copy
        continue;
      }
      const auto out = t.route(me, places[q]), back = t.route(places[q], me);
      to_[q] = {t.idle_latency(me, out), t.bandwidth(out), reduce_rate};
      from_[q] = {t.idle_latency(places[q], back), t.bandwidth(back), reduce_rate};
    }
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
    if (dest >= 0)
      done = start + message_time(out.size(), to_.empty() ? link_ : to_.at(static_cast<std::size_t>(dest)));
    if (source >= 0)
      done = std::max(
          done, sent_at + message_time(in.size(), from_.empty() ? link_ : from_.at(static_cast<std::size_t>(source))));
    clock_ = done;
  }
  //! Called by the generic algorithms for each reduction they perform.
  void account_reduction(std::size_t bytes) noexcept {
    if (link_.reduce_rate.value() > 0) clock_ += static_cast<double>(bytes) / link_.reduce_rate.value();
  }

 private:
  [[nodiscard]] static double message_time(std::size_t n, const fabric_link& l) noexcept {
    return l.latency.value() + static_cast<double>(n) / l.bandwidth.value();
  }

  comm::thread_communicator inner_;
  fabric_link link_;
  std::vector<fabric_link> to_, from_;  //!< per peer, on a topology: this rank's route to it, and its route back
  double clock_ = 0.0;
};

}  // namespace trinity::sim
