#pragma once
//! \file
//! data_parallel<Scheme, Communicator>: one rank's share of a data-parallel
//! model under a ShardScheme. The model is a list of layers (flat fp32
//! tensors); rank r owns chunk r of comm::partition of every layer, the chunk
//! a ring reduce-scatter leaves on it. The training loop asks for a layer's
//! parameters before it uses them and gives them back after (stage 3 gathers
//! and frees them then), writes each layer's local gradient and says when it
//! is ready (stages 2 and 3 reduce-scatter it at once and free it), and ends
//! the step with step(optimizer).
//!
//! Gradients are summed by a reduction policy (shard/exact_reduction.hpp): the
//! exact ring by default, or comm::compressed_reduction<Codec> to send fewer
//! bytes, in every stage.
//!
//! Every stage reduces gradients with the same ring on the same partition and
//! updates parameters element by element, so all stages produce the same bits:
//! stage 3 trains exactly the model DDP trains, in 1/N of the memory.
//!
//!   shard::data_parallel<shard::zero<3>, comm::thread_communicator> dp(c, ledger, layer_sizes, initial);
//!   dp.acquire(l); forward(dp.parameters(l)); dp.release(l);              // per layer, forward
//!   dp.acquire(l); backward(dp.parameters(l), dp.gradient(l)); dp.gradient_ready(l); dp.release(l);
//!   auto report = dp.step(adam);                                          // skipped if any rank saw NaN/Inf

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <trinity/comm/collectives.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/concepts/shard_scheme.hpp>
#include <trinity/error.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/ledger.hpp>

namespace trinity::shard {

struct step_report {
  bool skipped = false;
  std::vector<int> nonfinite_ranks;  //!< ranks whose local gradient held NaN or Inf
  std::uint64_t offload_bytes = 0;   //!< moved between device and the offload tier in this step
};

template <class Scheme, class Comm, class Reduction = exact_reduction>
class data_parallel {
  static_assert(diagnose_shard_scheme<Scheme>(), "trinity: data_parallel<Scheme, Comm> takes a ShardScheme");
  static_assert(diagnose_communicator<Comm>(), "trinity: data_parallel<Scheme, Comm> takes a Communicator");

 public:
  static constexpr shard_set shards = Scheme::shards;
  static constexpr int stage = shards.zero_stage();
  static constexpr bool offload = shards.offload_optimizer_states;

  //! `initial` holds every layer's parameters, concatenated, and is the same on every rank.
  template <class Optimizer>
  data_parallel(Comm& c, memory_ledger& ledger, std::vector<std::size_t> layer_sizes, std::span<const float> initial,
                const Optimizer&, Reduction reduction = {})
      : comm_(&c),
        ledger_(&ledger),
        sizes_(std::move(layer_sizes)),
        states_per_(Optimizer::states_per_parameter),
        reduction_(std::move(reduction)) {
    const std::size_t total = std::accumulate(sizes_.begin(), sizes_.end(), std::size_t{0});
    trinity::detail::require(initial.size() == total, "initial",
                             "holds every layer's parameters: " + std::to_string(total) + " floats");
    std::size_t at = 0;
    for (std::size_t l = 0; l < sizes_.size(); ++l) {
      const comm::partition part(sizes_[l], c.size());
      parts_.push_back(part);
      const auto full = initial.subspan(at, sizes_[l]);
      const auto mine = part.chunk(full, c.rank());
      if constexpr (shards.parameters)
        params_.emplace_back(mine.begin(), mine.end(), alloc(state_kind::parameters));
      else
        params_.emplace_back(full.begin(), full.end(), alloc(state_kind::parameters));
      const std::size_t owned = shards.optimizer_states ? mine.size() : full.size();
      if constexpr (!shards.gradients) grads_.emplace_back(full.size(), 0.0f, alloc(state_kind::gradients));
      else grads_.emplace_back(mine.size(), 0.0f, alloc(state_kind::gradients));
      const placement opt_place = offload ? placement::offload : placement::device;
      opt_.emplace_back(owned * states_per_, 0.0f, alloc(state_kind::optimizer_states, opt_place));
      if constexpr (offload) {  // ZeRO-Offload: the offload tier also keeps the fp32 master copy it updates
        const auto src = shards.optimizer_states ? mine : full;
        master_.emplace_back(src.begin(), src.end(), alloc(state_kind::optimizer_states, placement::offload));
      }
      gathered_.emplace_back(alloc(state_kind::parameters));
      staging_.emplace_back(alloc(state_kind::gradients));
      at += sizes_[l];
    }
  }

  [[nodiscard]] std::size_t layers() const noexcept { return sizes_.size(); }
  [[nodiscard]] const comm::partition& partition(std::size_t l) const { return parts_.at(l); }

