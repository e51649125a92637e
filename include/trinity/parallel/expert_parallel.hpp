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
//!   const auto r = parallel::route_top_k(logits, tokens, shape);
//!   parallel::moe_pass pass;
//!   parallel::moe_forward(ep, shape, mine, x, r, y, pass);          // mine: this rank's experts
//!   parallel::moe_backward(ep, shape, mine, pass, dy, dx, dmine, dlogits);

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
};

//! As moe_forward below, keeping in `pass` what moe_backward needs.
template <Communicator C>
void moe_forward(C& c, const moe_shape& s, std::span<const expert_weights> local, std::span<const float> x,
                 const routing& r, std::span<float> y, moe_pass& pass) {
  validate(s);
  const int n = c.size();
  const auto un = static_cast<std::size_t>(n);
  trinity::detail::require(s.experts % un == 0, "experts",
                           std::to_string(s.experts) + " do not split over " + std::to_string(n) +
                               " ranks; give an expert-parallel group that divides them");
  trinity::detail::require(
      local.size() == s.experts / un, "local",
      "holds " + std::to_string(local.size()) + " experts; this rank holds " + std::to_string(s.experts / un));
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
  for (std::size_t j = 0, at = 0; j < un; ++j)
    for (std::size_t q = 0; q < per_rank; ++q)
      for (std::size_t i = 0; i < counts_in[j * per_rank + q]; ++i, at += h)
        expert_ffn(s, local[q], std::span<const float>(in).subspan(at, h), std::span<float>(results).subspan(at, h));
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
  pass = {r,
          std::move(send_counts),
          std::move(send_offsets),
          std::move(recv_counts),
          std::move(recv_offsets),
          std::move(counts_in),
          std::move(row_of),
          std::move(in),
          std::move(back)};
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

//! The backward of the forward `pass` kept: dy (tokens × h) in; dx (tokens × h), the router logits' gradient
//! (tokens × experts) and, added to `dlocal`, this rank's experts' gradients out. The gradient of each kept
//! output, weighted, goes to its expert's rank as the row went (an all-to-all), the experts' input gradients come
//! back (a second), and the router's softmax over each token's k takes the weights' gradients.
template <Communicator C>
void moe_backward(C& c, const moe_shape& s, std::span<const expert_weights> local, const moe_pass& pass,
                  std::span<const float> dy, std::span<float> dx, std::span<expert_weights> dlocal,
                  std::span<float> dlogits) {
  const auto& r = pass.r;
  const std::size_t h = s.hidden, un = static_cast<std::size_t>(c.size()), per_rank = s.experts / un;
  trinity::detail::require(dy.size() == r.tokens * h && dx.size() == dy.size(), "dy",
                           "dy and dx must be the forward's tokens x hidden");
  trinity::detail::require(dlogits.size() == r.tokens * s.experts, "dlogits", "must be tokens x experts");
  trinity::detail::require(dlocal.size() == local.size(), "dlocal", "needs one gradient per local expert");
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
  for (std::size_t j = 0, at = 0; j < un; ++j)
    for (std::size_t q = 0; q < per_rank; ++q)
      for (std::size_t i = 0; i < pass.counts_in[j * per_rank + q]; ++i, at += h)
        expert_ffn_backward(s, local[q], std::span<const float>(pass.in).subspan(at, h),
                            std::span<const float>(gin).subspan(at, h), dlocal[q],
                            std::span<float>(dxin).subspan(at, h));
  comm::all_to_allv(c, std::span<const float>(dxin), std::span<const std::size_t>(pass.recv_counts),
                    std::span<const std::size_t>(pass.recv_offsets), std::span<float>(dxback),
                    std::span<const std::size_t>(pass.send_counts), std::span<const std::size_t>(pass.send_offsets));
  // Each token's input gradient, over its kept experts in the order chosen; the router's softmax over its k.
  std::fill(dx.begin(), dx.end(), 0.0f);
  std::fill(dlogits.begin(), dlogits.end(), 0.0f);
  for (std::size_t t = 0; t < r.tokens; ++t) {
    float weighted = 0;
    for (std::size_t j = 0; j < s.top_k; ++j) weighted += r.weight[t * s.top_k + j] * dweight[t * s.top_k + j];
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      dlogits[t * s.experts + r.expert[a]] = r.weight[a] * (dweight[a] - weighted);
      if (!r.kept[a]) continue;
      for (std::size_t i = 0; i < h; ++i) dx[t * h + i] += dxback[pass.row_of[a] + i];
    }
  }
}

}  // namespace trinity::parallel
