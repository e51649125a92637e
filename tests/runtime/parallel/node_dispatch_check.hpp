// The node-deduplicated MoE layer's check, run on every backend: threads and the simulated fabric here, MPI under
// mpirun. Each rank's outputs and gradients against the one-rank layer's to rounding (the sums run by node and
// rank, not by choice), and each rank's bytes, forward and backward, against node_dispatch_bytes for the records a
// brute-force count of every rank's routing gives (each rank's routing is a function of its rank).
#pragma once

#include <trinity/parallel/node_dispatch.hpp>

#include "expert_parallel_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace node_dispatch_check {

// Four choices of 60 experts, so a token often has two on one node and on one rank; capacity drops some.
inline const trinity::parallel::moe_shape shape{6, 10, 60, 4, 1.25};
inline constexpr std::size_t tokens = 7;

inline trinity::parallel::routing routing_of(int rank) {
  return trinity::parallel::route_top_k(moe_check::values(tokens * shape.experts, rank, 1.0), tokens, shape);
}

inline bool close(std::span<const float> got, std::span<const float> want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i]))) return false;
  return true;
}

// Records rank `me` sends to and receives from other ranks over both hops, counted from every rank's routing:
// token t of rank q crosses to the rank with q's local index on each other node holding a kept choice, which
// forwards it to each rank of that node holding one.
struct records {
  std::size_t sent = 0, received = 0;
};
inline records count_records(std::size_t me, std::size_t n, std::size_t g) {
  const auto& s = shape;
  const std::size_t per = s.experts / n, k = s.top_k;
  records out;
  for (std::size_t q = 0; q < n; ++q) {
    const auto r = routing_of(static_cast<int>(q));
    for (std::size_t t = 0; t < tokens; ++t) {
      std::vector<bool> hit(n, false);
      for (std::size_t j = 0; j < k; ++j)
        if (r.kept[t * k + j]) hit[r.expert[t * k + j] / per] = true;
      for (std::size_t m = 0; m < n / g; ++m) {
        if (std::none_of(hit.begin() + static_cast<std::ptrdiff_t>(m * g),
                         hit.begin() + static_cast<std::ptrdiff_t>((m + 1) * g), [](bool b) { return b; }))
          continue;
        const std::size_t stage = m * g + q % g;
        const auto note = [&](std::size_t from, std::size_t to) {
          if (from == to) return;
          if (from == me) ++out.sent;
          if (to == me) ++out.received;
        };
        note(q, stage);
        for (std::size_t d = m * g; d < (m + 1) * g; ++d)
          if (hit[d]) note(stage, d);
      }
    }
  }
  return out;
}

template <class C>
std::vector<std::string> run(C& c, std::size_t g) {
  namespace par = trinity::parallel;
  const auto& s = shape;
  const auto n = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
  const std::size_t h = s.hidden, k = s.top_k, per = s.experts / n;
  std::vector<par::expert_weights> all;
  for (std::size_t e = 0; e < s.experts; ++e) all.push_back(moe_check::weights_of(e));
  const std::vector<par::expert_weights> local(all.begin() + static_cast<std::ptrdiff_t>(me * per),
                                               all.begin() + static_cast<std::ptrdiff_t>((me + 1) * per));
  const auto zero = [&](std::size_t e) {
    return par::expert_weights{std::vector<float>(all[e].w1.size(), 0.0f), std::vector<float>(all[e].w2.size(), 0.0f)};
  };
  std::vector<par::expert_weights> dlocal;
  for (std::size_t q = 0; q < per; ++q) dlocal.push_back(zero(me * per + q));
  const auto x = moe_check::values(tokens * h, c.rank(), 0.0), dy = moe_check::values(tokens * h, c.rank(), 2.0);
  std::vector<float> y(x.size()), dx(x.size()), dlogits(tokens * s.experts);
  par::node_pass pass;
  auto before = c.bytes_sent();
  par::moe_forward_by_node(c, g, s, std::span<const par::expert_weights>(local), std::span<const float>(x),
                           routing_of(c.rank()), std::span<float>(y), pass);
  const auto forward = c.bytes_sent() - before;
  before = c.bytes_sent();
  par::moe_backward_by_node(c, s, std::span<const par::expert_weights>(local), pass, std::span<const float>(dy),
                            std::span<float>(dx), std::span<par::expert_weights>(dlocal), std::span<float>(dlogits));
  const auto backward = c.bytes_sent() - before;
  // The one-rank layer over every rank's tokens, in rank order.
  std::vector<par::expert_weights> dall;
  for (std::size_t e = 0; e < s.experts; ++e) dall.push_back(zero(e));
  std::vector<float> want_y, want_dx, want_dlogits;
  for (std::size_t q = 0; q < n; ++q) {
    const auto rq = routing_of(static_cast<int>(q));
    const auto ref = moe_check::one_rank(s, all, dall, static_cast<int>(q), rq);
    if (q == me) want_y = ref.y, want_dx = ref.dx, want_dlogits = moe_check::router_gradient(rq, ref.dw, s);
  }
  std::vector<std::string> bad;
  const std::string who = "rank " + std::to_string(me) + " (" + std::to_string(g) + " a node): ";
  if (!close(y, want_y)) bad.push_back(who + "its tokens differ from the one-rank layer's");
  if (!close(dx, want_dx)) bad.push_back(who + "dx differs from the one-rank layer's");
  if (!close(dlogits, want_dlogits)) bad.push_back(who + "the router's gradient differs");
  for (std::size_t q = 0; q < per; ++q)
    if (!close(dlocal[q].w1, dall[me * per + q].w1) || !close(dlocal[q].w2, dall[me * per + q].w2))
      bad.push_back(who + "expert " + std::to_string(me * per + q) + "'s gradient differs");
  const auto rec = count_records(me, n, g);
  const auto want_forward = par::node_dispatch_bytes(false, rec.sent, rec.received, h, k, n / g, g);
  const auto want_backward = par::node_dispatch_bytes(true, rec.sent, rec.received, h, k, n / g, g);
  if (forward != want_forward)
    bad.push_back(who + "sent " + std::to_string(forward) + " bytes forward, not " + std::to_string(want_forward));
  if (backward != want_backward)
    bad.push_back(who + "sent " + std::to_string(backward) + " bytes backward, not " + std::to_string(want_backward));
  return bad;
}

}  // namespace node_dispatch_check
