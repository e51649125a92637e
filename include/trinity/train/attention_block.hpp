#pragma once
//! \file
//! attention_block: the reference trainer's attention, a library piece (trinity::train), the first of the trainer's
//! blocks to leave tools/train. y = h + softmax(h·hᵀ/√d)·h per head, the queries, keys and values all h: it has no
//! weights of its own, so a model's parameters, and ZeRO's formulas over them, stay its layers'; what it adds is
//! the one thing context parallelism changes: tokens that see each other's keys and values. Its rows are this
//! rank's tokens, sequence-major ([sequence][token]), each sequence's tokens split in order over the context group;
//! its columns a slice of the features, whole heads (a tensor-parallel rank's heads, as Megatron splits attention).
//! Over a context group of c ranks parallel::ring_attention passes the keys and values around; over a group of one
//! it is plain attention. forget() and rebuild() are selective recomputation of the core.
//!
//!   train::attention_block block(sequences, tokens / c, features, head_dim);
//!   block.forward(cp, h);   ...   block.backward(cp, delta);

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/parallel/context_parallel.hpp>

namespace trinity::train {

class attention_block {
 public:
  //! `sequences` × `tokens` rows (this rank's share of each sequence), `features` columns in heads of `head_dim`.
  attention_block(std::size_t sequences, std::size_t tokens, std::size_t features, std::size_t head_dim)
      : sequences_(checked(sequences, tokens, features, head_dim)),
        tokens_(tokens),
        features_(features),
        dim_(head_dim),
        heads_(features / head_dim),
        shape_{.heads = sequences * (features / head_dim), .tokens = tokens, .head_dim = head_dim},
        attn_(shape_) {}

  //! h ← h + attention(h), in place; keeps h as it came in (input()), where the layer before takes its tanh'.
  template <Communicator C>
  void forward(C& cp, std::span<float> h) {
    require_rows(h, "h");
    in_.assign(h.begin(), h.end());
    const std::vector<float> x = to_heads(h);
    std::vector<float> o(x.size());
    attn_.forward(cp, x, x, x, o);
    add_rows(o, h);
  }

  //! δ at the output ← δ at the input: the residual's δ plus the attention's through its queries, keys and values.
  template <Communicator C>
  void backward(C& cp, std::span<float> delta) {
    require_rows(delta, "delta");
    const std::vector<float> d_o = to_heads(delta);
    std::vector<float> dq(d_o.size()), dk(d_o.size()), dv(d_o.size());
    attn_.backward(cp, d_o, dq, dk, dv);
    for (std::size_t i = 0; i < dq.size(); ++i) dq[i] += dk[i] + dv[i];
    add_rows(dq, delta);
  }

  //! Drops what the core kept for its backward (its queries, keys, values, output and each row's log-sum-exp),
  //! keeping only the block's input: Megatron-Core's selective recomputation (checkpoint_core_attention).
  void forget() { attn_ = parallel::ring_attention(shape_); }
  //! The core's forward again from the kept input, its keys and values around the ring again, for the backward
  //! that follows: the same arithmetic in the same order, so what it keeps is what the first forward kept.
  template <Communicator C>
  void rebuild(C& cp) {
    const std::vector<float> x = to_heads(in_);
    std::vector<float> o(x.size());
    attn_.forward(cp, x, x, x, o);
  }

  //! h before the block: the first layer's output, whose tanh' the backward pass takes.
  [[nodiscard]] std::span<const float> input() const noexcept { return in_; }

 private:
  static std::size_t checked(std::size_t sequences, std::size_t tokens, std::size_t features, std::size_t head_dim) {
    trinity::detail::require(sequences >= 1 && tokens >= 1, "tokens",
                             "an attention block holds at least one token of one sequence");
    trinity::detail::require(head_dim >= 1 && features % head_dim == 0, "head_dim",
                             std::to_string(head_dim) + " does not split the " + std::to_string(features) +
                                 " features into whole heads; give a head_dim that divides them");
    return sequences;
  }
  void require_rows(std::span<const float> rows, const char* name) const {
    trinity::detail::require(rows.size() == sequences_ * tokens_ * features_, name, [&] {
      return "holds " + std::to_string(rows.size()) + " values; the block's rows are " +
             std::to_string(sequences_ * tokens_) + " tokens of " + std::to_string(features_) + " features";
    });
  }
  // Row-major [sequence · tokens + i][head · dim + e] to ring_attention's head-major [sequence · heads + head][i][e].
  std::size_t row_major(std::size_t head_major) const {
    const std::size_t e = head_major % dim_, i = (head_major / dim_) % tokens_, sh = head_major / (dim_ * tokens_);
    const std::size_t s = sh / heads_, head = sh % heads_;
    return (s * tokens_ + i) * features_ + head * dim_ + e;
  }
  std::vector<float> to_heads(std::span<const float> rows) const {
    std::vector<float> x(rows.size());
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = rows[row_major(k)];
    return x;
  }
  void add_rows(const std::vector<float>& heads, std::span<float> rows) const {
    for (std::size_t k = 0; k < heads.size(); ++k) rows[row_major(k)] += heads[k];
  }

  std::size_t sequences_, tokens_, features_, dim_, heads_;
  parallel::attention_shape shape_;
  parallel::ring_attention attn_;
  std::vector<float> in_;
};

}  // namespace trinity::train
