#pragma once
//! \file
//! The mixture-of-experts layer with its exchange deduplicated by node, as DeepEP's and HybridEP's dispatchers
//! run it (Megatron-Core's flex dispatcher, --moe-token-dispatcher-type flex): where expert_parallel.hpp's
//! all-to-all sends a token's row once for each of its k experts, here it crosses to another node once, however
//! many of its experts that node holds, and reaches a GPU once, however many of its experts that GPU holds.
//!
//! The group's n ranks are nodes of g consecutive ranks (rank = node·g + l). A forward runs two hops:
//!  - across nodes: each token goes once to every other node holding one of its kept experts, to the rank with
//!    the sender's l there (DeepEP's RDMA to the same local rank), with its k choices marked where that node holds
//!    them (expert and weight; a slot it does not hold is marked none);
//!  - within the node: each rank forwards the tokens it staged (its own that its node holds experts for, and those
//!    that came across) once to every rank of the node holding one of their experts (NVLink), with the slots that
//!    rank holds.
//! A rank runs each row through its experts and sums their outputs by weight in the order chosen; the sum comes
//! back over the node hop, where the staging rank adds the node's ranks in order, then over the cross-node hop,
//! where the token's rank adds the nodes in order. Backward sends the output gradient the same ways, and each
//! row's input gradient (summed over its rank's experts) and its slots' weight gradients come back.
//! The sums run in another order than the one-rank layer's (by node and rank, not by choice), so outputs and
//! gradients match it to rounding. Bytes: node_dispatch_bytes; the model's count of the rows, with balanced routing:
//! model::deduplicated_dispatch_rows.
//!
//!   parallel::node_pass pass;
//!   parallel::moe_forward_by_node(ep, 8, shape, mine, x, r, y, pass);   // 8 ranks a node
//!   parallel::moe_backward_by_node(ep, shape, mine, pass, dy, dx, dmine, dlogits);

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/comm/all_to_all.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/parallel/expert_parallel.hpp>

namespace trinity::parallel {

//! A slot a hop's record does not carry: the token's choice is held elsewhere (or was dropped).
inline constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();

namespace detail {
//! One hop of records to ranks of a communicator: record i goes to dest[i]; they leave grouped by destination,
//! in record order within a group, and arrive grouped by source.
struct hop {
  std::vector<std::size_t> order;  //!< the records in the order they leave
  std::vector<std::size_t> send_counts, send_offsets, recv_counts, recv_offsets;  //!< in records
  std::size_t received = 0;
};

template <Communicator C>
hop plan_hop(C& c, const std::vector<std::size_t>& dest) {
  const auto n = static_cast<std::size_t>(c.size());
  hop p;
  p.send_counts.assign(n, 0);
  for (const std::size_t d : dest) ++p.send_counts[d];
  p.send_offsets.resize(n), p.recv_counts.resize(n), p.recv_offsets.resize(n), p.order.resize(dest.size());
  std::vector<std::size_t> next(n);
  for (std::size_t j = 0, at = 0; j < n; ++j) p.send_offsets[j] = next[j] = at, at += p.send_counts[j];
  for (std::size_t i = 0; i < dest.size(); ++i) p.order[next[dest[i]]++] = i;
  comm::all_to_all(c, std::span<const std::size_t>(p.send_counts), std::span<std::size_t>(p.recv_counts));
  for (std::size_t j = 0; j < n; ++j) p.recv_offsets[j] = p.received, p.received += p.recv_counts[j];
  return p;
}

inline std::vector<std::size_t> scaled(const std::vector<std::size_t>& v, std::size_t width) {
  std::vector<std::size_t> out(v);
  for (auto& x : out) x *= width;
  return out;
}

//! `width` values a record (`in`, in record order) to their destinations; what arrives, grouped by source.
template <Communicator C, class T>
std::vector<T> hop_forward(C& c, const hop& p, const std::vector<T>& in, std::size_t width) {
  std::vector<T> out(p.order.size() * width), got(p.received * width);
  for (std::size_t i = 0; i < p.order.size(); ++i)
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(p.order[i] * width), width,
                out.begin() + static_cast<std::ptrdiff_t>(i * width));
  const auto sc = scaled(p.send_counts, width), so = scaled(p.send_offsets, width);
  const auto rc = scaled(p.recv_counts, width), ro = scaled(p.recv_offsets, width);
  comm::all_to_allv(c, std::span<const T>(out), std::span<const std::size_t>(sc), std::span<const std::size_t>(so),
                    std::span<T>(got), std::span<const std::size_t>(rc), std::span<const std::size_t>(ro));
  return got;
}

//! `width` values for each record received (`in`, as they arrived) back to its sender; in the sender's record order.
template <Communicator C, class T>
std::vector<T> hop_back(C& c, const hop& p, const std::vector<T>& in, std::size_t width) {
  std::vector<T> got(p.order.size() * width), out(p.order.size() * width);
  const auto sc = scaled(p.send_counts, width), so = scaled(p.send_offsets, width);
  const auto rc = scaled(p.recv_counts, width), ro = scaled(p.recv_offsets, width);
  comm::all_to_allv(c, std::span<const T>(in), std::span<const std::size_t>(rc), std::span<const std::size_t>(ro),
                    std::span<T>(got), std::span<const std::size_t>(sc), std::span<const std::size_t>(so));
  for (std::size_t i = 0; i < p.order.size(); ++i)
    std::copy_n(got.begin() + static_cast<std::ptrdiff_t>(i * width), width,
                out.begin() + static_cast<std::ptrdiff_t>(p.order[i] * width));
  return out;
}

//! The rows of `src` (h values each) at `rows`, one after another.
inline std::vector<float> gather_rows(std::span<const float> src, const std::vector<std::size_t>& rows, std::size_t h) {
  std::vector<float> out(rows.size() * h);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(rows[i] * h), h,
                out.begin() + static_cast<std::ptrdiff_t>(i * h));
  return out;
}

