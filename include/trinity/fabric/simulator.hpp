#pragma once
//! \file
//! A flow-level simulation of a fabric on a virtual clock. Each transfer is a
//! flow along its route; its bytes become whole flits or packets
//! (fabric/packetization.hpp); every direction of every link is shared among
//! the flows crossing it max-min fairly (progressive filling: the most
//! contended link fixes its flows' rates first, and what they cannot use goes
//! to the others). A flow finishes when its last byte is sent plus the
//! route's idle latency. Under port-based routing (CXL 3.0 PBR) a flow takes,
//! among the fewest-hop paths, the one whose busiest link has the fewest
//! flows per byte of bandwidth when it starts (L1202–1206); under HBR every
//! flow between two nodes takes the same path. Events are flow arrivals and completions; flows that
//! start or end at the same instant are one batch, so a ring step across a
//! thousand accelerators costs one rate computation, not a thousand.
//!
//!   fabric::simulator sim(topo);
//!   auto f = sim.transfer(gpu0, tray3, 1_GB);
//!   sim.run();
//!   seconds t = sim.finish(f);

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/packetization.hpp>
#include <trinity/fabric/topology.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::fabric {

class simulator {
 public:
  explicit simulator(const topology& t) : topo_(&t) {
    t.validate();
    capacity_.resize(2 * t.edges());
    for (std::uint32_t e = 0; e < t.edges(); ++e)
      capacity_[2 * e] = capacity_[2 * e + 1] = t.link(e).link.bandwidth.value();
    users_.resize(2 * t.edges());
  }

  //! Starts a transfer of `payload` bytes from a to b at time `at` (default: now). Returns its id.
  std::size_t transfer(std::uint32_t a, std::uint32_t b, bytes payload, std::optional<seconds> at = {}) {
    const double start = at ? at->value() : now_;
    trinity::detail::require(start >= now_, "at", "a transfer cannot start in the simulated past");
    const route_info& r = pick(route_between(a, b));
    flow f;
    f.resources = r.resources;
    f.start = start;
    f.latency = r.latency;
    f.wire = r.resources.empty() ? 0.0 : packetize(r.format, payload.value()).bytes;
    f.remaining = f.wire;
    flows_.push_back(std::move(f));
    pending_.push_back(flows_.size() - 1);
    return flows_.size() - 1;
  }

  //! Runs until every started flow has finished.
  void run() {
    while (!pending_.empty() || !active_.empty()) step();
  }

  [[nodiscard]] seconds now() const noexcept { return seconds{now_}; }
  [[nodiscard]] seconds finish(std::size_t f) const {
    trinity::detail::require(f < flows_.size() && flows_[f].done, "flow", "has not finished; call run() first");
    return seconds{flows_[f].finish};
  }
  [[nodiscard]] double wire_bytes(std::size_t f) const { return flows_.at(f).wire; }
  //! Arrivals and completions processed so far.
  [[nodiscard]] std::uint64_t events() const noexcept { return events_; }
  //! Advances the clock to t (no flow may be running past it unseen: it runs them first).
  void advance_to(seconds t) {
    while ((!pending_.empty() || !active_.empty()) && next_event() <= t.value()) step();
    now_ = std::max(now_, t.value());
  }

 private:
  // What a route costs, found once per (source, destination): a ring step makes the same thousand
  // transfers two thousand times.
  struct route_info {
    std::vector<std::uint32_t> resources;  // link directions, 2·edge + (0: a→b, 1: b→a)
    double latency = 0;
    wire_format format = wire_format::stream;  // of the narrowest link
  };
  const std::vector<route_info>& route_between(std::uint32_t a, std::uint32_t b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
    if (const auto it = routes_.find(key); it != routes_.end()) return it->second;
    std::vector<route_info> candidates;
    const auto paths = topo_->settings().pbr ? topo_->routes(a, b) : std::vector<path>{topo_->route(a, b)};
    for (const auto& p : paths) {
      route_info r;
      r.latency = topo_->idle_latency(a, p).value();
      auto at_node = a;
      double narrow = std::numeric_limits<double>::infinity();
      for (const auto e : p) {
        const auto& l = topo_->link(e);
        r.resources.push_back(2 * e + (l.a == at_node ? 0u : 1u));
        if (l.link.bandwidth.value() < narrow) {
          narrow = l.link.bandwidth.value();
          r.format = format_of(l.link.family, topo_->settings().pbr);
        }
        at_node = topo_->other_end(e, at_node);
      }
      candidates.push_back(std::move(r));
    }
    return routes_.emplace(key, std::move(candidates)).first->second;
  }

