#pragma once
//! \file
//! The reference trainer's multi-layer perceptron, forward and backward by hand, whose parameters live in a
//! shard::data_parallel: layer i is W_i (rows = its outputs) then b_i, flat. Hidden layers use tanh, the output is
//! linear, the loss is ½‖ŷ − y‖² averaged over the global batch, so the gradient each rank adds over its own samples
//! sums, across ranks, to the batch gradient. mlp_pass holds one rank's activations, charged to its memory ledger,
//! and recomputes the first layers in checkpointed groups (Megatron-Core's full recomputation).
//!
//!   train::mlp_shape shape{{16, 64, 64, 4}};
//!   train::mlp_pass pass(shape, samples, ledger, /*recomputed=*/2);
//!   pass.forward(0, params(0));  ...  pass.backward(l, params(l), grads(l), delta);

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <string>

#include <trinity/error.hpp>
#include <trinity/shard/ledger.hpp>
#include <trinity/train/seeded_draws.hpp>

namespace trinity::train {

struct mlp_shape {
  std::vector<std::size_t> widths;  // input, hidden..., output

  [[nodiscard]] std::size_t layers() const noexcept { return widths.size() - 1; }
  [[nodiscard]] std::size_t in(std::size_t l) const { return widths[l]; }
  [[nodiscard]] std::size_t out(std::size_t l) const { return widths[l + 1]; }
  [[nodiscard]] std::size_t layer_size(std::size_t l) const { return out(l) * (in(l) + 1); }
  [[nodiscard]] std::vector<std::size_t> layer_sizes() const {
    std::vector<std::size_t> s;
    for (std::size_t l = 0; l < layers(); ++l) s.push_back(layer_size(l));
    return s;
  }
  [[nodiscard]] std::size_t parameters() const {
    const auto s = layer_sizes();
    return std::accumulate(s.begin(), s.end(), std::size_t{0});
  }
};

//! LeCun-uniform weights and zero biases, the same on every rank (a pure function of the seed).
inline std::vector<float> initial_parameters(const mlp_shape& shape, std::uint64_t seed) {
  std::vector<float> p;
  for (std::size_t l = 0; l < shape.layers(); ++l) {
    const std::size_t in = shape.in(l), out = shape.out(l);
    const float bound = std::sqrt(3.0f / static_cast<float>(in));
    for (std::size_t i = 0; i < out * in; ++i) {
      p.push_back(detail::symmetric(detail::key(seed, 1000 + l, i, 0), bound));
    }
    p.insert(p.end(), out, 0.0f);
  }
  return p;
}

//! Activations of one rank's samples, booked in its ledger as activations. The first `recomputed` layers (whole
//! pairs 2j, 2j + 1) keep only their input, in checkpointed groups of `group` layers (a pair each under the block
//! method; Megatron-Core's uniform method groups pairs, a last group the layers left): an
//! activation inside a group (a layer's input but the group's first) exists only while a forward or a rebuild
//! needs it.
class mlp_pass {
 public:
  mlp_pass(const mlp_shape& shape, std::size_t samples, shard::memory_ledger& ledger, std::size_t recomputed = 0,
           std::size_t group = 2)
      : shape_(&shape),
        m_(samples),
        recomputed_(recomputed),
        group_(group),
        spare_(shard::tracking_allocator<float>(ledger, shard::state_kind::activations)) {
    trinity::detail::require(shape.widths.size() >= 2, "widths",
                             "a perceptron has an input width and an output width at least; give two or more");
    trinity::detail::require(group >= 1 && recomputed <= shape.layers(), "recomputed", [&] {
      return std::to_string(recomputed) + " layers in groups of " + std::to_string(group) + ", of a perceptron of " +
             std::to_string(shape.layers()) + "; give at most its layers, in groups of one or more";
    });
    for (std::size_t l = 0; l <= shape.layers(); ++l)
      acts_.emplace_back(rebuilt(l) ? 0 : samples * shape.widths[l], 0.0f,
                         shard::tracking_allocator<float>(ledger, shard::state_kind::activations));
  }

