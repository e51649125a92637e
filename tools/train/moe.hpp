#pragma once
// The mixture-of-experts block trinity-train puts after its second layer (--experts), where a transformer's MLP
// output is: h ← h + Σ w_k·FFN_k(h) over each token's top_k experts (parallel/expert_parallel.hpp's layer:
// y = W2·relu(W1·x) an expert), the router a width × experts matrix whose softmax over the k picks and weighs them
// (Mixtral's). With --balanced-routing the router is replaced by a fixed assignment that spreads every rank's
// tokens evenly over the experts, each weighed 1/k (NeMo's benchmarks force the balance so): what the step
// model's all-to-all count assumes.
//
// The block lives on the pipeline stage holding that layer, and its tp·cp·dp ranks are regrouped as Megatron-Core
// folds them (parallel::groups_of): expert-tensor innermost, then expert-parallel, then expert-data-parallel,
// rank t + etp·(e + ep·d) of the stage. Each rank holds experts/ep experts, each of them its 1/etp slice of the
// width (--etp, expert tensor parallelism); its tokens' rows go to the ranks of their experts and back, an
// all-to-all over its expert group (the ep ranks of its t and d), and with etp > 1 its tensor group (the etp
// ranks of its e and d) gathers its members' rows and sums their slices' outputs back. The router's weights are
// dense, shared by every rank of the stage in a data_parallel over it; the experts' are shared by the ranks that
// hold the same slices (the expert-data-parallel group: the ranks of its t and e) in a data_parallel over that
// group, each under the run's ZeRO stage, as Megatron-Core shards them.
//
// With --shared-experts N every token also runs N shared experts, fused into one MLP N experts wide (DeepSeek's
// and Qwen's, Megatron-Core's SharedExpertMLP) beside the routed ones: a column/row pair over the stage's tensor
// group with relu between and no biases, its input all-gathered from the rank's sequence-parallel rows and its
// output reduce-scattered back, one more all-reduce's bytes a pass over the tensor group, as the step model's
// shared experts add (model::shared_expert_all_reduces). Their weights are dense: each tensor rank's slice is
// shared by the ranks holding the same slice (data and context: rank_groups::weights) in a data_parallel over them.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/comm/group.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/parallel/expert_parallel.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/parallel/tensor_slice.hpp>
#include <trinity/shard.hpp>
#include <trinity/shard/layer_values.hpp>

#include "any_reduction.hpp"
#include "checkpoint_layout.hpp"
#include "task.hpp"

namespace trinity::train {

struct moe_config {
  std::size_t experts = 0;         // --experts: 0, no block
  std::size_t top_k = 2;           // --top-k
  std::size_t ep = 1;              // --ep: ranks an expert group spreads the experts over
  std::size_t etp = 1;             // --etp: ranks each expert's width splits over
  std::size_t expert_width = 0;    // --expert-width: an expert's FFN width (0: the MLP's --width)
  double capacity_factor = 0;      // --capacity-factor: 0 dropless
  bool balanced = false;           // --balanced-routing
  std::size_t shared_experts = 0;  // --shared-experts: experts every token runs beside its routed ones
};

//! Adds `from`'s step to `into`: skipped where either skipped, the offload tier's bytes of both.
inline void add_step(shard::step_report& into, const shard::step_report& from) {
  into.skipped = into.skipped || from.skipped;
  into.offload_bytes += from.offload_bytes;
}

namespace detail {
// Expert e's W1 (f × h, bound √(3/h)) and W2 (h × f, bound √(3/f)), LeCun-uniform and a pure function of the
// seed and e: the same weights whichever rank holds the expert.
inline std::vector<float> initial_expert(std::size_t e, std::size_t h, std::size_t f, std::uint64_t seed) {
  std::vector<float> w(2 * f * h);
  const auto draw = [&](std::size_t i, std::size_t which, float bound) {
    const double u = static_cast<double>(splitmix64(key(seed, 3000 + e, i, which)) >> 11) * 0x1p-53;
    return static_cast<float>((2.0 * u - 1.0) * bound);
  };
  for (std::size_t i = 0; i < f * h; ++i) w[i] = draw(i, 0, std::sqrt(3.0f / static_cast<float>(h)));
  for (std::size_t i = 0; i < h * f; ++i) w[f * h + i] = draw(i, 1, std::sqrt(3.0f / static_cast<float>(f)));
  return w;
}
// The shared experts' W1 (f × h) and W2 (h × f), f their fused width: drawn as an expert's, under an index no
// routed expert has.
inline std::vector<float> initial_shared(std::size_t h, std::size_t f, std::uint64_t seed) {
  return initial_expert(std::size_t{1} << 20, h, f, seed);
}
inline std::vector<float> initial_router(std::size_t experts, std::size_t h, std::uint64_t seed) {
  std::vector<float> w(experts * h);
  const float bound = std::sqrt(3.0f / static_cast<float>(h));
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double u = static_cast<double>(splitmix64(key(seed, 2000, i, 0)) >> 11) * 0x1p-53;
    w[i] = static_cast<float>((2.0 * u - 1.0) * bound);
  }
  return w;
}
}  // namespace detail

