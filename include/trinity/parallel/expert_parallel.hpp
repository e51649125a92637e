#pragma once
//! \file
//! Expert parallelism's mixture-of-experts layer, forward and backward, over any Communicator that holds one
//! expert-parallel group. Activations are fp32, row-major, one row per token.
//!  - route_top_k: each token's k highest-scoring experts of the router's logits, their softmax weights
//!    renormalised over the k (Mixtral's router), and the capacity an expert takes per rank's batch:
//!    ceil(capacity_factor · tokens · k / experts) assignments, first come in token order; the rest are
//!    dropped (the token keeps its other experts' share) and counted.
//!  - moe_forward: the experts are split over the group's e ranks, experts/e each, contiguous (rank r holds
//!    experts r·E/e ...). A rank sends each kept assignment's row to the rank of its expert (an all-to-all),
//!    each rank runs its experts' FFN (y = W2·relu(W1·x)) on what it received, the results come back (a second
//!    all-to-all), and each token sums its kept experts' outputs by weight, in the order of its k choices.
//! So a token's output is the single-rank layer's bit for bit, wherever its experts live, and each rank sends
//! hidden·4 bytes per kept assignment it routes off the rank and per result it returns, beside one count per
//! expert: expert_dispatch_bytes.
//!
//!  - expert tensor parallelism (Megatron-Core's etp): each expert's FFN split over the t ranks of a second
//!    group, W1's rows and W2's columns f/t to a rank. After the dispatch the group gathers its members' rows
//!    (an all-gather), each member runs its slice of every expert on all of them, and a reduce-scatter sums the
//!    slices' outputs back to the member whose rows they are; backward gathers the output gradients and
//!    reduce-scatters the input gradients. Each member sends hidden·4 bytes for each of its rows to every other
//!    member and for each of the others' rows to its member, beside its counts: expert_tensor_bytes. The slices'
//!    partial sums are added in member order, so outputs match the one-rank layer to rounding, not bit for bit.
//!
//!   const auto r = parallel::route_top_k(logits, tokens, shape);
//!   parallel::moe_pass pass;
//!   parallel::moe_forward(ep, shape, mine, x, r, y, pass);          // mine: this rank's experts
//!   parallel::moe_backward(ep, shape, mine, pass, dy, dx, dmine, dlogits);
//!   parallel::moe_forward(ep, etp, shape, my_slices, x, r, y, pass);  // each expert split over etp's ranks

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <trinity/comm/all_to_all.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::parallel {

struct moe_shape {
  std::size_t hidden = 0;      //!< h: a token's row
  std::size_t ffn_hidden = 0;  //!< f: an expert's FFN width
  std::size_t experts = 0;     //!< E
  std::size_t top_k = 1;       //!< k experts a token goes to
  double capacity_factor = 1;  //!< an expert's capacity over its even share of the assignments
};

inline void validate(const moe_shape& s) {
  trinity::detail::require(s.hidden >= 1 && s.ffn_hidden >= 1, "hidden", "hidden and ffn_hidden must be at least 1");
  trinity::detail::require(s.experts >= 1, "experts", "must be at least 1");
  trinity::detail::require(s.top_k >= 1 && s.top_k <= s.experts, "top_k",
                           "must be 1 to the experts (" + std::to_string(s.experts) + ")");
  trinity::detail::require(s.capacity_factor > 0 && std::isfinite(s.capacity_factor), "capacity_factor",
                           "must be positive (1: each expert takes its even share)");
}

//! Where each token's k assignments go.
struct routing {
  std::size_t tokens = 0, top_k = 0, capacity = 0;
  std::vector<std::uint32_t> expert;  //!< tokens × k, each token's choices best first
  std::vector<float> weight;          //!< tokens × k, renormalised softmax over the k
  std::vector<std::uint8_t> kept;     //!< tokens × k: 0 where the expert was full
  std::size_t dropped = 0;
};

//! Routes `tokens` rows of router logits (tokens × experts). Ties go to the lower expert.
inline routing route_top_k(std::span<const float> logits, std::size_t tokens, const moe_shape& s) {
  validate(s);
  trinity::detail::require(logits.size() == tokens * s.experts, "logits",
                           "has " + std::to_string(logits.size()) + " values; give tokens x experts (" +
                               std::to_string(tokens * s.experts) + ")");
  routing r{tokens, s.top_k, 0, {}, {}, {}, 0};
  r.capacity = static_cast<std::size_t>(
      std::ceil(s.capacity_factor * static_cast<double>(tokens * s.top_k) / static_cast<double>(s.experts)));
  r.expert.resize(tokens * s.top_k);
  r.weight.resize(tokens * s.top_k);
  r.kept.resize(tokens * s.top_k);
  std::vector<std::size_t> load(s.experts, 0), order(s.experts);
  for (std::size_t t = 0; t < tokens; ++t) {
    const auto row = logits.subspan(t * s.experts, s.experts);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(s.top_k), order.end(),
                      [&](std::size_t a, std::size_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    // Softmax over the k chosen, from the largest: exp(l - l_max) / sum.
    double sum = 0;
    for (std::size_t j = 0; j < s.top_k; ++j) sum += std::exp(static_cast<double>(row[order[j]] - row[order[0]]));
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j, e = order[j];
      r.expert[a] = static_cast<std::uint32_t>(e);
      r.weight[a] = static_cast<float>(std::exp(static_cast<double>(row[e] - row[order[0]])) / sum);
      r.kept[a] = load[e] < r.capacity ? 1 : 0;
      if (r.kept[a])
        ++load[e];
      else
        ++r.dropped;
    }
  }
  return r;
}

//! One expert's FFN: W1 (f × h) and W2 (h × f).
struct expert_weights {
  std::vector<float> w1, w2;
};

namespace detail {
//! W1·x, before the relu: the forward's first product, and what the backward recomputes.
inline std::vector<float> expert_pre_activation(const moe_shape& s, const expert_weights& w, std::span<const float> x) {
  std::vector<float> mid(s.ffn_hidden);
  for (std::size_t i = 0; i < s.ffn_hidden; ++i) {
    float acc = 0;
    for (std::size_t j = 0; j < s.hidden; ++j) acc += w.w1[i * s.hidden + j] * x[j];
    mid[i] = acc;
  }
  return mid;
}
}  // namespace detail

//! y[h] = W2·relu(W1·x), accumulated in order.
inline void expert_ffn(const moe_shape& s, const expert_weights& w, std::span<const float> x, std::span<float> y) {
  auto mid = detail::expert_pre_activation(s, w, x);
  for (auto& v : mid) v = std::max(v, 0.0f);
  for (std::size_t i = 0; i < s.hidden; ++i) {
    float acc = 0;
    for (std::size_t j = 0; j < s.ffn_hidden; ++j) acc += w.w2[i * s.ffn_hidden + j] * mid[j];
    y[i] = acc;
  }
}

//! The rank that holds expert e in a group of `ranks`.
inline int expert_rank(std::size_t e, std::size_t experts, int ranks) {
  return static_cast<int>(e / (experts / static_cast<std::size_t>(ranks)));
}

//! Bytes a rank sends in one forward: the row counts for the other ranks' experts (one per expert, 8 bytes), then
//! hidden·4 for each of its kept assignments whose expert is on another rank (the dispatch) and for each result it
//! returns to another rank (the combine).
inline std::size_t expert_dispatch_bytes(std::size_t sent_rows, std::size_t returned_rows, std::size_t hidden,
                                         std::size_t experts, std::size_t ranks) {
  return experts / ranks * (ranks - 1) * sizeof(std::size_t) + (sent_rows + returned_rows) * hidden * sizeof(float);
}

//! What a forward keeps for its backward: the routing, the exchange's layout, the rows this rank's experts ran on
//! (`in`) and the results its tokens got back (`back`).
struct moe_pass {
  routing r;
  std::vector<std::size_t> send_counts, send_offsets, recv_counts, recv_offsets, counts_in;
  std::vector<std::size_t> row_of;  //!< where each kept assignment's row sits in the dispatch
  std::vector<float> in, back;
  //! With expert tensor parallelism: every member's rows gathered, member by member, and each member's
  //! counts_in (one after another) to say whose expert each row is.
  std::vector<float> gathered;
  std::vector<std::size_t> member_counts_in;
};

namespace detail {
//! moe_forward's exchange around `experts(in, counts_in, results)`, which fills `results` (as long as `in`)
//! with the outputs of the rows this rank's experts received.
template <Communicator C, class Experts>
void moe_forward_around(C& c, const moe_shape& s, std::size_t local_experts, std::span<const float> x, const routing& r,
                        std::span<float> y, moe_pass& pass, Experts experts) {
  validate(s);
  const int n = c.size();
  const auto un = static_cast<std::size_t>(n);
  trinity::detail::require(s.experts % un == 0, "experts",
                           std::to_string(s.experts) + " do not split over " + std::to_string(n) +
                               " ranks; give an expert-parallel group that divides them");
  trinity::detail::require(
      local_experts == s.experts / un, "local",
      "holds " + std::to_string(local_experts) + " experts; this rank holds " + std::to_string(s.experts / un));
  trinity::detail::require(r.top_k == s.top_k && x.size() == r.tokens * s.hidden && y.size() == x.size(), "x",
                           "x and y must be the routing's tokens x hidden");
  const std::size_t h = s.hidden, per_rank = s.experts / un;
  // Dispatch: this rank's kept assignments grouped by destination rank, then by expert, in assignment order.
  std::vector<std::vector<std::size_t>> by_expert(s.experts);
  for (std::size_t a = 0; a < r.expert.size(); ++a)
    if (r.kept[a]) by_expert[r.expert[a]].push_back(a);
  // How many rows each expert gets from each rank: per_rank counts to each rank, as Megatron's dispatcher sends.
  std::vector<std::size_t> counts_out(s.experts), counts_in(s.experts);
  for (std::size_t e = 0; e < s.experts; ++e) counts_out[e] = by_expert[e].size();
  comm::all_to_all(c, std::span<const std::size_t>(counts_out), std::span<std::size_t>(counts_in));
  std::vector<std::size_t> send_counts(un), send_offsets(un), recv_counts(un), recv_offsets(un);
  std::size_t sent = 0, received = 0;
  for (std::size_t j = 0; j < un; ++j) {
    send_offsets[j] = sent, recv_offsets[j] = received;
    for (std::size_t q = 0; q < per_rank; ++q) sent += counts_out[j * per_rank + q] * h;
    for (std::size_t q = 0; q < per_rank; ++q) received += counts_in[j * per_rank + q] * h;
    send_counts[j] = sent - send_offsets[j], recv_counts[j] = received - recv_offsets[j];
  }
  std::vector<float> out(sent), in(received);
  std::vector<std::size_t> row_of(r.expert.size());  // where each kept assignment's row sits in `out`
  for (std::size_t e = 0, at = 0; e < s.experts; ++e)
    for (const std::size_t a : by_expert[e]) {
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(a / s.top_k * h), h,
                  out.begin() + static_cast<std::ptrdiff_t>(at));
      row_of[a] = at, at += h;
    }
  comm::all_to_allv(c, std::span<const float>(out), std::span<const std::size_t>(send_counts),
                    std::span<const std::size_t>(send_offsets), std::span<float>(in),
                    std::span<const std::size_t>(recv_counts), std::span<const std::size_t>(recv_offsets));
  // The experts: from each rank, its rows for this rank's experts in expert order; results go back in place.
  std::vector<float> results(received), back(sent);
  experts(in, counts_in, results);
  comm::all_to_allv(c, std::span<const float>(results), std::span<const std::size_t>(recv_counts),
                    std::span<const std::size_t>(recv_offsets), std::span<float>(back),
                    std::span<const std::size_t>(send_counts), std::span<const std::size_t>(send_offsets));
  // Combine: each token's kept results by weight, in the order of its k choices.
  std::fill(y.begin(), y.end(), 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t)
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      if (!r.kept[a]) continue;
      for (std::size_t i = 0; i < h; ++i) y[t * h + i] += r.weight[a] * back[row_of[a] + i];
    }
  pass.r = r;
  pass.send_counts = std::move(send_counts), pass.send_offsets = std::move(send_offsets);
  pass.recv_counts = std::move(recv_counts), pass.recv_offsets = std::move(recv_offsets);
  pass.counts_in = std::move(counts_in), pass.row_of = std::move(row_of);
  pass.in = std::move(in), pass.back = std::move(back);
}

