#pragma once
//! \file
//! The mixture-of-experts block trinity-train puts after its second layer (--experts), where a transformer's MLP
//! output is: h ← h + Σ w_k·FFN_k(h) over each token's top_k experts (parallel/expert_parallel.hpp's layer:
//! y = W2·relu(W1·x) an expert), the router a width × experts matrix whose softmax over the k picks and weighs them
//! (Mixtral's). With --balanced-routing the router is replaced by a fixed assignment that spreads every rank's
//! tokens evenly over the experts, each weighed 1/k (NeMo's benchmarks force the balance so): what the step
//! model's all-to-all count assumes.
//!
//! The block lives on the pipeline stage holding that layer, and its tp·cp·dp ranks are regrouped as Megatron-Core
//! folds them (parallel::groups_of): expert-tensor innermost, then expert-parallel, then expert-data-parallel,
//! rank t + etp·(e + ep·d) of the stage. Each rank holds experts/ep experts, each of them its 1/etp slice of the
//! width (--etp, expert tensor parallelism); its tokens' rows go to the ranks of their experts and back, an
//! all-to-all over its expert group (the ep ranks of its t and d), and with etp > 1 its tensor group (the etp
//! ranks of its e and d) gathers its members' rows and sums their slices' outputs back. The router's weights are
//! dense, shared by every rank of the stage in a data_parallel over it; the experts' are shared by the ranks that
//! hold the same slices (the expert-data-parallel group: the ranks of its t and e) in a data_parallel over that
//! group, each under the run's ZeRO stage, as Megatron-Core shards them. The exchange is the config's dispatcher
//! (token_dispatch.hpp): the all-to-all, or DeepEP's deduplicated by node (--dispatcher deepep, etp = 1).
//!
//! With --shared-experts N every token also runs N shared experts beside the routed ones (shared_experts.hpp).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <trinity/comm/group.hpp>
#include <trinity/parallel/expert_parallel.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/parallel/tensor_slice.hpp>
#include <trinity/shard.hpp>
#include <trinity/train/any_reduction.hpp>
#include <trinity/train/expert_checkpoint.hpp>
#include <trinity/train/moe_parameters.hpp>
#include <trinity/train/shared_experts.hpp>
#include <trinity/train/token_dispatch.hpp>

namespace trinity::train {

//! What one forward pass through the block keeps for its backward: the block's input, the router's logits and
//! the exchange's pass, and the shared experts' gathered input and activation. A pipeline keeps one a micro-batch
//! in flight.
struct moe_kept {
  std::vector<float> in, logits;
  dispatch_pass pass;
  shared_kept shared;
};

//! The block and its states. Every rank of a pipeline stage that holds it constructs it, with the same arguments:
//! `g` its expert groups (parallel::groups_of), `stage` the stage's ranks, over which the router's weights live.
template <class Scheme, class Comm>
class moe_block {
 public:
  using group = comm::group<Comm>;

  moe_block(Comm& c, const parallel::rank_groups& g, std::vector<int> stage, shard::memory_ledger& ledger,
            const moe_config& m, std::size_t width, std::uint64_t seed, const shard::adam& opt,
            const group_reductions<Comm>& reductions)
      : cfg_(m),
        shape_{.hidden = width,
               .ffn_hidden = m.expert_width ? m.expert_width : width,
               .experts = m.experts,
               .top_k = m.top_k,
               .capacity_factor = m.capacity_factor > 0
                                      ? m.capacity_factor
                                      : static_cast<double>(m.experts) / static_cast<double>(m.top_k)},
        local_(m.experts / m.ep),
        ep_(c, g.expert),
        etp_(c, g.expert_tensor),
        edp_(c, g.expert_data),
        stage_(c, std::move(stage)),
        tp_(c, g.tp),
        weights_(c, g.weights),
        experts_(edp_, ledger, std::vector<std::size_t>(local_, 2 * shape_.ffn_hidden / m.etp * width),
                 initial_local(seed), opt, reductions()) {
    if (const auto* d = std::get_if<node_dispatch>(&m.dispatch))
      trinity::detail::require(m.etp == 1 && d->node_ranks >= 1 && m.ep % d->node_ranks == 0, "node_ranks", [&] {
        return std::to_string(d->node_ranks) + " ranks a node, with etp " + std::to_string(m.etp) + " and ep " +
               std::to_string(m.ep) + "; the node-deduplicated dispatcher takes etp=1 and a divisor of ep";
      });
    if (!m.balanced)
      router_.emplace(stage_, ledger, std::vector<std::size_t>{m.experts * width},
                      detail::initial_router(m.experts, width, seed), opt, reductions());
    if (m.shared_experts > 0)
      shared_.emplace(tp_, weights_, ledger, width, m.shared_experts * shape_.ffn_hidden, seed, opt, reductions());
  }

