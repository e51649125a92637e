#pragma once
//! \file
//! A mixture's shared experts (--shared-experts N): N experts every token runs beside its routed ones, fused into
//! one MLP N experts wide (DeepSeek's and Qwen's, Megatron-Core's SharedExpertMLP). A column/row pair over the
//! stage's tensor group with relu between and no biases, its input all-gathered from the rank's sequence-parallel
//! rows and its output reduce-scattered back: one more all-reduce's bytes a pass over the tensor group, as the step
//! model's shared experts add (model::shared_expert_all_reduces). Their weights are dense: each tensor rank's slice
//! is shared by the ranks holding the same slice (data and context: rank_groups::weights) in a data_parallel over
//! them, under the run's ZeRO stage. moe_block holds them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

#include <trinity/comm/group.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/shard.hpp>
#include <trinity/train/any_reduction.hpp>
#include <trinity/train/expert_checkpoint.hpp>
#include <trinity/train/moe_parameters.hpp>

namespace trinity::train {

//! What a forward keeps for its backward: the tensor group's gathered input, and the activation.
struct shared_kept {
  std::vector<float> in, act;
};

template <class Scheme, class Group>
class shared_experts {
 public:
  //! `tp` the stage's tensor group, `weights` the ranks holding the same slice, `width` the fused width (N experts'),
  //! `hidden` the block's.
  shared_experts(Group& tp, Group& weights, shard::memory_ledger& ledger, std::size_t hidden, std::size_t width,
                 std::uint64_t seed, const shard::adam& opt, any_reduction<Group> reduction)
      : tp_(&tp),
        weights_(&weights),
        h_(hidden),
        width_(width),
        states_(weights, ledger, std::vector<std::size_t>{2 * local() * hidden}, initial(seed), opt,
                std::move(reduction)) {}

  //! This rank's rows of the experts' output on `in` (its rows; the tensor group's all gathered), `k` keeping the
  //! gathered input and the activation. `keep` leaves the weights gathered for a backward that follows at once (a
  //! recomputed forward's).
  std::vector<float> forward(std::span<const float> in, shared_kept& k, bool keep) {
    const std::size_t held = in.size() / h_, rows = held * ranks(), f = local();
    states_.acquire(0);
    const auto p = states_.parameters(0);
    const parallel::linear_part up{p.first(f * h_), {}}, down{p.subspan(f * h_), {}};
    k.act.assign(rows * f, 0.0f);
    parallel::column_forward(*tp_, up, in, k.in, k.act, rows, h_, tokens());
    for (auto& a : k.act) a = std::max(a, 0.0f);
    std::vector<float> y(held * h_);
    parallel::row_forward(*tp_, down, k.act, y, rows, f, tokens());
    held_ = keep;
    if (!keep) states_.release(0);
    return y;
  }
  //! δ at the experts' input from δ at their output (this rank's `rows` of the block's), their gradients added and,
  //! with `ready`, handed to their data_parallel.
  std::vector<float> backward(const shared_kept& k, std::span<const float> delta, bool ready) {
    const std::size_t held = delta.size() / h_, rows = held * ranks(), f = local();
    if (!std::exchange(held_, false)) states_.acquire(0);
    const auto p = states_.parameters(0);
    auto g = states_.gradient(0);
    const parallel::linear_part up{p.first(f * h_), {}}, down{p.subspan(f * h_), {}};
    std::vector<float> da(rows * f), dx(held * h_);
    parallel::row_backward(*tp_, down, k.act, delta, {g.subspan(f * h_), {}}, da, rows, f, tokens());
    for (std::size_t i = 0; i < da.size(); ++i)
      if (k.act[i] <= 0.0f) da[i] = 0.0f;  // relu'
    parallel::column_backward(*tp_, up, k.in, da, {g.first(f * h_), {}}, dx, rows, h_, tokens());
    if (ready) states_.gradient_ready(0);
    states_.release(0);
    return dx;
  }
  //! Drops what `k` kept (Megatron-Core's recompute module `shared_experts`); a forward with `keep` rebuilds it.
  static void forget(shared_kept& k) {
    std::vector<float>().swap(k.in);
    std::vector<float>().swap(k.act);
  }

  void gradient_ready() { states_.gradient_ready(0); }
  [[nodiscard]] bool saw_nonfinite() const noexcept { return states_.saw_nonfinite(); }
  shard::step_report step(const shard::adam& opt, bool also_skip) { return states_.step(opt, also_skip); }
  //! Writes this rank's slice into shared-experts-slice-<t>-of-<tp> of checkpoint `dir`.
  void save(const std::filesystem::path& dir) const {
    shard::write_checkpoint_piece(dir / shared_experts_directory(static_cast<std::size_t>(tp_->rank()), ranks()),
                                  states_, *weights_);
  }
  //! Restores what save() wrote over `saved` tensor ranks (shared_experts_saved_in): the steps taken.
  long load(const std::filesystem::path& dir, std::size_t saved) {
    return load_shared_experts(dir, states_, weights_->rank(), saved, h_, width_, ranks(),
                               static_cast<std::size_t>(tp_->rank()));
  }
  //! The weights this rank's tensor slice holds (before ZeRO shards them).
  [[nodiscard]] std::size_t parameters_per_rank() const noexcept { return 2 * local() * h_; }

 private:
  std::size_t ranks() const { return static_cast<std::size_t>(tp_->size()); }
  std::size_t local() const { return width_ / ranks(); }  // this tensor rank's part of the fused width
  parallel::tokens tokens() const {
    return tp_->size() > 1 ? parallel::tokens::sequence_parallel : parallel::tokens::all;
  }
  std::vector<float> initial(std::uint64_t seed) const {
    const auto w = detail::initial_shared(h_, width_, seed);
    std::vector<float> mine;
    for (const auto k : expert_slice_indices(h_, width_, ranks(), static_cast<std::size_t>(tp_->rank())))
      mine.push_back(w[k]);
    return mine;
  }

  Group* tp_;
  Group* weights_;
  std::size_t h_, width_;
  shard::data_parallel<Scheme, Group, any_reduction<Group>> states_;
  bool held_ = false;  // a recomputed forward's weights, gathered for the backward that follows it
};

}  // namespace trinity::train
