#pragma once
//! \file
//! Context parallelism's ring attention (Liu et al. 2023, "Ring Attention with
//! Blockwise Transformers"; Megatron-LM's context parallelism), over any
//! Communicator that holds one context-parallel group of c ranks. Each rank
//! holds s/c of the sequence's tokens: its queries, keys and values, per head.
//!  - forward: c steps; at each the rank attends its queries to the key/value
//!    block it holds, folding the result into a running softmax (the row's
//!    maximum, its sum, the weighted values), then passes the block to the next
//!    rank and takes the previous rank's: c − 1 hops of K and V.
//!  - backward: the same ring; each block's key and value gradients travel
//!    with it, gathering every rank's share, and go home after the last step:
//!    c − 1 hops of K, V, dK and dV, then one of dK and dV. In K-and-V-sized
//!    units, 3(c − 1) + 1 a layer, forward and backward, as
//!    model/parallel_training.hpp counts.
//! Attention is full (every query sees every key, the s² Narayanan et al.
//! count), fp32, scaled by 1/√d; tensors are head-major, [heads][tokens][d].
//!
//!   parallel::ring_attention attn({.heads = 8, .tokens = s / c, .head_dim = 64});
//!   attn.forward(cp, q, k, v, o);   ...   attn.backward(cp, d_o, dq, dk, dv);

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::parallel {

struct attention_shape {
  std::size_t heads = 1;
  std::size_t tokens = 0;  //!< this rank's share of the sequence
  std::size_t head_dim = 0;
  [[nodiscard]] std::size_t size() const noexcept { return heads * tokens * head_dim; }
};

class ring_attention {
 public:
  explicit ring_attention(attention_shape s) : s_(s) {
    trinity::detail::require(s.heads >= 1 && s.tokens >= 1 && s.head_dim >= 1, "attention_shape",
                             "heads, tokens and head_dim must each be at least 1");
  }

  //! o = softmax(q·kᵀ/√d)·v over every rank's keys and values. Keeps q, k, v, o and each row's log-sum-exp.
  template <Communicator C>
  void forward(C& cp, std::span<const float> q, std::span<const float> k, std::span<const float> v,
               std::span<float> o) {
    for (const auto x : {q.size(), k.size(), v.size(), o.size()}) need(x, "q, k, v and o");
    q_.assign(q.begin(), q.end());
    k_.assign(k.begin(), k.end());
    v_.assign(v.begin(), v.end());
    const std::size_t rows = s_.heads * s_.tokens, n = s_.size();
    std::vector<float> kv(2 * n), next(2 * n), running_max(rows, -std::numeric_limits<float>::infinity()),
        sum(rows, 0.0f);
    std::copy(k.begin(), k.end(), kv.begin());
    std::copy(v.begin(), v.end(), kv.begin() + static_cast<std::ptrdiff_t>(n));
    std::fill(o.begin(), o.end(), 0.0f);
    const int c = cp.size();
    for (int step = 0; step < c; ++step) {
      fold(std::span<const float>(kv).first(n), std::span<const float>(kv).subspan(n), o, running_max, sum);
      if (step + 1 < c) shift(cp, kv, next);
    }
    lse_.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t e = 0; e < s_.head_dim; ++e) o[r * s_.head_dim + e] /= sum[r];
      lse_[r] = running_max[r] + std::log(sum[r]);
    }
    o_.assign(o.begin(), o.end());
  }

  //! dq, dk, dv from d_o, for this rank's tokens.
  template <Communicator C>
  void backward(C& cp, std::span<const float> d_o, std::span<float> dq, std::span<float> dk, std::span<float> dv) {
    for (const auto x : {d_o.size(), dq.size(), dk.size(), dv.size()}) need(x, "d_o, dq, dk and dv");
    trinity::detail::require(o_.size() == s_.size(), "forward", "run forward before backward");
    const std::size_t n = s_.size(), d = s_.head_dim, t = s_.tokens, rows = s_.heads * t;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    // D_i = dO_i · O_i, the softmax's backward term.
    std::vector<float> D(rows, 0.0f);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t e = 0; e < d; ++e) D[r] += d_o[r * d + e] * o_[r * d + e];
    // The travelling block: K, V, and the gradients of K and V gathered so far.
    std::vector<float> block(4 * n, 0.0f), next(4 * n);
    std::copy(k_.begin(), k_.end(), block.begin());
    std::copy(v_.begin(), v_.end(), block.begin() + static_cast<std::ptrdiff_t>(n));
    std::fill(dq.begin(), dq.end(), 0.0f);
    const int c = cp.size();
    for (int step = 0; step < c; ++step) {
      const float* K = block.data();
      const float* V = block.data() + n;
      float* dK = block.data() + 2 * n;
      float* dV = block.data() + 3 * n;
      for (std::size_t h = 0; h < s_.heads; ++h)
        for (std::size_t i = 0; i < t; ++i) {
          const std::size_t qi = (h * t + i) * d;
          for (std::size_t j = 0; j < t; ++j) {
            const std::size_t kj = (h * t + j) * d;
            float sc = 0.0f, dp = 0.0f;
            for (std::size_t e = 0; e < d; ++e) {
              sc += q_[qi + e] * K[kj + e];
              dp += d_o[qi + e] * V[kj + e];
            }
            const float p = std::exp(sc * scale - lse_[h * t + i]);
            const float ds = p * (dp - D[h * t + i]) * scale;
            for (std::size_t e = 0; e < d; ++e) {
              dV[kj + e] += p * d_o[qi + e];
              dq[qi + e] += ds * K[kj + e];
              dK[kj + e] += ds * q_[qi + e];
            }
          }
        }
      if (step + 1 < c) shift(cp, block, next);
    }
    // The block held now is the next rank's: its gradients go home, and this rank's come from the previous.
    if (c > 1) {
      std::span<float> grads = std::span<float>(block).subspan(2 * n);
      std::vector<float> mine(2 * n);
      cp.sendrecv(std::as_bytes(std::span<const float>(grads)), (cp.rank() + 1) % c,
                  std::as_writable_bytes(std::span<float>(mine)), (cp.rank() + c - 1) % c);
      std::copy(mine.begin(), mine.end(), block.begin() + static_cast<std::ptrdiff_t>(2 * n));
    }
    std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(2 * n), n, dk.begin());
    std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(3 * n), n, dv.begin());
  }

 private:
  void need(std::size_t have, const char* what) const {
    trinity::detail::require(
        have == s_.size(), what,
        "each holds heads × tokens × head_dim = " + std::to_string(s_.size()) + " values, not " + std::to_string(have));
  }
  // To the next rank, from the previous: the ring's one hop.
  template <Communicator C>
  static void shift(C& cp, std::vector<float>& buf, std::vector<float>& spare) {
    const int c = cp.size();
    cp.sendrecv(std::as_bytes(std::span<const float>(buf)), (cp.rank() + 1) % c,
                std::as_writable_bytes(std::span<float>(spare)), (cp.rank() + c - 1) % c);
    buf.swap(spare);
  }
  // Folds one key/value block into the running softmax of this rank's queries.
  void fold(std::span<const float> K, std::span<const float> V, std::span<float> o, std::vector<float>& running_max,
            std::vector<float>& sum) const {
    const std::size_t d = s_.head_dim, t = s_.tokens;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::vector<float> score(t);
    for (std::size_t h = 0; h < s_.heads; ++h)
      for (std::size_t i = 0; i < t; ++i) {
        const std::size_t r = h * t + i, qi = r * d;
        float top = running_max[r];
        for (std::size_t j = 0; j < t; ++j) {
          float sc = 0.0f;
          for (std::size_t e = 0; e < d; ++e) sc += q_[qi + e] * K[(h * t + j) * d + e];
          score[j] = sc * scale;
          top = std::max(top, score[j]);
        }
        const float keep = std::exp(running_max[r] - top);  // exp(-inf) = 0 on the first block
        sum[r] *= keep;
        for (std::size_t e = 0; e < d; ++e) o[qi + e] *= keep;
        for (std::size_t j = 0; j < t; ++j) {
          const float w = std::exp(score[j] - top);
          sum[r] += w;
          for (std::size_t e = 0; e < d; ++e) o[qi + e] += w * V[(h * t + j) * d + e];
        }
        running_max[r] = top;
      }
  }

  attention_shape s_;
  std::vector<float> q_, k_, v_, o_, lse_;
};

}  // namespace trinity::parallel