  //! h ← h + the experts' weighted outputs, in place; `ids[i]` is row i's index in the global batch (what
  //! balanced routing assigns by). Returns what the backward pass needs. `again` runs a recomputed block's forward
  //! in its backward: the same dispatch and combine a second time, counted as one pass more, and the weights left
  //! gathered for the backward that follows (ZeRO-3 gathers them once for both, as for the dense layers).
  moe_kept forward(std::span<float> h, std::span<const std::size_t> ids, bool again = false) {
    const std::size_t rows = h.size() / shape_.hidden;
    moe_kept k;
    k.in.assign(h.begin(), h.end());
    k.logits = logits(k.in, ids, again);
    const auto r = parallel::route_top_k(k.logits, rows, shape_);
    const auto local = acquire_experts(true);
    std::vector<float> y(h.size());
    std::visit(
        [&](const auto& d) {
          auto& pass = k.pass.template emplace<typename std::decay_t<decltype(d)>::pass>();
          d.forward(ep_, etp_, shape_, std::span<const parallel::expert_weights>(local), std::span<const float>(k.in),
                    r, std::span<float>(y), pass);
        },
        cfg_.dispatch);
    if (!again) release_experts();
    held_ = again;
    for (std::size_t i = 0; i < h.size(); ++i) h[i] += y[i];
    if (shared_) {
      const auto ys = shared_->forward(k.in, k.shared, again);
      for (std::size_t i = 0; i < h.size(); ++i) h[i] += ys[i];
    }
    count_rows(k.pass, again);
    return k;
  }

  //! Drops what `k` kept for the backward but the block's input: the router's logits and the exchange's pass, the
  //! rows it dispatched and the experts' activations among them (Megatron-Core's recompute module `moe`).
  static void forget(moe_kept& k) {
    std::vector<float>().swap(k.logits);
    k.pass = dispatch_pass{};
    forget_shared(k);
  }
  //! Drops what the shared experts kept, their gathered input and activation (Megatron-Core's recompute module
  //! `shared_experts`); rebuild_shared runs them again from the block's input.
  static void forget_shared(moe_kept& k) { shared_experts<Scheme, group>::forget(k.shared); }
  //! The shared experts' forward again from the input `k` kept, their collectives too, for the backward that
  //! follows; their output is not needed again. Their weights stay gathered for that backward (ZeRO-3).
  void rebuild_shared(moe_kept& k) { shared_->forward(k.in, k.shared, /*keep=*/true); }
  //! The block's forward again from the input `k` kept, for the backward that follows: its router, dispatch and
  //! combine a second time (forward with `again`), what it keeps the same as the first forward kept.
  moe_kept rebuild(const moe_kept& k, std::span<const std::size_t> ids) {
    std::vector<float> h = k.in;  // the forward adds the experts' outputs to it; the output is not needed again
    return forward(h, ids, /*again=*/true);
  }

