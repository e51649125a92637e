// The expert-parallel layer's check, run on every backend: threads and the simulated fabric here, MPI under
// mpirun. Each rank's tokens through the layer against the same layer computed on one rank, bit for bit, and each
// rank's bytes against expert_dispatch_bytes (every rank's routing is a function of its rank, so each rank
// recomputes the others' to count what it should send).
#pragma once

#include <trinity/comm/group.hpp>
#include <trinity/parallel/expert_parallel.hpp>

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace moe_check {

inline const trinity::parallel::moe_shape shape{6, 10, 60, 2, 1.25};  // 60 experts: any group of 1 to 6 ranks
inline constexpr std::size_t tokens = 7;

inline trinity::parallel::expert_weights weights_of(std::size_t e) {
  const auto& s = shape;
  trinity::parallel::expert_weights w{std::vector<float>(s.ffn_hidden * s.hidden),
                                      std::vector<float>(s.hidden * s.ffn_hidden)};
  for (std::size_t i = 0; i < w.w1.size(); ++i)
    w.w1[i] = static_cast<float>(std::sin(static_cast<double>(e * 131 + i) * 0.37) * 0.3);
  for (std::size_t i = 0; i < w.w2.size(); ++i)
    w.w2[i] = static_cast<float>(std::cos(static_cast<double>(e * 71 + i) * 0.53) * 0.3);
  return w;
}

// A rank's tokens (salt 0) and router logits (salt 1): different on every rank.
inline std::vector<float> values(std::size_t count, int rank, double salt) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.71 + rank * 2.3 + salt));
  return v;
}

inline std::vector<trinity::parallel::expert_weights> all_experts() {
  std::vector<trinity::parallel::expert_weights> all;
  for (std::size_t e = 0; e < shape.experts; ++e) all.push_back(weights_of(e));
  return all;
}

// The experts rank r of `ranks` holds: experts/ranks of them, contiguous.
inline std::vector<trinity::parallel::expert_weights> experts_of(
    const std::vector<trinity::parallel::expert_weights>& all, std::size_t r, std::size_t ranks) {
  const std::size_t per = shape.experts / ranks;
  return {all.begin() + static_cast<std::ptrdiff_t>(r * per), all.begin() + static_cast<std::ptrdiff_t>((r + 1) * per)};
}

inline trinity::parallel::routing routing_of(int rank) {
  return trinity::parallel::route_top_k(values(tokens * shape.experts, rank, 1.0), tokens, shape);
}

// The router logits' gradient (tokens x experts) of the one-rank layer: the softmax over each token's k choices
// of dw, the loss's gradient by each choice's weight.
inline std::vector<float> router_gradient(const trinity::parallel::routing& r, const std::vector<float>& dw,
                                          const trinity::parallel::moe_shape& s = shape) {
  std::vector<float> out(r.tokens * s.experts, 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t) {
    float weighted = 0;
    for (std::size_t j = 0; j < s.top_k; ++j) weighted += r.weight[t * s.top_k + j] * dw[t * s.top_k + j];
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      out[t * s.experts + r.expert[a]] = r.weight[a] * (dw[a] - weighted);
    }
  }
  return out;
}

// Rank q's tokens (values salt 0) and output gradients (salt 2), routed by `rq`, through the one-rank layer of
// shape s, forward and backward: each token's output, its input gradient and each choice's weight gradient; the
// experts' gradients added to `dall`.
struct one_rank_pass {
  std::vector<float> y, dx, dw;
};
inline one_rank_pass one_rank(const trinity::parallel::moe_shape& s,
                              const std::vector<trinity::parallel::expert_weights>& all,
                              std::vector<trinity::parallel::expert_weights>& dall, int q,
                              const trinity::parallel::routing& rq) {
  const std::size_t h = s.hidden, n = rq.tokens * h;
  const auto xq = values(n, q, 0.0), dyq = values(n, q, 2.0);
  one_rank_pass p{std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f), std::vector<float>(rq.expert.size(), 0.0f)};
  std::vector<float> out(h), g(h), dxa(h);
  for (std::size_t a = 0; a < rq.expert.size(); ++a) {
    if (!rq.kept[a]) continue;
    const std::size_t tok = a / s.top_k;
    const auto xt = std::span<const float>(xq).subspan(tok * h, h);
    trinity::parallel::expert_ffn(s, all[rq.expert[a]], xt, out);
    for (std::size_t i = 0; i < h; ++i) {
      p.y[tok * h + i] += rq.weight[a] * out[i];
      g[i] = rq.weight[a] * dyq[tok * h + i], p.dw[a] += dyq[tok * h + i] * out[i];
    }
    trinity::parallel::expert_ffn_backward(s, all[rq.expert[a]], xt, g, dall[rq.expert[a]], dxa);
    for (std::size_t i = 0; i < h; ++i) p.dx[tok * h + i] += dxa[i];
  }
  return p;
}

