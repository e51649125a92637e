#pragma once
//! \file
//! A fabric: hosts, accelerators, switches, memory devices (trays, pools) and
//! XLink↔CXL bridges, joined by links from links/presets.hpp, under a CXL
//! version profile. validate() enforces the version gates of the report's
//! Table 1 (L1096–1114) and its scale limits, each refusal naming its rule;
//! route() finds the fewest-hop path; idle_latency() prices it:
//!   each run of one link family costs that family's latency once (CXL
//!   100 ns, NVLink 400 ns, UALink 800 ns, RDMA 2 µs: links/parameters.hpp),
//!   each CXL switch crossed adds a hop (fabric/parameters.hpp), and each
//!   bridge its conversion penalty.
//! So a load through one CXL switch costs 170 ns, inside the report's
//! 100–250 ns band, and every further switch 70 ns more.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/parameters.hpp>
#include <trinity/links/link_descriptor.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::fabric {

enum class node_kind : std::uint8_t { host, accelerator, switch_node, memory, bridge };

constexpr std::string_view to_string(node_kind k) noexcept {
  switch (k) {
    case node_kind::host:
      return "host";
    case node_kind::accelerator:
      return "accelerator";
    case node_kind::switch_node:
      return "switch";
    case node_kind::memory:
      return "memory";
    case node_kind::bridge:
      return "bridge";
  }
  return "unknown";
}

struct node {
  std::string name;
  node_kind kind;
  link_family family = link_family::cxl;  //!< what a switch switches
  bytes capacity{};                       //!< memory devices
};

struct edge {
  std::uint32_t a, b;
  link_descriptor link;
};

struct profile {
  int cxl_version = 3;  //!< 1, 2 or 3 (3 covers 3.1 and 3.2, L1241–1242)
  bool pbr = false;     //!< port-based routing (256 B flits, multi-host sharing): CXL 3.0 only
};

using path = std::vector<std::uint32_t>;  //!< edge indices, from source to destination

class topology {
 public:
  explicit topology(profile p = {}) : profile_(p) {}

  std::uint32_t add_host(std::string name) { return add({std::move(name), node_kind::host}); }
  std::uint32_t add_accelerator(std::string name) { return add({std::move(name), node_kind::accelerator}); }
  std::uint32_t add_switch(std::string name, link_family f = link_family::cxl) {
    return add({std::move(name), node_kind::switch_node, f});
  }
  std::uint32_t add_memory(std::string name, bytes capacity) {
    return add({std::move(name), node_kind::memory, link_family::cxl, capacity});
  }
  std::uint32_t add_bridge(std::string name) { return add({std::move(name), node_kind::bridge}); }
  std::uint32_t connect(std::uint32_t a, std::uint32_t b, const link_descriptor& l) {
    trinity::detail::require(a < nodes_.size() && b < nodes_.size() && a != b, "connect", "joins two distinct nodes");
    trinity::validate(l);
    edges_.push_back({a, b, l});
    adjacency_.resize(nodes_.size());
    adjacency_[a].push_back(static_cast<std::uint32_t>(edges_.size() - 1));
    adjacency_[b].push_back(static_cast<std::uint32_t>(edges_.size() - 1));
    return static_cast<std::uint32_t>(edges_.size() - 1);
  }