  //! δ at the block's output ← δ at its input (the residual's, the experts' and the router's), the gradients
  //! added to the two data_parallels' and, with `ready` (one pass a step), handed to them as ready; a pipeline
  //! leaves them to step(). Returns the block's input, where the layer before takes tanh'.
  std::span<const float> backward(const moe_kept& k, std::vector<float>& delta, bool ready) {
    const std::size_t rows = k.in.size() / shape_.hidden, h = shape_.hidden, E = shape_.experts;
    // The shared experts take δ at the block's output, before the routed experts' δ joins it.
    const auto shared_dx = shared_ ? shared_->backward(k.shared, delta, ready) : std::vector<float>();
    const bool gather = !std::exchange(held_, false);  // a recomputed forward left them gathered
    auto local = acquire_experts(gather);
    std::vector<parallel::expert_weights> dlocal(local_);
    for (auto& d : dlocal) d = {std::vector<float>(local[0].w1.size()), std::vector<float>(local[0].w2.size())};
    std::vector<float> dx(delta.size()), dlogits(rows * E);
    std::visit(
        [&](const auto& d) {
          d.backward(ep_, etp_, shape_, std::span<const parallel::expert_weights>(local),
                     std::get<typename std::decay_t<decltype(d)>::pass>(k.pass), std::span<const float>(delta),
                     std::span<float>(dx), std::span<parallel::expert_weights>(dlocal), std::span<float>(dlogits));
        },
        cfg_.dispatch);
    for (std::size_t q = 0; q < local_; ++q) {
      auto g = experts_.gradient(q);
      const auto& d = dlocal[q];
      for (std::size_t i = 0; i < d.w1.size(); ++i) g[i] += d.w1[i];
      for (std::size_t i = 0; i < d.w2.size(); ++i) g[d.w1.size() + i] += d.w2[i];
      if (ready) experts_.gradient_ready(q);
      experts_.release(q);
    }
    for (std::size_t i = 0; i < delta.size(); ++i) delta[i] += dx[i];
    for (std::size_t i = 0; i < shared_dx.size(); ++i) delta[i] += shared_dx[i];
    if (router_) {
      // logits = h·Wrᵀ: dWr += dlogitsᵀ·h, and δ at h gains dlogits·Wr.
      if (gather) router_->acquire(0);
      const auto w = router_->parameters(0);
      auto g = router_->gradient(0);
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t e = 0; e < E; ++e) {
          const float d = dlogits[t * E + e];
          for (std::size_t i = 0; i < h; ++i) {
            g[e * h + i] += d * k.in[t * h + i];
            delta[t * h + i] += d * w[e * h + i];
          }
        }
      if (ready) router_->gradient_ready(0);
      router_->release(0);
    }
    return k.in;
  }

  //! Marks every expert's and the router's gradient ready, where a pipeline's passes left them to the step.
  void finish_gradients() {
    for (std::size_t q = 0; q < local_; ++q) experts_.gradient_ready(q);
    if (router_) router_->gradient_ready(0);
    if (shared_) shared_->gradient_ready();
  }
  //! Whether a gradient of the block this rank marked ready this step held NaN or Inf.
  [[nodiscard]] bool saw_nonfinite() const noexcept {
    return experts_.saw_nonfinite() || (router_ && router_->saw_nonfinite()) || (shared_ && shared_->saw_nonfinite());
  }
  //! The optimizer step of the experts' and the router's states; skipped where either skips, or everywhere with
  //! `also_skip` (the model's vote over every rank: shard::data_parallel::step). The step's exchange counts
  //! become counted() and dropped().
  shard::step_report step(const shard::adam& opt, bool also_skip = false) {
    auto r = experts_.step(opt, also_skip);
    if (router_) add_step(r, router_->step(opt, also_skip));
    if (shared_) add_step(r, shared_->step(opt, also_skip));
    step_counted_ = std::exchange(counted_, 0);
    step_dropped_ = std::exchange(dropped_, 0);
    return r;
  }

  //! Writes the block's states into checkpoint directory `dir`, beside the dense layers' files: the router's over
  //! the stage into dir/router, and every expert-data-parallel group's experts into the directory of its
  //! expert-parallel rank and slice (experts_directory), each expert one layer of it, sharded as the run
  //! shards them. Every rank of the stage calls it.
  void save(const std::filesystem::path& dir) const {
    if (router_) shard::write_checkpoint_piece(dir / "router", *router_, stage_);
    if (shared_) shared_->save(dir);
    shard::write_checkpoint_piece(dir / experts_directory(static_cast<std::size_t>(ep_.rank()), cfg_.ep,
                                                          static_cast<std::size_t>(etp_.rank()), cfg_.etp),
                                  experts_, edp_);
  }
  //! Restores the states save() wrote, at any expert-parallel size, expert-tensor-parallel size and number of
  //! expert-data-parallel replicas: expert e is layer e mod E/ep' of the directories of rank e / (E/ep') of the
  //! ep' it was saved at, one a slice; slices saved over another --etp are joined and re-cut (shard::recut).
  //! Returns the steps the experts had taken.
  long load(const std::filesystem::path& dir) {
    const long steps = load_routed_experts(dir, experts_, edp_.rank(),
                                           {.experts = cfg_.experts,
                                            .hidden = shape_.hidden,
                                            .ffn_hidden = shape_.ffn_hidden,
                                            .ep = cfg_.ep,
                                            .etp = cfg_.etp,
                                            .ep_rank = static_cast<std::size_t>(ep_.rank()),
                                            .etp_rank = static_cast<std::size_t>(etp_.rank())});
    const bool has_router = std::filesystem::is_directory(dir / "router");
    if (has_router != router_.has_value())
      throw invalid_input("--balanced-routing", dir.string() + (has_router ? " holds a router's states, which balanced "
                                                                             "routing has none of. Fix: drop "
                                                                             "--balanced-routing"
                                                                           : " was saved under balanced routing, "
                                                                             "with no router. Fix: add "
                                                                             "--balanced-routing"));
    if (router_ && shard::load_checkpoint_piece(dir / "router", *router_, stage_.rank()) != steps)
      throw invalid_input("checkpoint",
                          "the router's and the experts' files of " + dir.string() + " come from different runs");
    if (load_shared(dir, steps) != steps)
      throw invalid_input("checkpoint",
                          "the shared and the routed experts' files of " + dir.string() + " come from different runs");
    return steps;
  }