template <class C>
std::vector<std::string> run(C& c) {
  namespace par = trinity::parallel;
  const auto& s = shape;
  const int n = c.size();
  const auto un = static_cast<std::size_t>(n), r = static_cast<std::size_t>(c.rank());
  std::vector<std::string> bad;
  const auto all = all_experts();
  const auto local = experts_of(all, r, un);
  const auto x = values(tokens * s.hidden, c.rank(), 0.0);
  const auto route = routing_of(c.rank());
  std::vector<float> got(x.size());
  const auto before = c.bytes_sent();
  par::moe_forward(c, s, std::span<const par::expert_weights>(local), std::span<const float>(x), route,
                   std::span<float>(got));
  const auto sent = c.bytes_sent() - before;
  // The one-rank layer: every kept choice through its expert, summed by weight in the order chosen.
  std::vector<float> want(x.size(), 0.0f), out(s.hidden);
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      if (!route.kept[a]) continue;
      par::expert_ffn(s, all[route.expert[a]], std::span<const float>(x).subspan(t * s.hidden, s.hidden), out);
      for (std::size_t i = 0; i < s.hidden; ++i) want[t * s.hidden + i] += route.weight[a] * out[i];
    }
  if (got != want) bad.push_back("rank " + std::to_string(r) + ": its tokens differ from the one-rank layer's");
  // Rows this rank routes off itself, and rows the others route to its experts (whose results it returns).
  std::size_t off = 0, returned = 0;
  for (int q = 0; q < n; ++q) {
    const auto other = routing_of(q);
    for (std::size_t a = 0; a < other.expert.size(); ++a) {
      if (!other.kept[a]) continue;
      const auto owner = static_cast<std::size_t>(par::expert_rank(other.expert[a], s.experts, n));
      if (static_cast<std::size_t>(q) == r && owner != r) ++off;
      if (static_cast<std::size_t>(q) != r && owner == r) ++returned;
    }
  }
  const auto expected = par::expert_dispatch_bytes(off, returned, s.hidden, s.experts, un);
  if (sent != expected)
    bad.push_back("rank " + std::to_string(r) + ": sent " + std::to_string(sent) + " bytes, not " +
                  std::to_string(expected));
  return bad;
}

