#pragma once
//! \file
//! One step's forward and backward through the reference trainer's perceptron on a rank of its data-parallel loop
//! (no pipeline, no tensor split): each layer's weights acquired, run and released in turn, the attention block
//! after the first layer over the rank's own tokens, the experts' block after the second, the loss ½‖ŷ − y‖²
//! averaged over the global batch's tokens, then the backward in reverse, each layer's gradient handed to the
//! data_parallel as it is ready. Recomputed groups run again from their kept input when the backward reaches them,
//! their weights acquired once for both passes (ZeRO-3 gathers each once, as FSDP does under activation
//! checkpointing), the blocks after them with them.
//!
//!   train::mlp_pass pass(shape, rows, ledger, cfg.recomputed_layers(shape.layers()), cfg.group_layers());
//!   const double loss = train::forward_backward(dp, c, self, cfg, shape, task, pass, samples, step);

#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include <trinity/comm/group.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/train/attention_block.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/moe_block.hpp>
#include <trinity/train/teacher_task.hpp>

namespace trinity::train {

//! The pass of one step: `dp` the layers' states, `self` this rank alone (the attention block's context group),
//! `moe` the experts' block, or null (Experts = std::nullptr_t: the run has none).
template <class DP, class Comm, class Experts = std::nullptr_t>
class data_parallel_pass {
 public:
  data_parallel_pass(DP& dp, Comm& c, comm::group<Comm>& self, const config& cfg, const mlp_shape& shape,
                     mlp_pass& pass, Experts* moe = nullptr)
      : dp_(&dp),
        c_(&c),
        self_(&self),
        cfg_(&cfg),
        shape_(&shape),
        pass_(&pass),
        moe_(moe),
        rebuilt_groups_(shape.layers(), false) {}

  //! Step t's forward and backward over this rank's samples of the global batch: its summed loss.
  double run(const teacher_task& task, const comm::partition& samples, long t) {
    load_batch(task, samples, t);
    forward();
    const double loss = output_delta();
    for (std::size_t l = shape_->layers(); l-- > 0;) layer_backward(l, t);
    return loss;
  }

 private:
  static constexpr bool has_experts = !std::is_null_pointer_v<Experts>;

  // Row s is token s % S of sequence s / S: task sample (first + s / S)·S + s % S; ids are the rows' indices in the
  // global batch (what balanced routing assigns by).
  void load_batch(const teacher_task& task, const comm::partition& samples, long t) {
    const std::size_t S = cfg_->sequence, first = samples.begin(c_->rank()) * S;
    mine_ = samples.size(c_->rank());
    const std::size_t rows = mine_ * S;
    targets_.assign(rows * cfg_->outputs, 0.0f);
    for (std::size_t s = 0; s < rows; ++s)
      task.sample(static_cast<std::uint64_t>(t), first + s, pass_->input().subspan(s * cfg_->inputs, cfg_->inputs),
                  std::span<float>(targets_).subspan(s * cfg_->outputs, cfg_->outputs));
    ids_.resize(rows);
    std::iota(ids_.begin(), ids_.end(), first);
  }
  void new_block() { block_.emplace(mine_, cfg_->sequence, shape_->out(0), shape_->out(0) / cfg_->heads); }

  void forward() {
    if (cfg_->attention()) new_block();
    for (std::size_t l = 0; l < shape_->layers(); ++l) {
      dp_->acquire(l);
      pass_->forward(l, dp_->parameters(l));
      dp_->release(l);
      if (pass_->rebuilt(l)) pass_->forget(l);  // a recomputed pair's middle, rebuilt in the backward
      if (l == 0 && block_) {
        block_->forward(*self_, pass_->output_of(0));
        if (cfg_->recompute_attention) block_->forget();  // its core runs again when the backward reaches it
        if (pass_->rebuilt(1)) block_.reset();            // it runs again with the first pair
      }
      if constexpr (has_experts)
        if (l == 1 && moe_) {
          kept_ = moe_->forward(pass_->output_of(1), ids_);
          if (pass_->rebuilt(1)) kept_.reset();               // the experts end the first pair: they run again with it
          if (cfg_->recompute_experts) moe_->forget(*kept_);  // their input alone, the block run again backward
          if (cfg_->recompute_shared) moe_->forget_shared(*kept_);
        }
    }
  }