//! Each row of `in` (grouped by source rank, then by local expert, `counts_in` rows a group) through its
//! expert: `row(q, at)` for the row at value offset `at`, of local expert q.
template <class Row>
void for_each_row(std::span<const std::size_t> counts_in, std::size_t per_rank, std::size_t hidden, Row row) {
  for (std::size_t g = 0, at = 0; g < counts_in.size(); ++g)
    for (std::size_t i = 0; i < counts_in[g]; ++i, at += hidden) row(g % per_rank, at);
}
}  // namespace detail

//! As moe_forward below, keeping in `pass` what moe_backward needs.
template <Communicator C>
void moe_forward(C& c, const moe_shape& s, std::span<const expert_weights> local, std::span<const float> x,
                 const routing& r, std::span<float> y, moe_pass& pass) {
  const std::size_t h = s.hidden, per_rank = local.size();
  detail::moe_forward_around(
      c, s, local.size(), x, r, y, pass,
      [&](const std::vector<float>& in, const std::vector<std::size_t>& counts_in, std::vector<float>& results) {
        detail::for_each_row(counts_in, per_rank, h, [&](std::size_t q, std::size_t at) {
          expert_ffn(s, local[q], std::span<const float>(in).subspan(at, h), std::span<float>(results).subspan(at, h));
        });
      });
}