//! A checkpoint's experts (moe_block::save): the expert-parallel size and expert-tensor slices they were saved
//! at, from the names of their directories, experts-<e>-of-<ep>-slice-<t>-of-<etp>; none where it holds none.
struct saved_experts {
  std::size_t ep = 0, etp = 0;
};
inline std::string experts_directory(std::size_t e, std::size_t ep, std::size_t t, std::size_t etp) {
  return "experts-" + std::to_string(e) + "-of-" + std::to_string(ep) + "-slice-" + std::to_string(t) + "-of-" +
         std::to_string(etp);
}
inline std::optional<saved_experts> experts_saved_in(const std::filesystem::path& dir) {
  std::optional<saved_experts> found;
  if (!std::filesystem::is_directory(dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string n = entry.path().filename().string();
    // The first expert-parallel rank's first slice names the layout, experts-0-of-<ep>-slice-0-of-<etp>; any
    // other name is of no concern here.
    const auto k = detail::numbers_in(n, {"experts-0-of-", "-slice-0-of-"});
    if (!k) continue;
    const std::size_t ep = (*k)[0], etp = (*k)[1];
    if (found && (found->ep != ep || found->etp != etp))
      throw invalid_input("checkpoint", dir.string() + " holds experts saved at two layouts (--ep " +
                                            std::to_string(found->ep) + " --etp " + std::to_string(found->etp) +
                                            ", and --ep " + std::to_string(ep) + " --etp " + std::to_string(etp) +
                                            "). Fix: save each run into a directory of its own");
    found = saved_experts{ep, etp};
  }
  return found;
}

//! What one forward pass through the block keeps for its backward: the block's input, the router's logits and
//! the exchange's pass, and the shared experts' gathered input and activation. A pipeline keeps one a micro-batch
//! in flight.
struct moe_kept {
  std::vector<float> in, logits;
  parallel::moe_pass pass;
  std::vector<float> shared_in, shared_act;
};

//! Where a checkpoint keeps tensor rank t's slice of the shared experts, saved over tp ranks.
inline std::string shared_experts_directory(std::size_t t, std::size_t tp) {
  return "shared-experts-slice-" + std::to_string(t) + "-of-" + std::to_string(tp);
}

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
    if (!m.balanced)
      router_.emplace(stage_, ledger, std::vector<std::size_t>{m.experts * width},
                      detail::initial_router(m.experts, width, seed), opt, reductions());
    if (m.shared_experts > 0)
      shared_.emplace(weights_, ledger, std::vector<std::size_t>{2 * shared_local() * width}, initial_shared(seed), opt,
                      reductions());
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
    if (cfg_.etp > 1)
      parallel::moe_forward(ep_, etp_, shape_, std::span<const parallel::expert_weights>(local),
                            std::span<const float>(k.in), r, std::span<float>(y), k.pass);
    else
      parallel::moe_forward(ep_, shape_, std::span<const parallel::expert_weights>(local), std::span<const float>(k.in),
                            r, std::span<float>(y), k.pass);
    if (!again) release_experts();
    held_ = again;
    for (std::size_t i = 0; i < h.size(); ++i) h[i] += y[i];
    if (shared_) {
      const auto ys = shared_forward(k, again);
      for (std::size_t i = 0; i < h.size(); ++i) h[i] += ys[i];
    }
    count_rows(k.pass, again);
    return k;
  }

  //! Drops what `k` kept for the backward but the block's input: the router's logits and the exchange's pass, the
  //! rows it dispatched and the experts' activations among them (Megatron-Core's recompute module `moe`).
  static void forget(moe_kept& k) {
    std::vector<float>().swap(k.logits);
    k.pass = parallel::moe_pass{};
    forget_shared(k);
  }
  //! Drops what the shared experts kept, their gathered input and activation (Megatron-Core's recompute module
  //! `shared_experts`); rebuild_shared runs them again from the block's input.
  static void forget_shared(moe_kept& k) {
    std::vector<float>().swap(k.shared_in);
    std::vector<float>().swap(k.shared_act);
  }
  //! The shared experts' forward again from the input `k` kept, their collectives too, for the backward that
  //! follows; their output is not needed again. Their weights stay gathered for that backward (ZeRO-3).
  void rebuild_shared(moe_kept& k) { shared_forward(k, /*keep=*/true); }
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
    const auto shared_dx = shared_ ? shared_backward(k, delta, ready) : std::vector<float>();
    const bool gather = !std::exchange(held_, false);  // a recomputed forward left them gathered
    auto local = acquire_experts(gather);
    std::vector<parallel::expert_weights> dlocal(local_);
    for (auto& d : dlocal) d = {std::vector<float>(local[0].w1.size()), std::vector<float>(local[0].w2.size())};
    std::vector<float> dx(delta.size()), dlogits(rows * E);
    if (cfg_.etp > 1)
      parallel::moe_backward(ep_, etp_, shape_, std::span<const parallel::expert_weights>(local), k.pass,
                             std::span<const float>(delta), std::span<float>(dx),
                             std::span<parallel::expert_weights>(dlocal), std::span<float>(dlogits));
    else
      parallel::moe_backward(ep_, shape_, std::span<const parallel::expert_weights>(local), k.pass,
                             std::span<const float>(delta), std::span<float>(dx),
                             std::span<parallel::expert_weights>(dlocal), std::span<float>(dlogits));
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
    if (shared_) shared_->gradient_ready(0);
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
    if (shared_)
      shard::write_checkpoint_piece(
          dir / shared_experts_directory(static_cast<std::size_t>(tp_.rank()), tensor_ranks()), *shared_, weights_);
    shard::write_checkpoint_piece(dir / experts_directory(static_cast<std::size_t>(ep_.rank()), cfg_.ep,
                                                          static_cast<std::size_t>(etp_.rank()), cfg_.etp),
                                  experts_, edp_);
  }
  //! Restores the states save() wrote, at any expert-parallel size, expert-tensor-parallel size and number of
  //! expert-data-parallel replicas: expert e is layer e mod E/ep' of the directories of rank e / (E/ep') of the
  //! ep' it was saved at, one a slice; slices saved over another --etp are joined and re-cut (shard::recut).
  //! Returns the steps the experts had taken.
  long load(const std::filesystem::path& dir) {
    const auto saved = experts_saved_in(dir);
    if (!saved)
      throw invalid_input("--load-checkpoint", dir.string() +
                                                   " holds no experts: it was saved without --experts. Fix: load it "
                                                   "without --experts, or a checkpoint of a run with them");
    if (cfg_.experts % saved->ep != 0)
      throw invalid_input("--experts", "the checkpoint in " + dir.string() + " spread its experts over " +
                                           std::to_string(saved->ep) + " ranks, which do not split this run's " +
                                           std::to_string(cfg_.experts) + ". Fix: --experts as saved");
    // The count comes from a directory's name: bounded by the width it splits before a slice is looked for.
    if (shape_.ffn_hidden % saved->etp != 0)
      throw invalid_input("--expert-width", "the checkpoint in " + dir.string() + " split each expert over " +
                                                std::to_string(saved->etp) + " ranks, which do not split this " +
                                                "run's expert width, " + std::to_string(shape_.ffn_hidden) +
                                                ": it is of another model. Fix: --expert-width as saved");
    const std::size_t per = cfg_.experts / saved->ep, first = static_cast<std::size_t>(ep_.rank()) * local_,
                      t = static_cast<std::size_t>(etp_.rank());
    std::map<std::pair<std::size_t, std::size_t>, shard::checkpoint_reader> readers;  // by saved rank, slice
    const auto slice = [&](std::size_t e, std::size_t s) -> const shard::checkpoint_reader& {
      const std::size_t r = e / per;
      auto it = readers.find({r, s});
      if (it == readers.end())
        it = readers.emplace(std::pair{r, s}, dir / experts_directory(r, saved->ep, s, saved->etp)).first;
      const std::size_t count = 2 * shape_.ffn_hidden / saved->etp * shape_.hidden;
      if (it->second.layers() != per || it->second.layer_size(e % per) != count)
        throw invalid_input("--load-checkpoint", "expert " + std::to_string(e) + "'s slice " + std::to_string(s) +
                                                     " in " + dir.string() + " is not this run's (" +
                                                     std::to_string(count) +
                                                     " values: --width, --expert-width, --experts). Fix: the "
                                                     "block's shape as saved");
      return it->second;
    };
    const auto at = [&](std::size_t ranks, std::size_t rank) { return expert_slice(ranks, rank); };
    const long steps =
        saved->etp == cfg_.etp
            ? shard::load_layers(experts_, edp_.rank(),
                                 [&](std::size_t q) {
                                   const std::size_t e = first + q;
                                   return std::pair{&slice(e, t), e % per};
                                 })
            : shard::load_layers(experts_, edp_.rank(), [&](std::size_t q) {
                const std::size_t e = first + q;
                std::vector<shard::layer_values> slices;
                for (std::size_t s = 0; s < saved->etp; ++s) {
                  slices.push_back(slice(e, s).values(e % per));
                  if (slices.back().steps != slices.front().steps)
                    throw invalid_input("checkpoint", "expert " + std::to_string(e) + "'s slices in " + dir.string() +
                                                          " had taken " + std::to_string(slices.front().steps) +
                                                          " and " + std::to_string(slices.back().steps) +
                                                          " steps: they come from different runs");
                }
                return shard::recut(slices, 2 * shape_.ffn_hidden * shape_.hidden, at, cfg_.etp, t);
              });
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
    if (load_shared(dir) != steps)
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
  //! The step model's count for one pass of `rows` tokens a rank under balanced routing, in fp32 values: a
  //! forward and a backward pass's exchange (model::expert_exchange_bytes), and the counts ahead of the dispatch and of
  //! the forward's gather; with `recomputed`, the forward's again (layer_cost::exchanges, 3 against 2), counts too.
  [[nodiscard]] double modelled(std::size_t rows, bool recomputed) const {
    model::transformer_shape m;
    m.hidden = shape_.hidden;
    m.top_k = shape_.top_k;
    const auto r = static_cast<double>(rows);
    const std::size_t counts = local_ * (cfg_.ep - 1) + (cfg_.etp - 1) * cfg_.ep * local_;
    const double passes = model::expert_exchange_passes(recomputed), forwards = recomputed ? 2 : 1;
    return passes * model::expert_exchange_bytes(m, r, cfg_.ep, cfg_.etp, 4.0).value() +
           forwards * static_cast<double>(counts * sizeof(std::size_t));
  }
  //! Assignments dropped at an expert's capacity in the last step's passes.
  [[nodiscard]] std::size_t dropped() const noexcept { return step_dropped_; }
  [[nodiscard]] std::size_t parameters_per_rank() const noexcept {
    return local_ * 2 * shape_.ffn_hidden / cfg_.etp * shape_.hidden + (router_ ? shape_.experts * shape_.hidden : 0);
  }
  //! The shared experts' weights this rank's tensor slice holds (before ZeRO shards them).
  [[nodiscard]] std::size_t shared_parameters_per_rank() const noexcept {
    return shared_ ? 2 * shared_local() * shape_.hidden : 0;
  }

 private:
  // Where tensor rank t of `ranks` holds an expert's values: W1 (f × h) split by its rows, as a column-parallel
  // layer, then W2 (h × f) by its columns, as a row-parallel one; neither has a bias. The shared experts' MLP, f
  // wide, splits so over the tensor group.
  std::vector<std::size_t> expert_slice(std::size_t ranks, std::size_t t) const {
    return mlp_slice(shape_.ffn_hidden, ranks, t);
  }
  std::vector<std::size_t> mlp_slice(std::size_t f, std::size_t ranks, std::size_t t) const {
    const std::size_t h = shape_.hidden;
    auto at = parallel::slice_indices(parallel::linear_split::column, {.in = h, .out = f, .bias = false}, ranks, t);
    for (const auto k :
         parallel::slice_indices(parallel::linear_split::row, {.in = f, .out = h, .bias = false}, ranks, t))
      at.push_back(f * h + k);
    return at;
  }
  // This rank's experts, each its tensor rank's slice.
  std::vector<float> initial_local(std::uint64_t seed) const {
    std::vector<float> all;
    const std::size_t first = static_cast<std::size_t>(ep_.rank()) * local_;
    const auto at = expert_slice(cfg_.etp, static_cast<std::size_t>(etp_.rank()));
    for (std::size_t q = 0; q < local_; ++q) {
      const auto w = detail::initial_expert(first + q, shape_.hidden, shape_.ffn_hidden, seed);
      for (const auto k : at) all.push_back(w[k]);
    }
    return all;
  }
  // The router's logits for the block's input `in`, or under balanced routing a 1 at each of row i's experts
  // (ids[i]·k + j) mod E.
  std::vector<float> logits(std::span<const float> in, std::span<const std::size_t> ids, bool keep) {
    const std::size_t h = shape_.hidden, E = shape_.experts, k = shape_.top_k, rows = in.size() / h;
    std::vector<float> z(rows * E, 0.0f);
    if (!router_) {
      for (std::size_t t = 0; t < rows; ++t)
        for (std::size_t j = 0; j < k; ++j) z[t * E + (ids[t] * k + j) % E] = 1.0f;
      return z;
    }
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

  std::size_t tensor_ranks() const { return static_cast<std::size_t>(tp_.size()); }
  // The shared experts' fused width, and this tensor rank's part of it.
  std::size_t shared_width() const { return cfg_.shared_experts * shape_.ffn_hidden; }
  std::size_t shared_local() const { return shared_width() / tensor_ranks(); }
  parallel::tokens shared_tokens() const {
    return tp_.size() > 1 ? parallel::tokens::sequence_parallel : parallel::tokens::all;
  }
  std::vector<float> initial_shared(std::uint64_t seed) const {
    const auto w = detail::initial_shared(shape_.hidden, shared_width(), seed);
    std::vector<float> mine;
    for (const auto k : mlp_slice(shared_width(), tensor_ranks(), static_cast<std::size_t>(tp_.rank())))
      mine.push_back(w[k]);
    return mine;
  }
  // The shared experts on the block's input `k.in` (this rank's rows, the tensor group's all gathered): k keeps
  // the gathered input and the activation. Returns this rank's rows of their output. `keep` leaves their weights
  // gathered for a backward that follows at once (a recomputed forward's).
  std::vector<float> shared_forward(moe_kept& k, bool keep) {
    const std::size_t h = shape_.hidden, held = k.in.size() / h, rows = held * tensor_ranks(), f = shared_local();
    shared_->acquire(0);
    const auto p = shared_->parameters(0);
    const parallel::linear_part up{p.first(f * h), {}}, down{p.subspan(f * h), {}};
    k.shared_act.assign(rows * f, 0.0f);
    parallel::column_forward(tp_, up, k.in, k.shared_in, k.shared_act, rows, h, shared_tokens());
    for (auto& a : k.shared_act) a = std::max(a, 0.0f);
    std::vector<float> y(held * h);
    parallel::row_forward(tp_, down, k.shared_act, y, rows, f, shared_tokens());
    shared_held_ = keep;
    if (!keep) shared_->release(0);
    return y;
  }
  // δ at the shared experts' input from δ at the block's output (this rank's rows), their gradients added and,
  // with `ready`, handed to their data_parallel.
  std::vector<float> shared_backward(const moe_kept& k, std::span<const float> delta, bool ready) {
    const std::size_t h = shape_.hidden, held = k.in.size() / h, rows = held * tensor_ranks(), f = shared_local();
    if (!std::exchange(shared_held_, false)) shared_->acquire(0);
    const auto p = shared_->parameters(0);
    auto g = shared_->gradient(0);
    const parallel::linear_part up{p.first(f * h), {}}, down{p.subspan(f * h), {}};
    std::vector<float> da(rows * f), dx(held * h);
    parallel::row_backward(tp_, down, k.shared_act, delta, {g.subspan(f * h), {}}, da, rows, f, shared_tokens());
    for (std::size_t i = 0; i < da.size(); ++i)
      if (k.shared_act[i] <= 0.0f) da[i] = 0.0f;  // relu'
    parallel::column_backward(tp_, up, k.shared_in, da, {g.first(f * h), {}}, dx, rows, h, shared_tokens());
    if (ready) shared_->gradient_ready(0);
    shared_->release(0);
    return dx;
  }
  // Restores the shared experts' states save() wrote, at any tensor-parallel size (slices saved over another are
  // joined and re-cut), and refuses a checkpoint that has them where the run has none, or the other way round.
  // Returns the steps they had taken: the routed experts' where the run has none.
  long load_shared(const std::filesystem::path& dir) {
    std::size_t saved = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (const auto k = detail::numbers_in(entry.path().filename().string(), {"shared-experts-slice-0-of-"})) {
        if (saved > 0 && saved != (*k)[0])
          throw invalid_input("checkpoint", dir.string() + " holds shared experts saved at two layouts (--tp " +
                                                std::to_string(saved) + " and " + std::to_string((*k)[0]) +
                                                "). Fix: save each run into a directory of its own");
        saved = (*k)[0];
      }
    if ((saved > 0) != shared_.has_value())
      throw invalid_input("--shared-experts", dir.string() + (saved > 0 ? " holds shared experts, which this run has "
                                                                          "none of. Fix: --shared-experts as saved"
                                                                        : " holds no shared experts. Fix: drop "
                                                                          "--shared-experts, or load a checkpoint of "
                                                                          "a run with them"));
    if (!shared_) return experts_.steps_taken();
    const std::size_t count = 2 * shared_width() * shape_.hidden;
    if (shared_width() % saved != 0)
      throw invalid_input("--shared-experts", "the checkpoint in " + dir.string() + " split the shared experts over " +
                                                  std::to_string(saved) + " ranks, which do not split this run's " +
                                                  std::to_string(shared_width()) +
                                                  " features: it is of another model. Fix: --shared-experts and "
                                                  "--expert-width as saved");
    std::deque<shard::checkpoint_reader> readers;
    for (std::size_t s = 0; s < saved; ++s) {
      readers.emplace_back(dir / shared_experts_directory(s, saved));
      if (readers.back().layers() != 1 || readers.back().layer_size(0) != count / saved)
        throw invalid_input("--load-checkpoint", "the shared experts' slice " + std::to_string(s) + " in " +
                                                     dir.string() + " is not this run's (" +
                                                     std::to_string(count / saved) +
                                                     " values: --width, --expert-width, --shared-experts). Fix: the "
                                                     "block's shape as saved");
    }
    const std::size_t t = static_cast<std::size_t>(tp_.rank());
    if (saved == tensor_ranks())
      return shard::load_layers(*shared_, weights_.rank(), [&](std::size_t) {
        return std::pair<const shard::checkpoint_reader*, std::size_t>{&readers[t], 0};
      });
    std::vector<shard::layer_values> slices;
    for (auto& r : readers) slices.push_back(r.values(0));
    return shard::load_layers(*shared_, weights_.rank(), [&](std::size_t) {
      return shard::recut(
          slices, count, [&](std::size_t n, std::size_t at) { return mlp_slice(shared_width(), n, at); },
          tensor_ranks(), t);
    });
  }
  // Adds the forward pass just run's rows to and from other ranks (its counts, in floats) and the counts ahead,
  // and its backward's, which sends the same rows back without counts. A recomputed forward (`again`) adds only
  // itself, counts and all, and no dropped assignment twice.
  void count_rows(const parallel::moe_pass& pass, bool again) {
    const auto me = static_cast<std::size_t>(ep_.rank());
    const std::uint64_t passes = again ? 1 : 2;
    std::uint64_t rows = 0;
    for (std::size_t j = 0; j < pass.send_counts.size(); ++j)
      if (j != me) rows += pass.send_counts[j] / shape_.hidden + pass.recv_counts[j] / shape_.hidden;
    counted_ += local_ * (cfg_.ep - 1) * sizeof(std::size_t) + passes * rows * shape_.hidden * sizeof(float);
    if (cfg_.etp > 1) {
      // The tensor group: this member's rows, and the others', from every member's counts.
      const std::size_t groups = pass.counts_in.size(), t = static_cast<std::size_t>(etp_.rank());
      std::size_t mine = 0, all = 0;
      for (std::size_t i = 0; i < pass.member_counts_in.size(); ++i)
        (i / groups == t ? mine : all) += pass.member_counts_in[i];
      const std::size_t once = parallel::expert_tensor_bytes(mine, all, shape_.hidden, groups, cfg_.etp);
      counted_ += passes * once - (passes - 1) * (cfg_.etp - 1) * groups * sizeof(std::size_t);
    }
    if (!again)
      for (const auto k : pass.r.kept) dropped_ += k == 0;
  }

  moe_config cfg_;
  parallel::moe_shape shape_;
  std::size_t local_;
  group ep_, etp_, edp_, stage_, tp_, weights_;
  shard::data_parallel<Scheme, group, any_reduction<group>> experts_;
  std::optional<shard::data_parallel<Scheme, group, any_reduction<group>>> router_;
  std::optional<shard::data_parallel<Scheme, group, any_reduction<group>>> shared_;
  std::uint64_t counted_ = 0, step_counted_ = 0;
  std::size_t dropped_ = 0, step_dropped_ = 0;
  bool held_ = false;         // a recomputed forward's weights, gathered for the backward that follows it
  bool shared_held_ = false;  // the same, of the shared experts
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