  // Loss and δ at the output: ½‖ŷ − y‖², averaged over the global batch's tokens.
  double output_delta() {
    double loss = 0;
    delta_.resize(targets_.size());
    const auto yhat = pass_->output();
    for (std::size_t k = 0; k < delta_.size(); ++k) {
      const float d = yhat[k] - targets_[k];
      loss += 0.5 * static_cast<double>(d) * d;
      delta_[k] = d / static_cast<float>(cfg_->tokens());
    }
    return loss;
  }

  // A recomputed group again from its kept input, each layer's weights acquired once for it and their backwards, the
  // attention block after layer 0 (a new one, its state the first forward's) and the experts after layer 1 with it.
  void rebuild_group(std::size_t first) {
    for (std::size_t k = first; k < shape_->layers() && pass_->recomputed(k) && pass_->group_first(k) == first; ++k)
      dp_->acquire(k);
    pass_->rebuild(
        first, [&](std::size_t k) { return dp_->parameters(k); },
        [&](std::size_t k, std::span<float> out) {
          if (k == 0 && cfg_->attention()) {
            new_block();
            block_->forward(*self_, out);
          }
          if constexpr (has_experts)
            if (k == 1 && moe_) kept_ = moe_->forward(out, ids_, /*again=*/true);
        });
    rebuilt_groups_[first] = true;
  }

  // Layer l's backward, δ carried back through the block before it where one sits there; `t` the step (where
  // --inject-nan puts a NaN in the first layer's gradient).
  void layer_backward(std::size_t l, long t) {
    // The experts follow layer 1 and layer 2's backward carries δ through them: where layer 1's group ends there
    // (layer 2's input is kept), that group runs again, the experts after it, before layer 2's backward.
    if constexpr (has_experts)
      if (moe_ && l == 2 && pass_->rebuilt(1) && !pass_->rebuilt(2)) rebuild_group(0);
    // A recomputed group runs again when the backward reaches its last layer.
    if (pass_->recomputed(l) && !rebuilt_groups_[pass_->group_first(l)])
      rebuild_group(pass_->group_first(l));
    else if (!pass_->recomputed(l))
      dp_->acquire(l);
    auto g = dp_->gradient(l);
    if (l == 1 && block_) {
      pass_->backward(l, dp_->parameters(l), g, delta_, [&](std::vector<float>& d) {
        if (cfg_->recompute_attention) block_->rebuild(*self_);
        block_->backward(*self_, d);
        return block_->input();
      });
    } else if (l == 2 && kept_) {
      if constexpr (has_experts)
        pass_->backward(l, dp_->parameters(l), g, delta_, [&](std::vector<float>& d) {
          if (cfg_->recompute_experts) kept_ = moe_->rebuild(*kept_, ids_);
          if (cfg_->recompute_shared) moe_->rebuild_shared(*kept_);
          return moe_->backward(*kept_, d, /*ready=*/true);
        });
    } else {
      pass_->backward(l, dp_->parameters(l), g, delta_);
    }
    if (t == cfg_->inject_nan_step && c_->rank() == cfg_->inject_nan_rank && l == 0)
      g[0] = std::numeric_limits<float>::quiet_NaN();
    dp_->gradient_ready(l);
    dp_->release(l);
    pass_->rebuilt_done(l);
  }

  DP* dp_;
  Comm* c_;
  comm::group<Comm>* self_;
  const config* cfg_;
  const mlp_shape* shape_;
  mlp_pass* pass_;
  Experts* moe_;
  std::size_t mine_ = 0;  // this rank's samples
  std::vector<float> targets_, delta_;
  std::vector<std::size_t> ids_;
  std::optional<attention_block> block_;
  std::optional<moe_kept> kept_;
  std::vector<bool> rebuilt_groups_;  // by their first layer
};

//! One step's forward and backward through the perceptron, each layer's gradient handed to dp as it is ready: the
//! step's summed loss on this rank. The caller owns `pass`, whose activations stay charged to the ledger until the
//! optimizer step is done, as the recorded peaks count them.
template <class DP, class Comm, class Experts = std::nullptr_t>
double forward_backward(DP& dp, Comm& c, comm::group<Comm>& self, const config& cfg, const mlp_shape& shape,
                        const teacher_task& task, mlp_pass& pass, const comm::partition& samples, long t,
                        Experts* moe = nullptr) {
  return data_parallel_pass<DP, Comm, Experts>(dp, c, self, cfg, shape, pass, moe).run(task, samples, t);
}

}  // namespace trinity::train