//! The two groups of `c` a rank's records go over, its nodes of g consecutive ranks: `across`, the rank with its
//! place in every node; `within`, the ranks of its own node.
template <Communicator C>
struct node_groups {
  comm::group<C> across, within;
};
template <Communicator C>
node_groups<C> groups_by_node(C& c, std::size_t g) {
  const auto me = static_cast<std::size_t>(c.rank()), nodes = static_cast<std::size_t>(c.size()) / g;
  std::vector<int> across, within;
  for (std::size_t m = 0; m < nodes; ++m) across.push_back(static_cast<int>(me % g + g * m));
  for (std::size_t j = 0; j < g; ++j) within.push_back(static_cast<int>(me / g * g + j));
  return {comm::group<C>(c, std::move(across)), comm::group<C>(c, std::move(within))};
}

inline void add_row(std::span<float> into, std::span<const float> row) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] += row[i];
}
inline std::span<const float> row_of(const std::vector<float>& v, std::size_t i, std::size_t h) {
  return std::span<const float>(v).subspan(i * h, h);
}
}  // namespace detail

//! What a node-deduplicated forward keeps for its backward.
struct node_pass {
  routing r;
  std::size_t node_ranks = 1, nodes = 1;
  detail::hop across, within;
  std::vector<std::size_t> across_token;    //!< the token each cross-node record carries
  std::vector<std::size_t> via;             //!< tokens × nodes: its staged entry (own node) or cross record
  std::vector<std::size_t> own_token;       //!< the token of each of the first own_staged staged entries
  std::vector<std::size_t> within_entry;    //!< the staged entry each node record carries
  std::vector<std::uint32_t> within_slots;  //!< node records × k: the local expert of each slot, or no_slot
  std::vector<float> in;                    //!< rows received for this rank's experts
  std::vector<std::uint32_t> in_slots;      //!< received rows × k: local expert, or no_slot
  std::vector<float> in_weights, outputs;   //!< received rows × k: weights; × k × h: each slot's expert output
  std::size_t staged = 0;                   //!< entries staged: this rank's own, then those from across
};