//! This rank's tokens (x: tokens × h) through the layer into y (tokens × h); `local` holds this rank's
//! experts/ranks experts, in order. Every rank of the group calls it, with its own tokens.
template <Communicator C>
void moe_forward(C& c, const moe_shape& s, std::span<const expert_weights> local, std::span<const float> x,
                 const routing& r, std::span<float> y) {
  moe_pass pass;
  moe_forward(c, s, local, x, r, y, pass);
}

//! One expert's backward for one row: x its input, g the gradient of its output; adds to the expert's gradients
//! `dw` and writes the input's gradient into dx.
inline void expert_ffn_backward(const moe_shape& s, const expert_weights& w, std::span<const float> x,
                                std::span<const float> g, expert_weights& dw, std::span<float> dx) {
  const auto mid = detail::expert_pre_activation(s, w, x);
  std::vector<float> dmid(s.ffn_hidden, 0.0f);
  for (std::size_t i = 0; i < s.hidden; ++i)
    for (std::size_t j = 0; j < s.ffn_hidden; ++j) {
      dw.w2[i * s.ffn_hidden + j] += g[i] * std::max(mid[j], 0.0f);
      dmid[j] += w.w2[i * s.ffn_hidden + j] * g[i];
    }
  std::fill(dx.begin(), dx.end(), 0.0f);
  for (std::size_t i = 0; i < s.ffn_hidden; ++i) {
    if (mid[i] <= 0) continue;  // relu's gradient
    for (std::size_t j = 0; j < s.hidden; ++j) {
      dw.w1[i * s.hidden + j] += dmid[i] * x[j];
      dx[j] += w.w1[i * s.hidden + j] * dmid[i];
    }
  }
}