  // The candidate whose busiest link carries the fewest flows per byte of bandwidth (ties: the first).
  const route_info& pick(const std::vector<route_info>& candidates) const {
    if (candidates.size() == 1) return candidates.front();
    const route_info* best = &candidates.front();
    double best_load = std::numeric_limits<double>::infinity();
    for (const auto& r : candidates) {
      double load = 0;
      for (const auto res : r.resources)
        load = std::max(load, static_cast<double>(users_[res].size() + pending_on(res)) / capacity_[res]);
      if (load < best_load) best_load = load, best = &r;
    }
    return *best;
  }
  std::size_t pending_on(std::uint32_t res) const {
    std::size_t n = 0;
    for (const auto f : pending_)
      for (const auto r : flows_[f].resources) n += r == res;
    return n;
  }

  struct flow {
    std::vector<std::uint32_t> resources;
    double start = 0, latency = 0, wire = 0, remaining = 0, rate = 0, finish = 0, sent_at = 0;
    bool done = false;
  };

  double next_event() const {
    double t = std::numeric_limits<double>::infinity();
    for (const auto f : pending_) t = std::min(t, flows_[f].start);
    for (const auto f : active_)
      if (flows_[f].rate > 0) t = std::min(t, now_ + flows_[f].remaining / flows_[f].rate);
    return t;
  }

  void step() {
    const double t = next_event();
    // Move every active flow's bytes on to t.
    for (const auto f : active_) flows_[f].remaining -= flows_[f].rate * (t - now_);
    now_ = t;
    bool changed = false;
    // Completions at t (a relative tolerance absorbs the rounding of rate × time).
    for (std::size_t k = 0; k < active_.size();) {
      auto& f = flows_[active_[k]];
      if (f.remaining <= 1e-9 * std::max(1.0, f.wire)) {
        f.done = true;
        f.finish = now_ + f.latency;
        for (const auto r : f.resources) std::erase(users_[r], active_[k]);
        active_[k] = active_.back();
        active_.pop_back();
        ++events_;
        changed = true;
      } else {
        ++k;
      }
    }
    // Arrivals at t.
    for (std::size_t k = 0; k < pending_.size();) {
      auto& f = flows_[pending_[k]];
      if (f.start <= now_) {
        ++events_;
        if (f.resources.empty() || f.wire == 0) {  // local or empty: only the latency
          f.done = true;
          f.finish = now_ + f.latency;
        } else {
          active_.push_back(pending_[k]);
          for (const auto r : f.resources) users_[r].push_back(pending_[k]);
        }
        pending_[k] = pending_.back();
        pending_.pop_back();
        changed = true;
      } else {
        ++k;
      }
    }
    if (changed) share();
  }

  // Max-min fair rates by progressive filling.
  void share() {
    std::vector<double> room(capacity_);
    std::vector<std::uint32_t> unfixed(users_.size(), 0);
    for (std::size_t r = 0; r < users_.size(); ++r) unfixed[r] = static_cast<std::uint32_t>(users_[r].size());
    for (const auto f : active_) flows_[f].rate = -1;  // not fixed yet
    std::size_t left = active_.size();
    std::vector<std::size_t> busy;  // links some active flow crosses
    for (std::size_t r = 0; r < users_.size(); ++r)
      if (unfixed[r]) busy.push_back(r);
    while (left > 0) {
      double share = std::numeric_limits<double>::infinity();
      for (const auto r : busy)
        if (unfixed[r]) share = std::min(share, room[r] / unfixed[r]);
      // Every link at the tightest share fixes its flows in the same round: symmetric traffic (a ring step)
      // settles in one pass over the links instead of one pass per flow.
      std::vector<std::size_t> tight;
      for (const auto r : busy)
        if (unfixed[r] && room[r] / unfixed[r] <= share * (1 + 1e-12)) tight.push_back(r);
      for (const auto r0 : tight)
        for (const auto f : users_[r0]) {
          if (flows_[f].rate >= 0) continue;
          flows_[f].rate = share;
          --left;
          for (const auto r : flows_[f].resources) {
            room[r] -= share;
            --unfixed[r];
          }
        }
    }
  }

  const topology* topo_;
  std::unordered_map<std::uint64_t, std::vector<route_info>> routes_;
  std::vector<double> capacity_;
  std::vector<std::vector<std::size_t>> users_;
  std::vector<flow> flows_;
  std::vector<std::size_t> pending_, active_;
  double now_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace trinity::fabric