  //! Bytes this rank sent over its expert group and its expert tensor group so far.
  [[nodiscard]] std::uint64_t sent() const noexcept { return ep_.bytes_sent() + etp_.bytes_sent(); }
  //! Bytes this rank sent over its tensor group so far: the shared experts' collectives.
  [[nodiscard]] std::uint64_t tensor_sent() const noexcept { return tp_.bytes_sent(); }
  //! Bytes this rank sent over the block's data-parallel groups: the experts' (their gradient reductions and
  //! ZeRO's gathers), the router's and the shared experts'.
  [[nodiscard]] std::uint64_t data_sent() const noexcept {
    return edp_.bytes_sent() + stage_.bytes_sent() + weights_.bytes_sent();
  }
  //! What the exchange's count says this rank sent in the last step's passes: each pass's row counts ahead of
  //! the dispatch, and every row to or from another rank twice (forward, then its gradient backward); with
  //! etp > 1 its tensor group's counts and gathered and summed rows (parallel::expert_tensor_bytes), each way.
  [[nodiscard]] std::uint64_t counted() const noexcept { return step_counted_; }
  //! The step model's count of the bytes one pass of `rows` tokens a rank sends under balanced routing, as the
  //! dispatcher models it (all_to_all_dispatch::modelled_bytes); none for the node-deduplicated one.
  [[nodiscard]] std::optional<double> modelled(std::size_t rows, bool recomputed) const {
    if (!model_counts(cfg_.dispatch)) return std::nullopt;
    return all_to_all_dispatch::modelled_bytes(shape_, cfg_.ep, cfg_.etp, rows, recomputed);
  }
  //! Assignments dropped at an expert's capacity in the last step's passes.
  [[nodiscard]] std::size_t dropped() const noexcept { return step_dropped_; }
  [[nodiscard]] std::size_t parameters_per_rank() const noexcept {
    return local_ * 2 * shape_.ffn_hidden / cfg_.etp * shape_.hidden + (router_ ? shape_.experts * shape_.hidden : 0);
  }
  //! The shared experts' weights this rank's tensor slice holds (before ZeRO shards them).
  [[nodiscard]] std::size_t shared_parameters_per_rank() const noexcept {
    return shared_ ? shared_->parameters_per_rank() : 0;
  }

 private:
  // This rank's experts, each its tensor rank's slice.
  std::vector<float> initial_local(std::uint64_t seed) const {
    std::vector<float> all;
    const std::size_t first = static_cast<std::size_t>(ep_.rank()) * local_;
    const auto at =
        expert_slice_indices(shape_.hidden, shape_.ffn_hidden, cfg_.etp, static_cast<std::size_t>(etp_.rank()));
    for (std::size_t q = 0; q < local_; ++q) {
      const auto w = detail::initial_expert(first + q, shape_.hidden, shape_.ffn_hidden, seed);
      for (const auto k : at) all.push_back(w[k]);
    }
    return all;
  }
  // The router's logits for the block's input `in`, or under balanced routing balanced_logits.
  std::vector<float> logits(std::span<const float> in, std::span<const std::size_t> ids, bool keep) {
    if (!router_) return balanced_logits(ids.first(in.size() / shape_.hidden), shape_.experts, shape_.top_k);
    const std::size_t h = shape_.hidden, E = shape_.experts, rows = in.size() / h;
    std::vector<float> z(rows * E, 0.0f);
    router_->acquire(0);
    const auto w = router_->parameters(0);
    for (std::size_t t = 0; t < rows; ++t)
      for (std::size_t e = 0; e < E; ++e) {
        float acc = 0;
        for (std::size_t i = 0; i < h; ++i) acc += w[e * h + i] * in[t * h + i];
        z[t * E + e] = acc;
      }
    if (!keep) router_->release(0);
    return z;
  }
  // This rank's experts' weights, gathered first (ZeRO-3) unless a recomputed forward left them so.
  std::vector<parallel::expert_weights> acquire_experts(bool gather) {
    std::vector<parallel::expert_weights> local(local_);
    const std::size_t half = shape_.ffn_hidden / cfg_.etp * shape_.hidden;
    for (std::size_t q = 0; q < local_; ++q) {
      if (gather) experts_.acquire(q);
      const auto p = experts_.parameters(q);
      local[q].w1.assign(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(half));
      local[q].w2.assign(p.begin() + static_cast<std::ptrdiff_t>(half), p.end());
    }
    return local;
  }
  void release_experts() {
    for (std::size_t q = 0; q < local_; ++q) experts_.release(q);
  }