  //! Whether layer l's input is rebuilt in the backward rather than kept: inside a recomputed group.
  [[nodiscard]] bool rebuilt(std::size_t l) const noexcept { return l < recomputed_ && l % group_ != 0; }
  //! Whether layer l runs its forward again in the backward, and the first layer of its group.
  [[nodiscard]] bool recomputed(std::size_t l) const noexcept { return l < recomputed_; }
  [[nodiscard]] std::size_t group_first(std::size_t l) const noexcept { return l - l % group_; }
  //! Frees layer l's input (a rebuilt one, once its layer has run).
  void forget(std::size_t l) {
    acts_[l].clear();
    acts_[l].shrink_to_fit();
  }
  //! A recomputed group's forward again from its kept input (layer `first`'s), layer k's weights `params(k)`: each
  //! rebuilt activation, and the group's output into a spare, since the next layer keeps that one; `rebuilt_done`
  //! frees them. `after(k, output)`, where a block follows layer k (the attention block, the experts), runs it again
  //! on layer k's output in place.
  template <class Params, class After>
  void rebuild(std::size_t first, Params params, After after) {
    const std::size_t end = std::min(first + group_, recomputed_);
    for (std::size_t k = first; k < end; ++k) {
      const bool last = k + 1 == end;
      if (last) spare_.resize(m_ * shape_->out(k));
      forward(k, params(k), last ? std::span<float>(spare_) : std::span<float>());
      after(k, last ? std::span<float>(spare_) : std::span<float>(acts_[k + 1]));
    }
  }
  //! The output a rebuild ran again into the spare (its group's, which the next layer keeps as it was).
  [[nodiscard]] std::span<float> rebuilt_output() { return spare_; }
  //! After layer l's backward: its input goes where it was rebuilt, and the spare with its group's first layer.
  void rebuilt_done(std::size_t l) {
    if (rebuilt(l)) forget(l);
    if (recomputed(l) && l == group_first(l)) {
      spare_.clear();
      spare_.shrink_to_fit();
    }
  }
  //! The floats this pass keeps between its forward and backward, and the most a recomputed group rebuilds (its
  //! activations and its output again): what its ledger's activation peak is.
  [[nodiscard]] static std::size_t peak_floats(const mlp_shape& shape, std::size_t samples, std::size_t recomputed,
                                               std::size_t group = 2) {
    const std::size_t end = recomputed, per = group;
    std::size_t kept = 0, rebuilt = 0, now = 0;
    for (std::size_t l = 0; l <= shape.layers(); ++l) {
      if (l < end && l % per != 0)
        now += shape.widths[l];
      else
        kept += shape.widths[l];
      // A group ends before layer l: its rebuilt activations and its output, l's input, again.
      if (l > 0 && l <= end && (l % per == 0 || l == end))
        rebuilt = std::max(rebuilt, std::exchange(now, 0) + shape.widths[l]);
    }
    return samples * (kept + rebuilt);
  }

  [[nodiscard]] std::span<float> input() { return acts_[0]; }
  //! Layer l's output, as layer l + 1 takes it (a block between them changes it in place).
  [[nodiscard]] std::span<float> output_of(std::size_t l) { return acts_[l + 1]; }
  [[nodiscard]] std::span<const float> output() const { return acts_.back(); }

  //! a_{l+1} = act(a_l · Wᵀ + b), into `into` (a rebuilt pair's output, which the next layer already keeps) or,
  //! by default, a_{l+1}, allocated here where it is rebuilt.
  void forward(std::size_t l, std::span<const float> p, std::span<float> into = {}) {
    const std::size_t in = shape_->in(l), out = shape_->out(l);
    if (into.empty()) {
      acts_[l + 1].resize(m_ * out);
      into = acts_[l + 1];
    }
    const float* w = p.data();
    const float* b = p.data() + out * in;
    const bool last = l + 1 == shape_->layers();
    for (std::size_t s = 0; s < m_; ++s) {
      const float* a = acts_[l].data() + s * in;
      float* z = into.data() + s * out;
      for (std::size_t o = 0; o < out; ++o) {
        float acc = b[o];
        const float* row = w + o * in;
        for (std::size_t i = 0; i < in; ++i) acc += row[i] * a[i];
        z[o] = last ? acc : std::tanh(acc);
      }
    }
  }

  //! Given δ at layer l's output (m × out), adds this rank's gradient of W and b to g and, unless l is the
  //! first layer, turns δ into the δ at its input. `through`, where a block sits between layer l − 1 and l (the
  //! attention block), carries δ back through it in place and returns the activation tanh' is taken at (the
  //! block's input, not the output layer l saw).
  template <class Through = std::nullptr_t>
  void backward(std::size_t l, std::span<const float> p, std::span<float> g, std::vector<float>& delta,
                Through through = nullptr) {
    const std::size_t in = shape_->in(l), out = shape_->out(l);
    const float* a = acts_[l].data();
    float* gw = g.data();
    float* gb = g.data() + out * in;
    for (std::size_t s = 0; s < m_; ++s)
      for (std::size_t o = 0; o < out; ++o) {
        const float d = delta[s * out + o];
        float* row = gw + o * in;
        const float* as = a + s * in;
        for (std::size_t i = 0; i < in; ++i) row[i] += d * as[i];
        gb[o] += d;
      }
    if (l == 0) return;
    std::vector<float> prev(m_ * in, 0.0f);
    for (std::size_t s = 0; s < m_; ++s)
      for (std::size_t o = 0; o < out; ++o) {
        const float d = delta[s * out + o];
        const float* row = p.data() + o * in;
        float* ps = prev.data() + s * in;
        for (std::size_t i = 0; i < in; ++i) ps[i] += d * row[i];
      }
    std::span<const float> at(a, prev.size());
    if constexpr (!std::is_null_pointer_v<Through>) at = through(prev);
    for (std::size_t k = 0; k < prev.size(); ++k) prev[k] *= 1.0f - at[k] * at[k];  // tanh' at layer l − 1's output
    delta.swap(prev);
  }

 private:
  const mlp_shape* shape_;
  std::size_t m_, recomputed_, group_;  // layers recomputed (the first ones), and of a checkpointed group
  std::vector<shard::tracked_vector<float>> acts_;
  shard::tracked_vector<float> spare_;
};

}  // namespace trinity::train