// The backward: each rank's dx, its router's gradient and its experts' gradients against the one-rank layer's,
// bit for bit (the experts' rows are summed in the same order: by source rank, then as routed).
template <class C>
std::vector<std::string> run_backward(C& c) {
  namespace par = trinity::parallel;
  const auto& s = shape;
  const int n = c.size();
  const auto un = static_cast<std::size_t>(n), me = static_cast<std::size_t>(c.rank());
  const std::size_t h = s.hidden, per = s.experts / un;
  const auto all = all_experts();
  const auto local = experts_of(all, me, un);
  const auto zero = [&](std::size_t e) {
    return par::expert_weights{std::vector<float>(all[e].w1.size(), 0.0f), std::vector<float>(all[e].w2.size(), 0.0f)};
  };
  std::vector<par::expert_weights> dlocal;
  for (std::size_t q = 0; q < per; ++q) dlocal.push_back(zero(me * per + q));
  const auto x = values(tokens * h, c.rank(), 0.0), dy = values(tokens * h, c.rank(), 2.0);
  std::vector<float> y(x.size()), dx(x.size()), dlogits(tokens * s.experts);
  par::moe_pass pass;
  par::moe_forward(c, s, std::span<const par::expert_weights>(local), std::span<const float>(x), routing_of(c.rank()),
                   std::span<float>(y), pass);
  par::moe_backward(c, s, std::span<const par::expert_weights>(local), pass, std::span<const float>(dy),
                    std::span<float>(dx), std::span<par::expert_weights>(dlocal), std::span<float>(dlogits));
  // The one-rank layer over every rank's tokens, in rank order.
  std::vector<par::expert_weights> dall;
  for (std::size_t e = 0; e < s.experts; ++e) dall.push_back(zero(e));
  std::vector<float> want_dx(x.size(), 0.0f), want_dlogits(dlogits.size(), 0.0f);
  for (int q = 0; q < n; ++q) {
    const auto rq = routing_of(q);
    const auto ref = one_rank(s, all, dall, q, rq);
    if (static_cast<std::size_t>(q) != me) continue;
    want_dx = ref.dx;
    want_dlogits = router_gradient(rq, ref.dw);
  }
  std::vector<std::string> bad;
  if (dx != want_dx) bad.push_back("rank " + std::to_string(me) + ": dx differs from the one-rank layer's");
  if (dlogits != want_dlogits) bad.push_back("rank " + std::to_string(me) + ": the router's gradient differs");
  for (std::size_t q = 0; q < per; ++q)
    if (dlocal[q].w1 != dall[me * per + q].w1 || dlocal[q].w2 != dall[me * per + q].w2)
      bad.push_back("rank " + std::to_string(me) + ": expert " + std::to_string(me * per + q) + "'s gradient differs");
  return bad;
}

// Expert tensor parallelism: world rank = t + members·e, so a tensor group is `members` consecutive ranks that
// hold the same experts, sliced, and an expert-parallel group the ranks with the same t. Each rank's outputs and
// gradients against the one-rank layer's, to rounding (the slices' partial sums are added in member order), and
// each rank's bytes, forward and backward, against expert_dispatch_bytes over its expert-parallel group plus
// expert_tensor_bytes over its tensor group.
namespace tensor {

inline bool close(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i]))) return false;
  return true;
}

// Member t of `members`'s slice of an expert: W1's rows and W2's columns [t·f/m, (t + 1)·f/m).
inline trinity::parallel::expert_weights slice_of(const trinity::parallel::expert_weights& w, std::size_t t,
                                                  std::size_t members) {
  const std::size_t h = shape.hidden, f = shape.ffn_hidden, fs = f / members;
  trinity::parallel::expert_weights out{{w.w1.begin() + static_cast<std::ptrdiff_t>(t * fs * h),
                                         w.w1.begin() + static_cast<std::ptrdiff_t>((t + 1) * fs * h)},
                                        {}};
  for (std::size_t i = 0; i < h; ++i)
    out.w2.insert(out.w2.end(), w.w2.begin() + static_cast<std::ptrdiff_t>(i * f + t * fs),
                  w.w2.begin() + static_cast<std::ptrdiff_t>(i * f + (t + 1) * fs));
  return out;
}

