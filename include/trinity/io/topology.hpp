#pragma once
//! \file
//! A fabric topology in JSON, read strictly into fabric::topology (the
//! schema `trinity fabric --topology` reads):
//!
//!   {"cxl_version": 3, "pbr": true,
//!    "nodes": [{"name": "h0", "kind": "host"}, {"name": "sw", "kind": "switch", "family": "cxl"},
//!              {"name": "m0", "kind": "memory", "capacity": "1TB"}],
//!    "links": [{"a": "h0", "b": "sw", "link": "cxl3-x16"}, {"a": "sw", "b": "m0", "link": "cxl3-x16"}]}
//!
//! "link" names a preset (`trinity presets` lists them). A version rule the
//! topology breaks (cascaded switches under CXL 2.0) is refused by the fabric
//! with the rule's name.

#include <string>
#include <string_view>

#include <trinity/fabric/topology.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/system.hpp>
#include <trinity/presets.hpp>

namespace trinity::io {

namespace detail {
inline constexpr key topology_keys[] = {{"cxl_version"}, {"pbr"}, {"nodes", required}, {"links", required}};
inline constexpr key host_keys[] = {{"name", required}, {"kind", required}};
inline constexpr key switch_keys[] = {{"name", required}, {"kind", required}, {"family"}};
inline constexpr key memory_keys[] = {{"name", required}, {"kind", required}, {"capacity", required}};
inline constexpr key edge_keys_of_topology[] = {{"a", required}, {"b", required}, {"link", required}};
inline constexpr std::string_view node_kinds[] = {"host", "accelerator", "switch", "memory", "bridge"};
inline constexpr std::string_view link_families[] = {"nvlink",     "nvlink-c2c", "ualink", "cxl",     "pcie",
                                                     "infiniband", "ethernet",   "rdma",   "cellular"};

inline link_family family_named(const json& j, const std::string& path) {
  const std::string name = choice(j, path, link_families);
  for (auto f : {link_family::nvlink, link_family::nvlink_c2c, link_family::ualink, link_family::cxl, link_family::pcie,
                 link_family::infiniband, link_family::ethernet, link_family::rdma, link_family::cellular})
    if (to_string(f) == name) return f;
  fail(path, "\"" + name + "\" is not a link family");
}
}  // namespace detail

inline fabric::topology read_topology(const json& j) {
  const object o(j, "", detail::topology_keys, "a topology");
  fabric::profile prof;
  if (o.has("cxl_version")) {
    prof.cxl_version = static_cast<int>(o.count("cxl_version", 3));
    if (prof.cxl_version < 1) fail("cxl_version", "must be 1, 2 or 3");
  }
  o.get("pbr", prof.pbr);
  fabric::topology t(prof);
  for_each(
      o.at("nodes"), "nodes",
      [&](const json& n, const std::string& at) {
        if (!n.is_object() || !n.contains("kind"))
          fail(at, "expected a node: {\"name\": ..., \"kind\": host, accelerator, switch, memory or bridge}");
        const std::string kind = choice(n["kind"], join(at, "kind"), detail::node_kinds);
        try {
          if (kind == "switch") {
            const object x(n, at, detail::switch_keys, "a switch");
            t.add_switch(x.text("name"),
                         x.has("family") ? detail::family_named(x.at("family"), x.path("family")) : link_family::cxl);
          } else if (kind == "memory") {
            const object x(n, at, detail::memory_keys, "a memory device");
            t.add_memory(x.text("name"), x.quantity<bytes>("capacity"));
          } else {
            const object x(n, at, detail::host_keys, "a node");
            if (kind == "host")
              t.add_host(x.text("name"));
            else if (kind == "accelerator")
              t.add_accelerator(x.text("name"));
            else
              t.add_bridge(x.text("name"));
          }
        } catch (const invalid_input& e) {
          if (e.field().rfind(at, 0) == 0) throw;
          fail(at, e.what());
        }
      },
      100'000);
  for_each(
      o.at("links"), "links",
      [&](const json& l, const std::string& at) {
        const object x(l, at, detail::edge_keys_of_topology, "a link between two nodes");
        const auto link = detail::link_preset(x.at("link"), x.path("link"));
        const link_descriptor* found = nullptr;
        for (const auto& p : preset_links)
          if (p.name == link.name) found = &p;
        try {
          t.connect(t.find(x.text("a")), t.find(x.text("b")), *found);
        } catch (const invalid_input& e) {
          if (e.field().rfind(at, 0) == 0) throw;
          fail(at, e.what());
        }
      },
      1'000'000);
  return t;
}

}  // namespace trinity::io