  [[nodiscard]] const profile& settings() const noexcept { return profile_; }
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_.size(); }
  [[nodiscard]] std::size_t edges() const noexcept { return edges_.size(); }
  [[nodiscard]] const node& at(std::uint32_t n) const { return nodes_.at(n); }
  [[nodiscard]] const edge& link(std::uint32_t e) const { return edges_.at(e); }
  [[nodiscard]] std::uint32_t find(std::string_view name) const {
    for (std::uint32_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].name == name) return i;
    throw invalid_input("node", "no node is named \"" + std::string(name) + "\"");
  }
  [[nodiscard]] std::vector<std::uint32_t> of_kind(node_kind k) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].kind == k) out.push_back(i);
    return out;
  }
  [[nodiscard]] std::uint32_t other_end(std::uint32_t e, std::uint32_t from) const {
    return edges_[e].a == from ? edges_[e].b : edges_[e].a;
  }

  //! The version gates and scale limits; throws invalid_input naming the rule broken.
  void validate() const {
    const int v = profile_.cxl_version;
    trinity::detail::require(v >= 1 && v <= 3, "cxl_version", "is 1, 2 or 3");
    if (profile_.pbr && v < 3)
      fail("cxl.pbr",
           "port-based routing needs CXL 3.0 (Table 1, L1096-1114); this profile is CXL " + std::to_string(v));
    std::size_t nvlink_accelerators = 0, ualink_accelerators = 0, coherent_accelerators = 0;
    for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
      const auto& nd = nodes_[n];
      bool nv = false, ua = false, cxl = false;
      for (const auto e : neighbours(n)) {
        nv = nv || edges_[e].link.family == link_family::nvlink;
        ua = ua || edges_[e].link.family == link_family::ualink;
        cxl = cxl || edges_[e].link.family == link_family::cxl;
      }
      if (nd.kind == node_kind::accelerator) {
        if (nv && ua)
          fail("xlink.mixed", nd.name + " has both NVLink and UALink links; one cluster speaks one XLink (L1919-1926)");
        nvlink_accelerators += nv;
        ualink_accelerators += ua;
        coherent_accelerators += cxl;
      }
      if (nd.kind == node_kind::switch_node && nd.family == link_family::cxl) {
        if (v == 1)
          fail("cxl1.switching",
               "switch " + nd.name + ": CXL 1.0 has no switching (Table 1); use CXL 2.0 or attach devices directly");
        for (const auto e : neighbours(n)) {
          const auto& other = nodes_[other_end(e, n)];
          if (other.kind == node_kind::switch_node && other.family == link_family::cxl && v < 3)
            fail("cxl2.switching.single_level",
                 "switches " + nd.name + " and " + other.name +
                     " cascade; CXL 2.0 allows a single level of switching (Table 1, L1171-1173). Use CXL 3.0");
        }
      }
      if (nd.kind == node_kind::memory) {
        std::size_t hosts = 0;
        for (std::uint32_t h : of_kind(node_kind::host)) hosts += reaches_over_cxl(h, n);
        if (v == 1 && hosts > 1)
          fail("cxl1.pooling", nd.name + " is reachable from " + std::to_string(hosts) +
                                   " hosts; CXL 1.0 has no memory pooling (Table 1)");
      }
    }
    // Devices below each host root port (a host's CXL link), through CXL switches only.
    for (std::uint32_t h : of_kind(node_kind::host))
      for (const auto e : neighbours(h)) {
        if (edges_[e].link.family != link_family::cxl) continue;
        std::size_t memories = 0, accelerators = 0;
        below_port(h, e, memories, accelerators);
        const std::size_t max_mem = v == 1 ? 1 : v == 2 ? 256 : 4096, max_acc = v == 3 ? 256 : 1;
        if (memories > max_mem)
          fail("cxl" + std::to_string(v) + ".memory_devices_per_root_port",
               std::to_string(memories) + " memory devices below one root port of " + nodes_[h].name + "; CXL " +
                   std::to_string(v) + " allows " + std::to_string(max_mem) + " (Table 1)");
        if (accelerators > max_acc)
          fail("cxl" + std::to_string(v) + ".accelerators_per_root_port",
               std::to_string(accelerators) + " accelerators below one root port of " + nodes_[h].name + "; CXL " +
                   std::to_string(v) + " allows " + std::to_string(max_acc) + " (Table 1)");
      }
    if (coherent_accelerators > 256)
      fail("cxl.coherent_accelerators", std::to_string(coherent_accelerators) +
                                            " cache-coherent accelerators; CXL allows 256 per network (L1494-1495)");
    // The limit is per NVLink domain: the GPUs NVLink joins, through NVLink switches. Domains joined only by
    // another fabric (InfiniBand between DGX nodes) each have their own.
    if (nvlink_accelerators > 576) {
      std::vector<char> seen(nodes_.size(), 0);
      for (std::uint32_t start = 0; start < nodes_.size(); ++start) {
        if (seen[start] || nodes_[start].kind != node_kind::accelerator) continue;
        std::size_t gpus = 0;
        std::deque<std::uint32_t> q{start};
        seen[start] = 1;
        while (!q.empty()) {
          const auto n = q.front();
          q.pop_front();
          gpus += nodes_[n].kind == node_kind::accelerator;
          for (const auto e : neighbours(n)) {
            const auto m = other_end(e, n);
            if (seen[m] || edges_[e].link.family != link_family::nvlink) continue;
            seen[m] = 1;
            q.push_back(m);
          }
        }
        if (gpus > 576)
          fail("nvlink.domain", std::to_string(gpus) + " GPUs in one NVLink domain; NVLink 5 allows 576 (L1799)");
      }
    }
    if (ualink_accelerators > 1024)
      fail("ualink.cluster",
           std::to_string(ualink_accelerators) + " accelerators on UALink; UALink 1.0 allows 1,024 (L1777-1778)");
  }

  //! Fewest-hop path from a to b through switches, bridges and hosts; ties go to the lower edge index.
  [[nodiscard]] path route(std::uint32_t a, std::uint32_t b) const {
    trinity::detail::require(a < nodes_.size() && b < nodes_.size(), "route", "names nodes of this fabric");
    if (a == b) return {};
    std::vector<std::uint32_t> via(nodes_.size(), std::numeric_limits<std::uint32_t>::max());
    std::vector<char> seen(nodes_.size(), 0);
    std::deque<std::uint32_t> q{a};
    seen[a] = 1;
    while (!q.empty()) {
      const auto n = q.front();
      q.pop_front();
      if (n == b) break;
      if (n != a && !forwards(n)) continue;
      for (const auto e : neighbours(n)) {
        const auto m = other_end(e, n);
        if (seen[m]) continue;
        seen[m] = 1;
        via[m] = e;
        q.push_back(m);
      }
    }
    if (!seen[b]) throw invalid_input("route", "no path from " + nodes_[a].name + " to " + nodes_[b].name);
    path p;
    for (auto n = b; n != a; n = other_end(via[n], n)) p.push_back(via[n]);
    std::reverse(p.begin(), p.end());
    return p;
  }

  //! Every fewest-hop path from a to b, up to `most` of them, route(a, b) first. Port-based routing picks
  //! among these by congestion (fabric::simulator does, under PBR).
  [[nodiscard]] std::vector<path> routes(std::uint32_t a, std::uint32_t b, std::size_t most = 8) const {
    const path first = route(a, b);
    std::vector<path> out{first};
    if (first.size() < 2) return out;
    // Distance from a over the same forwarding rule, then walk back from b along edges that step down by one.
    std::vector<std::size_t> dist(nodes_.size(), std::numeric_limits<std::size_t>::max());
    std::deque<std::uint32_t> q{a};
    dist[a] = 0;
    while (!q.empty()) {
      const auto n = q.front();
      q.pop_front();
      if (n != a && !forwards(n)) continue;
      for (const auto e : neighbours(n)) {
        const auto m = other_end(e, n);
        if (dist[m] == std::numeric_limits<std::size_t>::max()) dist[m] = dist[n] + 1, q.push_back(m);
      }
    }
    path partial;
    const auto walk = [&](auto&& self, std::uint32_t at) -> void {
      if (out.size() >= most) return;
      if (at == a) {
        path p(partial.rbegin(), partial.rend());
        if (p != first) out.push_back(std::move(p));
        return;
      }
      for (const auto e : neighbours(at)) {
        const auto prev = other_end(e, at);
        if (dist[prev] + 1 != dist[at] || (prev != a && !forwards(prev))) continue;
        partial.push_back(e);
        self(self, prev);
        partial.pop_back();
      }
    };
    walk(walk, b);
    return out;
  }

  //! The unloaded latency of a path (see the file comment).
  [[nodiscard]] seconds idle_latency(std::uint32_t from, const path& p) const {
    seconds t{};
    auto at = from;
    std::optional<link_family> run;
    for (std::size_t k = 0; k < p.size(); ++k) {
      const auto& l = edges_[p[k]].link;
      if (!run || *run != l.family) t += l.latency;  // a new run of this family pays its latency once
      run = l.family;
      at = other_end(p[k], at);
      if (k + 1 < p.size()) {
        const auto& via = nodes_[at];
        if (via.kind == node_kind::switch_node && via.family == link_family::cxl) t += parameters::cxl_switch_hop;
        if (via.kind == node_kind::bridge) t += parameters::bridge_conversion;
      }
    }
    return t;
  }
  [[nodiscard]] seconds idle_latency(std::uint32_t a, std::uint32_t b) const { return idle_latency(a, route(a, b)); }

  //! CXL switches a path crosses.
  [[nodiscard]] std::size_t switch_hops(std::uint32_t from, const path& p) const {
    std::size_t hops = 0;
    auto at = from;
    for (std::size_t k = 0; k + 1 < p.size(); ++k) {
      at = other_end(p[k], at);
      hops += nodes_[at].kind == node_kind::switch_node;
    }
    return hops;
  }

  //! The narrowest link of a path.
  [[nodiscard]] bytes_per_second bandwidth(const path& p) const {
    bytes_per_second b{std::numeric_limits<double>::infinity()};
    for (const auto e : p) b = std::min(b, edges_[e].link.bandwidth);
    return b;
  }

 private:
  std::uint32_t add(node n) {
    trinity::detail::require(!n.name.empty(), "name", "every node needs a name");
    for (const auto& m : nodes_)
      if (m.name == n.name) throw invalid_input("name", "two nodes are named \"" + n.name + "\"");
    nodes_.push_back(std::move(n));
    adjacency_.resize(nodes_.size());
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  [[noreturn]] static void fail(const std::string& rule, const std::string& why) { throw invalid_input(rule, why); }
  [[nodiscard]] const std::vector<std::uint32_t>& neighbours(std::uint32_t n) const { return adjacency_[n]; }
  // Switches and bridges forward; so do hosts, whose root complex carries an attached accelerator's
  // traffic on (a Grace between its Blackwell's C2C link and the CXL fabric).
  [[nodiscard]] bool forwards(std::uint32_t n) const {
    return nodes_[n].kind == node_kind::switch_node || nodes_[n].kind == node_kind::bridge ||
           nodes_[n].kind == node_kind::host;
  }
  // Calls visit(n) for every node below host h's root port e: reached over CXL links through CXL switches.
  template <class Visit>
  void walk_below_port(std::uint32_t h, std::uint32_t e, Visit visit) const {
    std::vector<char> seen(nodes_.size(), 0);
    seen[h] = 1;
    std::deque<std::uint32_t> q{other_end(e, h)};
    seen[q.front()] = 1;
    while (!q.empty()) {
      const auto n = q.front();
      q.pop_front();
      visit(n);
      if (!(nodes_[n].kind == node_kind::switch_node && nodes_[n].family == link_family::cxl)) continue;
      for (const auto f : neighbours(n)) {
        const auto m = other_end(f, n);
        if (!seen[m] && edges_[f].link.family == link_family::cxl) seen[m] = 1, q.push_back(m);
      }
    }
  }
  void below_port(std::uint32_t h, std::uint32_t e, std::size_t& memories, std::size_t& accelerators) const {
    walk_below_port(h, e, [&](std::uint32_t n) {
      memories += nodes_[n].kind == node_kind::memory;
      accelerators += nodes_[n].kind == node_kind::accelerator;
    });
  }
  [[nodiscard]] bool reaches_over_cxl(std::uint32_t h, std::uint32_t target) const {
    bool found = false;
    for (const auto e : neighbours(h))
      if (edges_[e].link.family == link_family::cxl)
        walk_below_port(h, e, [&](std::uint32_t n) { found = found || n == target; });
    return found;
  }

  profile profile_;
  std::vector<node> nodes_;
  std::vector<edge> edges_;
  std::vector<std::vector<std::uint32_t>> adjacency_;
};

}  // namespace trinity::fabric