namespace detail {
//! The router logits' gradient (tokens × experts) from each choice's weight gradient `dweight`: the softmax over
//! each token's k choices, w_a·(dw_a − Σ_b w_b·dw_b), zero for the experts it did not choose. A dropped choice keeps
//! its weight, so it takes its share with a dw of 0.
inline void router_backward(const moe_shape& s, const routing& r, std::span<const float> dweight,
                            std::span<float> dlogits) {
  std::fill(dlogits.begin(), dlogits.end(), 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t) {
    float weighted = 0;
    for (std::size_t j = 0; j < s.top_k; ++j) weighted += r.weight[t * s.top_k + j] * dweight[t * s.top_k + j];
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      dlogits[t * s.experts + r.expert[a]] = r.weight[a] * (dweight[a] - weighted);
    }
  }
}

//! moe_backward's exchange around `experts(gin, dxin)`, which fills `dxin` (as long as pass.in) with the input
//! gradients of the rows this rank's experts ran, given their output gradients `gin`.
template <Communicator C, class Experts>
void moe_backward_around(C& c, const moe_shape& s, const moe_pass& pass, std::span<const float> dy, std::span<float> dx,
                         std::span<float> dlogits, Experts experts) {
  const auto& r = pass.r;
  const std::size_t h = s.hidden;
  trinity::detail::require(dy.size() == r.tokens * h && dx.size() == dy.size(), "dy",
                           "dy and dx must be the forward's tokens x hidden");
  trinity::detail::require(dlogits.size() == r.tokens * s.experts, "dlogits", "must be tokens x experts");
  // Token side: each kept output's gradient, weighted, where its row went; and each weight's gradient.
  std::vector<float> gout(pass.back.size()), dweight(r.expert.size(), 0.0f);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    if (!r.kept[a]) continue;
    const std::size_t t = a / s.top_k, at = pass.row_of[a];
    float dot = 0;
    for (std::size_t i = 0; i < h; ++i) {
      gout[at + i] = r.weight[a] * dy[t * h + i];
      dot += dy[t * h + i] * pass.back[at + i];
    }
    dweight[a] = dot;
  }
  std::vector<float> gin(pass.in.size());
  comm::all_to_allv(c, std::span<const float>(gout), std::span<const std::size_t>(pass.send_counts),
                    std::span<const std::size_t>(pass.send_offsets), std::span<float>(gin),
                    std::span<const std::size_t>(pass.recv_counts), std::span<const std::size_t>(pass.recv_offsets));
  // Expert side: each row's input gradient, the experts' gradients summed over their rows in arrival order.
  std::vector<float> dxin(pass.in.size()), dxback(pass.back.size());
  experts(gin, dxin);
  comm::all_to_allv(c, std::span<const float>(dxin), std::span<const std::size_t>(pass.recv_counts),
                    std::span<const std::size_t>(pass.recv_offsets), std::span<float>(dxback),
                    std::span<const std::size_t>(pass.send_counts), std::span<const std::size_t>(pass.send_offsets));
  // Each token's input gradient, over its kept experts in the order chosen; the router's softmax over its k.
  std::fill(dx.begin(), dx.end(), 0.0f);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    if (!r.kept[a]) continue;
    for (std::size_t i = 0; i < h; ++i) dx[a / s.top_k * h + i] += dxback[pass.row_of[a] + i];
  }
  router_backward(s, r, dweight, dlogits);
}
}  // namespace detail