  //! Makes layer l's full parameters available (stage 3: an all-gather into a buffer booked as parameters).
  void acquire(std::size_t l) {
    check_layer(l);
    if constexpr (shards.parameters) {
      auto& g = gathered_[l];
      g.resize(sizes_[l]);
      comm::all_gather(*comm_, std::span<const float>(params_[l]), std::span<float>(g), comm::algorithm::ring);
    }
  }
  //! Gives layer l's parameters back (stage 3 frees the gathered buffer).
  void release(std::size_t l) {
    check_layer(l);
    if constexpr (shards.parameters) {
      gathered_[l].clear();
      gathered_[l].shrink_to_fit();
    }
  }
  //! Layer l's full parameters; under stage 3 only between acquire and release.
  [[nodiscard]] std::span<const float> parameters(std::size_t l) const {
    check_layer(l);
    if constexpr (shards.parameters) {
      trinity::detail::require(gathered_[l].size() == sizes_[l], "layer",
                               "under stage 3 a layer's parameters exist only between acquire() and release()");
      return gathered_[l];
    } else {
      return params_[l];
    }
  }
  //! Where the backward pass accumulates layer l's local gradient (full size, zero at the start of a step).
  [[nodiscard]] std::span<float> gradient(std::size_t l) {
    check_layer(l);
    if constexpr (shards.gradients) {
      auto& s = staging_[l];
      if (s.size() != sizes_[l]) s.assign(sizes_[l], 0.0f);
      return s;
    } else {
      return grads_[l];
    }
  }
  //! Layer l's local gradient is complete. Stages 2 and 3 reduce-scatter it now and free the full buffer.
  void gradient_ready(std::size_t l) {
    check_layer(l);
    const auto g = gradient(l);
    nonfinite_ = nonfinite_ || std::any_of(g.begin(), g.end(), [](float x) { return !std::isfinite(x); });
    if constexpr (shards.gradients) {
      reduction_.reduce_scatter(*comm_, l, std::span<const float>(g), std::span<float>(grads_[l]));
      staging_[l].clear();
      staging_[l].shrink_to_fit();
    }
  }

  //! Reduces what is left to reduce, updates this rank's parameters and gathers them where the scheme keeps
  //! them whole. If any rank's local gradient held NaN or Inf, every rank skips the update and says who.
  template <class Optimizer>
  step_report step(const Optimizer& opt) {
    step_report report;
    // One flag per rank, max-reduced: everyone learns who saw a non-finite gradient, and all agree to skip.
    std::vector<std::int32_t> flags(static_cast<std::size_t>(comm_->size()), 0);
    flags[static_cast<std::size_t>(comm_->rank())] = nonfinite_ ? 1 : 0;
    comm::all_reduce(*comm_, std::span<std::int32_t>(flags), comm::reduce_op::max, comm::algorithm::ring);
    nonfinite_ = false;
    for (int r = 0; r < comm_->size(); ++r)
      if (flags[static_cast<std::size_t>(r)]) report.nonfinite_ranks.push_back(r);
    if (!report.nonfinite_ranks.empty()) {
      report.skipped = true;
      zero_gradients();
      return report;
    }
    ++steps_;
    for (std::size_t l = 0; l < sizes_.size(); ++l) {
      const int r = comm_->rank();
      const auto& part = parts_[l];
      std::span<const float> grad;
      std::span<float> target;  // the parameters this rank updates
      tracked_vector<float> reduced(alloc(state_kind::gradients));
      if constexpr (stage == 0) {
        reduction_.all_reduce(*comm_, l, std::span<float>(grads_[l]));
        grad = grads_[l];
        target = params_[l];
      } else if constexpr (stage == 1) {
        reduced.resize(part.size(r));
        reduction_.reduce_scatter(*comm_, l, std::span<const float>(grads_[l]), std::span<float>(reduced));
        grad = reduced;
        target = part.chunk(std::span<float>(params_[l]), r);
      } else if constexpr (stage == 2) {
        grad = grads_[l];
        target = part.chunk(std::span<float>(params_[l]), r);
      } else {
        grad = grads_[l];
        target = params_[l];
      }
      if constexpr (offload) {
        // Gradients go down to the offload tier, the update runs there on the master copy, parameters come back.
        tracked_vector<float> down(grad.begin(), grad.end(), alloc(state_kind::gradients, placement::offload));
        opt.update(std::span<float>(master_[l]), std::span<const float>(down), std::span<float>(opt_[l]), steps_);
        std::copy(master_[l].begin(), master_[l].end(), target.begin());
        report.offload_bytes += grad.size_bytes() + target.size_bytes();
      } else {
        opt.update(target, grad, std::span<float>(opt_[l]), steps_);
      }
      if constexpr (stage == 1 || stage == 2)
        comm::all_gather(*comm_, std::span<const float>(target), std::span<float>(params_[l]), comm::algorithm::ring);
    }
    zero_gradients();
    return report;
  }