//! Bytes a rank sends in one pass of the layer. A forward (moe_forward_by_node), over the cross-node group of
//! `nodes` ranks and the node's group of `node_ranks`: one record count to each other member (8 bytes); each record
//! it sends off the rank, a row of hidden fp32 values with its k slots (a 4-byte expert and a 4-byte weight each);
//! each result it returns for a record it received, a row. A backward (moe_backward_by_node): each record's output
//! gradient, a row; and for each record received, its input gradient (a row) and its k slots' weight gradients.
//! `sent` counts records sent to other ranks over both hops, `received` records received from them.
inline std::size_t node_dispatch_bytes(bool backward, std::size_t sent, std::size_t received, std::size_t hidden,
                                       std::size_t top_k, std::size_t nodes, std::size_t node_ranks) {
  const std::size_t row = hidden * sizeof(float);
  if (backward) return sent * row + received * (row + top_k * sizeof(float));
  return (nodes - 1 + node_ranks - 1) * sizeof(std::size_t) +
         sent * (row + top_k * (sizeof(std::uint32_t) + sizeof(float))) + received * row;
}

//! This rank's tokens (x: tokens × h) through the layer into y, its exchange deduplicated by node (above);
//! `node_ranks` consecutive ranks of `c` a node, `local` this rank's experts/n experts in order. Every rank of `c`
//! calls it, with its own tokens.
template <Communicator C>
void moe_forward_by_node(C& c, std::size_t node_ranks, const moe_shape& s, std::span<const expert_weights> local,
                         std::span<const float> x, const routing& r, std::span<float> y, node_pass& pass) {
  validate(s);
  const auto n = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
  trinity::detail::require(node_ranks >= 1 && n % node_ranks == 0, "node_ranks",
                           std::to_string(node_ranks) + " ranks a node do not split the group's " + std::to_string(n) +
                               "; give a divisor of it");
  trinity::detail::require(s.experts % n == 0, "experts",
                           std::to_string(s.experts) + " do not split over " + std::to_string(n) +
                               " ranks; give an expert-parallel group that divides them");
  trinity::detail::require(
      local.size() == s.experts / n, "local",
      "holds " + std::to_string(local.size()) + " experts; this rank holds " + std::to_string(s.experts / n));
  trinity::detail::require(r.top_k == s.top_k && x.size() == r.tokens * s.hidden && y.size() == x.size(), "x",
                           "x and y must be the routing's tokens x hidden");
  const std::size_t g = node_ranks, nodes = n / g, node = me / g, h = s.hidden, k = s.top_k, per = s.experts / n;
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  const auto rank_of = [&](std::uint32_t e) { return static_cast<std::size_t>(e) / per; };
  auto [across, within] = detail::groups_by_node(c, g);
  pass = node_pass{};
  pass.r = r, pass.node_ranks = g, pass.nodes = nodes, pass.via.assign(r.tokens * nodes, none);

  // The cross-node hop: a record per token and other node holding a kept choice; own-node tokens stage here.
  std::vector<std::size_t> dest;
  std::vector<std::uint32_t> slots, staged_slots;
  std::vector<float> weights, staged_weights;
  for (std::size_t t = 0; t < r.tokens; ++t)
    for (std::size_t m = 0; m < nodes; ++m) {
      bool held = false;
      for (std::size_t j = 0; j < k; ++j) held = held || (r.kept[t * k + j] && rank_of(r.expert[t * k + j]) / g == m);
      if (!held) continue;
      const bool own = m == node;
      auto& sl = own ? staged_slots : slots;
      auto& wt = own ? staged_weights : weights;
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t a = t * k + j;
        const bool here = r.kept[a] && rank_of(r.expert[a]) / g == m;
        sl.push_back(here ? r.expert[a] : no_slot), wt.push_back(here ? r.weight[a] : 0.0f);
      }
      if (own) {
        pass.via[t * nodes + m] = pass.own_token.size(), pass.own_token.push_back(t);
        continue;
      }
      pass.via[t * nodes + m] = dest.size();
      dest.push_back(m), pass.across_token.push_back(t);
    }
  pass.across = detail::plan_hop(across, dest);
  auto staged_rows = detail::gather_rows(x, pass.own_token, h);
  {
    const auto got_rows = detail::hop_forward(across, pass.across, detail::gather_rows(x, pass.across_token, h), h);
    const auto got_slots = detail::hop_forward(across, pass.across, slots, k);
    const auto got_weights = detail::hop_forward(across, pass.across, weights, k);
    staged_rows.insert(staged_rows.end(), got_rows.begin(), got_rows.end());
    staged_slots.insert(staged_slots.end(), got_slots.begin(), got_slots.end());
    staged_weights.insert(staged_weights.end(), got_weights.begin(), got_weights.end());
  }
  pass.staged = pass.own_token.size() + pass.across.received;

  // The node hop: a record per staged entry and rank of the node holding one of its slots, with that rank's slots.
  dest.clear(), slots.clear(), weights.clear();
  for (std::size_t e = 0; e < pass.staged; ++e)
    for (std::size_t j = 0; j < g; ++j) {
      bool held = false;
      for (std::size_t q = 0; q < k; ++q)
        held = held || (staged_slots[e * k + q] != no_slot && rank_of(staged_slots[e * k + q]) == node * g + j);
      if (!held) continue;
      for (std::size_t q = 0; q < k; ++q) {
        const std::uint32_t ex = staged_slots[e * k + q];
        const bool here = ex != no_slot && rank_of(ex) == node * g + j;
        slots.push_back(here ? static_cast<std::uint32_t>(ex % per) : no_slot);
        weights.push_back(here ? staged_weights[e * k + q] : 0.0f);
      }
      dest.push_back(j), pass.within_entry.push_back(e);
    }
  pass.within = detail::plan_hop(within, dest);
  pass.within_slots = slots;
  pass.in = detail::hop_forward(within, pass.within, detail::gather_rows(staged_rows, pass.within_entry, h), h);
  pass.in_slots = detail::hop_forward(within, pass.within, slots, k);
  pass.in_weights = detail::hop_forward(within, pass.within, weights, k);

  // The experts: each received row through its slots' experts, summed by weight in the order chosen.
  const std::size_t received = pass.within.received;
  std::vector<float> results(received * h, 0.0f);
  pass.outputs.assign(received * k * h, 0.0f);
  for (std::size_t b = 0; b < received; ++b)
    for (std::size_t q = 0; q < k; ++q) {
      const std::uint32_t ex = pass.in_slots[b * k + q];
      if (ex == no_slot) continue;
      const auto out = std::span<float>(pass.outputs).subspan((b * k + q) * h, h);
      expert_ffn(s, local[ex], detail::row_of(pass.in, b, h), out);
      for (std::size_t i = 0; i < h; ++i) results[b * h + i] += pass.in_weights[b * k + q] * out[i];
    }
  // Combine: back over the node hop, summed by rank of the node; back across, summed by node.
  const auto back = detail::hop_back(within, pass.within, results, h);
  std::vector<float> staged_sum(pass.staged * h, 0.0f);
  for (std::size_t i = 0; i < pass.within_entry.size(); ++i)
    detail::add_row(std::span<float>(staged_sum).subspan(pass.within_entry[i] * h, h), detail::row_of(back, i, h));
  const std::vector<float> from_across(staged_sum.begin() + static_cast<std::ptrdiff_t>(pass.own_token.size() * h),
                                       staged_sum.end());
  const auto returned = detail::hop_back(across, pass.across, from_across, h);
  std::fill(y.begin(), y.end(), 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t)
    for (std::size_t m = 0; m < nodes; ++m) {
      const std::size_t v = pass.via[t * nodes + m];
      if (v == none) continue;
      detail::add_row(y.subspan(t * h, h), detail::row_of(m == node ? staged_sum : returned, v, h));
    }
}