  // Restores the shared experts' states save() wrote, at any tensor-parallel size, and refuses a checkpoint that
  // has them where the run has none, or the other way round. Returns the steps they had taken: `routed`, the routed
  // experts', where the run has none.
  long load_shared(const std::filesystem::path& dir, long routed) {
    const std::size_t saved = shared_experts_saved_in(dir);
    if ((saved > 0) != shared_.has_value())
      throw invalid_input("--shared-experts", dir.string() + (saved > 0 ? " holds shared experts, which this run has "
                                                                          "none of. Fix: --shared-experts as saved"
                                                                        : " holds no shared experts. Fix: drop "
                                                                          "--shared-experts, or load a checkpoint of "
                                                                          "a run with them"));
    if (!shared_) return routed;
    return shared_->load(dir, saved);
  }
  // Adds what the forward just run sends, and its backward will (the dispatcher's count of its pass). A
  // recomputed forward (`again`) adds only itself, counts and all, and no dropped assignment twice.
  void count_rows(const dispatch_pass& pass, bool again) {
    counted_ += std::visit(
        [&](const auto& d) {
          using policy = std::decay_t<decltype(d)>;
          return policy::bytes_of(std::get<typename policy::pass>(pass), shape_, static_cast<std::size_t>(ep_.rank()),
                                  cfg_.ep, static_cast<std::size_t>(etp_.rank()), cfg_.etp, again);
        },
        cfg_.dispatch);
    if (!again)
      for (const auto k : routing_of(pass).kept) dropped_ += k == 0;
  }

  moe_config cfg_;
  parallel::moe_shape shape_;
  std::size_t local_;
  group ep_, etp_, edp_, stage_, tp_, weights_;
  shard::data_parallel<Scheme, group, any_reduction<group>> experts_;
  std::optional<shard::data_parallel<Scheme, group, any_reduction<group>>> router_;
  std::optional<shared_experts<Scheme, group>> shared_;
  std::uint64_t counted_ = 0, step_counted_ = 0;
  std::size_t dropped_ = 0, step_dropped_ = 0;
  bool held_ = false;  // a recomputed forward's weights, gathered for the backward that follows it
};

//! Emplaces into `moe` the block of the pipeline stage whose `ranks` consecutive ranks start at `first` (this rank
//! among them), its expert groups `g` regrouped from them.
template <class Scheme, class Comm>
void emplace_experts(std::optional<moe_block<Scheme, Comm>>& moe, Comm& c, const parallel::rank_groups& g,
                     std::size_t first, std::size_t ranks, shard::memory_ledger& ledger, const moe_config& m,
                     std::size_t width, std::uint64_t seed, const shard::adam& opt,
                     const group_reductions<Comm>& reductions) {
  std::vector<int> members(ranks);
  std::iota(members.begin(), members.end(), static_cast<int>(first));
  moe.emplace(c, g, std::move(members), ledger, m, width, seed, opt, reductions);
}

//! The expert groups of a world of data-parallel ranks: one pipeline stage, no tensor or context parallelism.
inline parallel::rank_groups data_parallel_expert_groups(int world, int rank, const moe_config& m) {
  model::parallel_layout l;
  l.dp = static_cast<std::size_t>(world);
  l.ep = m.ep;
  l.etp = m.etp;
  return parallel::groups_of(l, world, rank);
}

}  // namespace trinity::train