  //! What a sharded checkpoint keeps of layer l: this rank's chunk of the parameters and of each optimizer
  //! state plane, whatever the scheme (a replicating rank still writes only its chunk).
  struct chunk {
    std::vector<float> parameters;
    std::vector<float> states;  //!< states_per_parameter planes of the chunk's size, one after another
  };
  [[nodiscard]] chunk owned_chunk(std::size_t l) const {
    check_layer(l);
    const auto& part = parts_[l];
    const int r = comm_->rank();
    chunk out;
    const std::span<const float> source = offload ? std::span<const float>(master_[l]) : std::span<const float>(params_[l]);
    const bool whole_params = offload ? !shards.optimizer_states : !shards.parameters;
    const auto p = whole_params ? part.chunk(source, r) : source;
    out.parameters.assign(p.begin(), p.end());
    const std::size_t owned = opt_[l].size() / states_per_;
    for (std::size_t k = 0; k < states_per_; ++k) {
      const auto plane = std::span<const float>(opt_[l]).subspan(k * owned, owned);
      const auto mine = shards.optimizer_states ? plane : part.chunk(plane, r);
      out.states.insert(out.states.end(), mine.begin(), mine.end());
    }
    return out;
  }

  //! Restores layer l from this rank's chunk (of this communicator's partition) and gathers what the scheme
  //! keeps whole. Every rank calls it for every layer, in order; then set_steps_taken.
  void load_chunk(std::size_t l, std::span<const float> parameters, std::span<const float> states) {
    check_layer(l);
    const auto& part = parts_[l];
    const int r = comm_->rank();
    const std::size_t n = part.size(r);
    trinity::detail::require(parameters.size() == n && states.size() == n * states_per_, "chunk",
                             "layer " + std::to_string(l) + " expects " + std::to_string(n) + " parameters and " +
                                 std::to_string(n * states_per_) + " state values on this rank");
    const auto put_whole = [&](std::span<float> whole, std::span<const float> mine) {
      std::copy(mine.begin(), mine.end(), part.chunk(whole, r).begin());
      comm::all_gather(*comm_, std::span<const float>(part.chunk(whole, r)), whole, comm::algorithm::ring);
    };
    if constexpr (shards.parameters) std::copy(parameters.begin(), parameters.end(), params_[l].begin());
    else put_whole(params_[l], parameters);
    if constexpr (offload) {
      if constexpr (shards.optimizer_states) std::copy(parameters.begin(), parameters.end(), master_[l].begin());
      else std::copy(params_[l].begin(), params_[l].end(), master_[l].begin());
    }
    const std::size_t owned = opt_[l].size() / states_per_;
    for (std::size_t k = 0; k < states_per_; ++k) {
      const auto plane = std::span<float>(opt_[l]).subspan(k * owned, owned);
      const auto mine = states.subspan(k * n, n);
      if constexpr (shards.optimizer_states) std::copy(mine.begin(), mine.end(), plane.begin());
      else put_whole(plane, mine);
    }
  }
  void set_steps_taken(long steps) {
    trinity::detail::require(steps >= 0, "steps", "must not be negative");
    steps_ = steps;
  }
  [[nodiscard]] long steps_taken() const noexcept { return steps_; }
  [[nodiscard]] std::size_t states_per_parameter() const noexcept { return states_per_; }
  [[nodiscard]] Reduction& reduction() noexcept { return reduction_; }

 private:
  tracking_allocator<float> alloc(state_kind k, placement p = placement::device) const {
    return tracking_allocator<float>(*ledger_, k, p);
  }
  void check_layer(std::size_t l) const {
    if (l >= sizes_.size())
      throw invalid_input("layer", std::to_string(l) + " is not a layer of a model with " + std::to_string(sizes_.size()));
  }
  void zero_gradients() {
    for (auto& g : grads_) std::fill(g.begin(), g.end(), 0.0f);
    for (auto& s : staging_) {
      s.clear();
      s.shrink_to_fit();
    }
  }

  Comm* comm_;
  memory_ledger* ledger_;
  std::vector<std::size_t> sizes_;
  std::size_t states_per_;
  Reduction reduction_;
  std::vector<comm::partition> parts_;
  std::vector<tracked_vector<float>> params_, grads_, opt_, master_, gathered_, staging_;
  bool nonfinite_ = false;
  long steps_ = 0;
};

}  // namespace trinity::shard