//! The backward of the forward `pass` kept: dy (tokens × h) in; dx (tokens × h), the router logits' gradient
//! (tokens × experts) and, added to `dlocal`, this rank's experts' gradients out. The gradient of each kept
//! output, weighted, goes to its expert's rank as the row went (an all-to-all), the experts' input gradients come
//! back (a second), and the router's softmax over each token's k takes the weights' gradients.
template <Communicator C>
void moe_backward(C& c, const moe_shape& s, std::span<const expert_weights> local, const moe_pass& pass,
                  std::span<const float> dy, std::span<float> dx, std::span<expert_weights> dlocal,
                  std::span<float> dlogits) {
  trinity::detail::require(dlocal.size() == local.size(), "dlocal", "needs one gradient per local expert");
  const std::size_t h = s.hidden, per_rank = local.size();
  detail::moe_backward_around(c, s, pass, dy, dx, dlogits,
                              [&](const std::vector<float>& gin, std::vector<float>& dxin) {
                                detail::for_each_row(pass.counts_in, per_rank, h, [&](std::size_t q, std::size_t at) {
                                  expert_ffn_backward(s, local[q], std::span<const float>(pass.in).subspan(at, h),
                                                      std::span<const float>(gin).subspan(at, h), dlocal[q],
                                                      std::span<float>(dxin).subspan(at, h));
                                });
                              });
}

//! Bytes a member of an expert-tensor-parallel group of `members` sends in one forward (the same again
//! backward): the group's row counts (one per source rank and local expert, `groups` of them, 8 bytes), its
//! `mine` rows to every other member (the all-gather) and the others' `others` rows back to their members (the
//! reduce-scatter), hidden·4 bytes a row.
inline std::size_t expert_tensor_bytes(std::size_t mine, std::size_t others, std::size_t hidden, std::size_t groups,
                                       std::size_t members) {
  return (members - 1) * groups * sizeof(std::size_t) + ((members - 1) * mine + others) * hidden * sizeof(float);
}