template <class C>
std::vector<std::string> run(C& c, std::size_t members) {
  namespace par = trinity::parallel;
  const auto& s = shape;
  const std::size_t n = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
  const std::size_t ep = n / members, t = me % members, e = me / members, h = s.hidden, per = s.experts / ep;
  std::vector<int> ep_ranks, tensor_ranks;
  for (std::size_t k = 0; k < ep; ++k) ep_ranks.push_back(static_cast<int>(t + members * k));
  for (std::size_t k = 0; k < members; ++k) tensor_ranks.push_back(static_cast<int>(k + members * e));
  trinity::comm::group epg(c, ep_ranks), etp(c, tensor_ranks);
  const auto all = all_experts();
  std::vector<par::expert_weights> local, dlocal;
  for (std::size_t q = 0; q < per; ++q) {
    local.push_back(slice_of(all[e * per + q], t, members));
    dlocal.push_back(
        {std::vector<float>(local.back().w1.size(), 0.0f), std::vector<float>(local.back().w2.size(), 0.0f)});
  }
  const auto x = values(tokens * h, c.rank(), 0.0), dy = values(tokens * h, c.rank(), 2.0);
  std::vector<float> y(x.size()), dx(x.size()), dlogits(tokens * s.experts);
  par::moe_pass pass;
  const auto before = c.bytes_sent();
  par::moe_forward(epg, etp, s, std::span<const par::expert_weights>(local), std::span<const float>(x),
                   routing_of(c.rank()), std::span<float>(y), pass);
  const auto forward = c.bytes_sent() - before;
  par::moe_backward(epg, etp, s, std::span<const par::expert_weights>(local), pass, std::span<const float>(dy),
                    std::span<float>(dx), std::span<par::expert_weights>(dlocal), std::span<float>(dlogits));
  const auto backward = c.bytes_sent() - before - forward;

  // The one-rank layer over every rank's tokens: this rank's outputs and gradients, and its experts' gradients.
  std::vector<par::expert_weights> dall;
  for (const auto& w : all)
    dall.push_back({std::vector<float>(w.w1.size(), 0.0f), std::vector<float>(w.w2.size(), 0.0f)});
  std::vector<float> want_y, want_dx, want_dlogits(dlogits.size(), 0.0f);
  std::size_t off = 0, returned = 0, mine = 0, others = 0;
  const auto owner = [&](std::size_t expert) { return expert / per; };  // its expert-parallel index
  for (std::size_t q = 0; q < n; ++q) {
    const auto rq = routing_of(static_cast<int>(q));
    // Counted: rows this rank sends off its expert-parallel group's rank, rows it returns, and the rows its
    // tensor group gathers (its own, and its members').
    for (std::size_t a = 0; a < rq.expert.size(); ++a) {
      if (!rq.kept[a]) continue;
      const std::size_t o = owner(rq.expert[a]);
      if (q == me && o != e) ++off;
      if (q % members == t && q != me && o == e) ++returned;
      if (o == e && q % members == t) ++mine;
      if (o == e && q % members != t) ++others;
    }
    const auto ref = one_rank(s, all, dall, static_cast<int>(q), rq);
    if (q != me) continue;
    want_y = ref.y, want_dx = ref.dx;
    want_dlogits = router_gradient(rq, ref.dw);
  }
  std::vector<std::string> bad;
  const std::string who = "rank " + std::to_string(me) + " (t " + std::to_string(t) + ", e " + std::to_string(e) + ")";
  if (!close(y, want_y)) bad.push_back(who + ": its tokens differ from the one-rank layer's");
  if (!close(dx, want_dx)) bad.push_back(who + ": dx differs from the one-rank layer's");
  if (!close(dlogits, want_dlogits)) bad.push_back(who + ": the router's gradient differs");
  for (std::size_t q = 0; q < per; ++q) {
    const auto want = slice_of(dall[e * per + q], t, members);
    if (!close(dlocal[q].w1, want.w1) || !close(dlocal[q].w2, want.w2))
      bad.push_back(who + ": its slice of expert " + std::to_string(e * per + q) + "'s gradient differs");
  }
  const std::size_t groups = ep * per;  // counts: one per source rank and local expert
  const auto counts = (ep - 1) * per * sizeof(std::size_t) + (members - 1) * groups * sizeof(std::size_t);
  const auto expected = par::expert_dispatch_bytes(off, returned, h, s.experts, ep) +
                        par::expert_tensor_bytes(mine, others, h, groups, members);
  if (forward != expected)
    bad.push_back(who + ": sent " + std::to_string(forward) + " bytes forward, not " + std::to_string(expected));
  if (backward != expected - counts)
    bad.push_back(who + ": sent " + std::to_string(backward) + " bytes backward, not " +
                  std::to_string(expected - counts));
  return bad;
}

}  // namespace tensor

}  // namespace moe_check