//! The backward of the forward `pass` kept: dy (tokens × h) in; dx (tokens × h), the router logits' gradient
//! (tokens × experts) and, added to `dlocal`, this rank's experts' gradients out.
template <Communicator C>
void moe_backward_by_node(C& c, const moe_shape& s, std::span<const expert_weights> local, const node_pass& pass,
                          std::span<const float> dy, std::span<float> dx, std::span<expert_weights> dlocal,
                          std::span<float> dlogits) {
  const auto& r = pass.r;
  const std::size_t h = s.hidden, k = s.top_k, g = pass.node_ranks, nodes = pass.nodes;
  trinity::detail::require(dy.size() == r.tokens * h && dx.size() == dy.size(), "dy",
                           "dy and dx must be the forward's tokens x hidden");
  trinity::detail::require(dlogits.size() == r.tokens * s.experts, "dlogits", "must be tokens x experts");
  trinity::detail::require(dlocal.size() == local.size(), "dlocal", "needs one gradient per local expert");
  const auto me = static_cast<std::size_t>(c.rank()), node = me / g;
  auto [across, within] = detail::groups_by_node(c, g);
  // The output gradient the rows' ways: across, then within the node.
  auto staged = detail::gather_rows(dy, pass.own_token, h);
  const auto got = detail::hop_forward(across, pass.across, detail::gather_rows(dy, pass.across_token, h), h);
  staged.insert(staged.end(), got.begin(), got.end());
  const auto gin = detail::hop_forward(within, pass.within, detail::gather_rows(staged, pass.within_entry, h), h);
  // Each received row through its slots' experts' backward: its input gradient summed, each slot's weight gradient.
  const std::size_t received = pass.within.received;
  std::vector<float> dxin(received * h, 0.0f), dwin(received * k, 0.0f), g_row(h), dxa(h);
  for (std::size_t b = 0; b < received; ++b)
    for (std::size_t q = 0; q < k; ++q) {
      const std::uint32_t ex = pass.in_slots[b * k + q];
      if (ex == no_slot) continue;
      const auto dyb = detail::row_of(gin, b, h), out = detail::row_of(pass.outputs, b * k + q, h);
      float dot = 0;
      for (std::size_t i = 0; i < h; ++i) g_row[i] = pass.in_weights[b * k + q] * dyb[i], dot += dyb[i] * out[i];
      dwin[b * k + q] = dot;
      expert_ffn_backward(s, local[ex], detail::row_of(pass.in, b, h), g_row, dlocal[ex], dxa);
      detail::add_row(std::span<float>(dxin).subspan(b * h, h), dxa);
    }
  // Back within the node: each staged entry's input gradient summed by rank, its slots' weight gradients placed.
  const auto dx_back = detail::hop_back(within, pass.within, dxin, h);
  const auto dw_back = detail::hop_back(within, pass.within, dwin, k);
  std::vector<float> staged_dx(pass.staged * h, 0.0f), staged_dw(pass.staged * k, 0.0f);
  for (std::size_t i = 0; i < pass.within_entry.size(); ++i) {
    const std::size_t e = pass.within_entry[i];
    detail::add_row(std::span<float>(staged_dx).subspan(e * h, h), detail::row_of(dx_back, i, h));
    for (std::size_t q = 0; q < k; ++q)
      if (pass.within_slots[i * k + q] != no_slot) staged_dw[e * k + q] = dw_back[i * k + q];
  }
  // Back across: the token's rank adds the nodes' input gradients in order and takes each choice's weight gradient
  // from the node that holds it.
  const std::size_t own = pass.own_token.size();
  const auto dx_across = detail::hop_back(
      across, pass.across,
      std::vector<float>(staged_dx.begin() + static_cast<std::ptrdiff_t>(own * h), staged_dx.end()), h);
  const auto dw_across = detail::hop_back(
      across, pass.across,
      std::vector<float>(staged_dw.begin() + static_cast<std::ptrdiff_t>(own * k), staged_dw.end()), k);
  const std::size_t none = std::numeric_limits<std::size_t>::max(),
                    per = s.experts / static_cast<std::size_t>(c.size());
  std::vector<float> dweight(r.expert.size(), 0.0f);
  std::fill(dx.begin(), dx.end(), 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t)
    for (std::size_t m = 0; m < nodes; ++m) {
      const std::size_t v = pass.via[t * nodes + m];
      if (v == none) continue;
      detail::add_row(dx.subspan(t * h, h), detail::row_of(m == node ? staged_dx : dx_across, v, h));
      for (std::size_t q = 0; q < k; ++q) {
        const std::size_t a = t * k + q;
        if (r.kept[a] && r.expert[a] / per / g == m) dweight[a] = (m == node ? staged_dw : dw_across)[v * k + q];
      }
    }
  detail::router_backward(s, r, dweight, dlogits);
}

//! Anything but a Communicator as `c`: the Communicator ladder names what the type lacks and the fix.
template <class C, class... Args>
requires(!Communicator<C>) void moe_forward_by_node(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(), "trinity: parallel::moe_forward_by_node(c, ...) takes a Communicator as c");
}
template <class C, class... Args>
requires(!Communicator<C>) void moe_backward_by_node(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(),
                "trinity: parallel::moe_backward_by_node(c, ...) takes a Communicator as c");
}

}  // namespace trinity::parallel