namespace detail {
//! Where each member's rows sit once an expert-tensor-parallel group gathers them: member i's `rows[i]` rows
//! of `hidden` values at value offset `offsets[i]`.
struct member_rows {
  std::vector<std::size_t> rows, offsets;
  std::size_t total = 0;  //!< values, all members
  //! Member i's values.
  [[nodiscard]] std::size_t extent(std::size_t i) const {
    return i + 1 < offsets.size() ? offsets[i + 1] - offsets[i] : total - offsets[i];
  }
};

inline member_rows member_layout(std::span<const std::size_t> member_counts_in, std::size_t members,
                                 std::size_t hidden) {
  member_rows m{std::vector<std::size_t>(members), std::vector<std::size_t>(members), 0};
  const std::size_t groups = member_counts_in.size() / members;
  for (std::size_t i = 0; i < members; ++i) {
    m.offsets[i] = m.total;
    for (std::size_t g = 0; g < groups; ++g) m.rows[i] += member_counts_in[i * groups + g];
    m.total += m.rows[i] * hidden;
  }
  return m;
}

//! Every gathered row through `row(q, at)`: member by member, each member's rows as for_each_row orders them
//! (its `groups` counts in member_counts_in), `at` the row's value offset in the gathered buffer.
template <class Row>
void for_each_member_row(std::span<const std::size_t> member_counts_in, const member_rows& m, std::size_t per_rank,
                         std::size_t hidden, Row row) {
  const std::size_t groups = member_counts_in.size() / m.offsets.size();
  for (std::size_t i = 0; i < m.offsets.size(); ++i)
    for_each_row(member_counts_in.subspan(i * groups, groups), per_rank, hidden,
                 [&](std::size_t q, std::size_t at) { row(q, m.offsets[i] + at); });
}

//! Every member's rows, member by member: this member's `mine` to each of the others.
template <Communicator T>
std::vector<float> gather_members(T& etp, const member_rows& m, std::span<const float> mine) {
  const auto n = static_cast<std::size_t>(etp.size());
  std::vector<std::size_t> send_counts(n, mine.size()), send_offsets(n, 0), recv_counts(n);
  for (std::size_t i = 0; i < n; ++i) recv_counts[i] = m.extent(i);
  std::vector<float> all(m.total);
  comm::all_to_allv(etp, mine, std::span<const std::size_t>(send_counts), std::span<const std::size_t>(send_offsets),
                    std::span<float>(all), std::span<const std::size_t>(recv_counts),
                    std::span<const std::size_t>(m.offsets));
  return all;
}

//! The members' partial values for every member's rows, summed in member order into this member's `mine`.
template <Communicator T>
void reduce_to_members(T& etp, const member_rows& m, std::span<const float> partial, std::span<float> mine) {
  const auto n = static_cast<std::size_t>(etp.size()), me = static_cast<std::size_t>(etp.rank());
  std::vector<std::size_t> send_counts(n), recv_counts(n, mine.size()), recv_offsets(n);
  for (std::size_t i = 0; i < n; ++i) send_counts[i] = m.extent(i), recv_offsets[i] = i * mine.size();
  trinity::detail::require(send_counts[me] == mine.size(), "mine", "must hold this member's rows");
  std::vector<float> parts(n * mine.size());
  comm::all_to_allv(etp, partial, std::span<const std::size_t>(send_counts), std::span<const std::size_t>(m.offsets),
                    std::span<float>(parts), std::span<const std::size_t>(recv_counts),
                    std::span<const std::size_t>(recv_offsets));
  std::copy_n(parts.begin(), mine.size(), mine.begin());
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t k = 0; k < mine.size(); ++k) mine[k] += parts[i * mine.size() + k];
}

//! The shape one member's slice of each expert has: f/t wide.
inline moe_shape expert_slice(const moe_shape& s, std::size_t members, std::span<const expert_weights> local) {
  trinity::detail::require(s.ffn_hidden % members == 0, "ffn_hidden",
                           std::to_string(s.ffn_hidden) + " does not split over " + std::to_string(members) +
                               " expert-tensor-parallel ranks; give a group that divides it");
  moe_shape slice = s;
  slice.ffn_hidden = s.ffn_hidden / members;
  for (const auto& w : local)
    trinity::detail::require(w.w1.size() == slice.ffn_hidden * s.hidden && w.w2.size() == w.w1.size(), "local",
                             "each expert's slice is W1's " + std::to_string(slice.ffn_hidden) +
                                 " rows and W2's as many columns (ffn_hidden / the group's ranks)");
  return slice;
}
}  // namespace detail

//! As moe_forward(c, ...) with each expert split over the ranks of `etp` (expert tensor parallelism): `c` is
//! this rank's expert-parallel group, `etp` the ranks that hold the same experts, and `local` this rank's slice
//! of each of them (W1's rows and W2's columns [t·f/n, (t + 1)·f/n) for etp rank t of n).
template <Communicator C, Communicator T>
void moe_forward(C& c, T& etp, const moe_shape& s, std::span<const expert_weights> local, std::span<const float> x,
                 const routing& r, std::span<float> y, moe_pass& pass) {
  const auto n = static_cast<std::size_t>(etp.size());
  const moe_shape slice = detail::expert_slice(s, n, local);
  const std::size_t h = s.hidden, per_rank = local.size();
  detail::moe_forward_around(
      c, s, local.size(), x, r, y, pass,
      [&](const std::vector<float>& in, const std::vector<std::size_t>& counts_in, std::vector<float>& results) {
        // Every member's counts, then its rows; this member's slice of each row's expert; the sums back.
        std::vector<std::size_t> repeated;
        for (std::size_t i = 0; i < n; ++i) repeated.insert(repeated.end(), counts_in.begin(), counts_in.end());
        pass.member_counts_in.assign(repeated.size(), 0);
        comm::all_to_all(etp, std::span<const std::size_t>(repeated), std::span<std::size_t>(pass.member_counts_in));
        const auto m = detail::member_layout(pass.member_counts_in, n, h);
        pass.gathered = detail::gather_members(etp, m, std::span<const float>(in));
        std::vector<float> partial(m.total);
        detail::for_each_member_row(pass.member_counts_in, m, per_rank, h, [&](std::size_t q, std::size_t at) {
          expert_ffn(slice, local[q], std::span<const float>(pass.gathered).subspan(at, h),
                     std::span<float>(partial).subspan(at, h));
        });
        detail::reduce_to_members(etp, m, std::span<const float>(partial), std::span<float>(results));
      });
}

//! The backward of moe_forward(c, etp, ...): each member gathers the output gradients of every member's rows,
//! runs its slices' backward on them (adding to `dlocal`, this rank's slices' gradients), and the input
//! gradients' partial sums go back to their members.
template <Communicator C, Communicator T>
void moe_backward(C& c, T& etp, const moe_shape& s, std::span<const expert_weights> local, const moe_pass& pass,
                  std::span<const float> dy, std::span<float> dx, std::span<expert_weights> dlocal,
                  std::span<float> dlogits) {
  trinity::detail::require(dlocal.size() == local.size(), "dlocal", "needs one gradient per local expert");
  const auto n = static_cast<std::size_t>(etp.size());
  const moe_shape slice = detail::expert_slice(s, n, local);
  const std::size_t h = s.hidden, per_rank = local.size();
  detail::moe_backward_around(
      c, s, pass, dy, dx, dlogits, [&](const std::vector<float>& gin, std::vector<float>& dxin) {
        const auto m = detail::member_layout(pass.member_counts_in, n, h);
        const auto gall = detail::gather_members(etp, m, std::span<const float>(gin));
        std::vector<float> partial(m.total);
        detail::for_each_member_row(pass.member_counts_in, m, per_rank, h, [&](std::size_t q, std::size_t at) {
          expert_ffn_backward(slice, local[q], std::span<const float>(pass.gathered).subspan(at, h),
                              std::span<const float>(gall).subspan(at, h), dlocal[q],
                              std::span<float>(partial).subspan(at, h));
        });
        detail::reduce_to_members(etp, m, std::span<const float>(partial), std::span<float>(dxin));
      });
}

//! Anything but a Communicator as `c`: the Communicator ladder (concepts/communicator.hpp) names what the type
//! lacks and the fix, where a constrained template would say only that a required type is invalid.
template <class C, class... Args>
requires(!Communicator<C>) void moe_forward(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(), "trinity: parallel::moe_forward(c, ...) takes a Communicator as c");
}
template <class C, class... Args>
requires(!Communicator<C>) void moe_backward(C&, Args&&...) {
  static_assert(diagnose_communicator<C>(), "trinity: parallel::moe_backward(c, ...) takes a Communicator as c");
}

}  // namespace trinity::parallel
