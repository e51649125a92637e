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
//! communicator's own collectives (else the ring) by default, or
//! comm::compressed_reduction<Codec> to send fewer bytes, in every stage.
//!
//! Working precision: with Working = trinity::bfloat16 or float16, parameters
//! and gradients are 16-bit (what the forward and backward passes read and
//! write, and what the collectives move), and the optimizer updates an fp32
//! master copy, sharded with its states: mixed-precision Adam's 2 + 2 + 12
//! bytes per parameter, the planner's plan made runnable.
//!
//! Storage: every state is allocated from a std::pmr::memory_resource the
//! caller gives (shard::storage): the device's (a tier_resource with the
//! device's capacity, say) and the offload tier's (a NUMA node's, a
//! tier_resource for host DDR), so offloaded states really live there.
//!
//! Overlap (shard::schedule{.overlap = true}): collectives run on a
//! comm::progress_engine beside the caller. gradient_ready(l) queues layer l's
//! reduction in a bucket that starts once it holds bucket_bytes, so the next
//! layer's backward runs while it is on the wire; prefetch(l) starts layer l's
//! gather (stage 3) so acquire(l) finds it done. Same collectives, same order,
//! same bits as without. From the first gradient_ready or prefetch of a step
//! until step() returns, the communicator is data_parallel's.
//!
//! Every stage reduces gradients with the same ring on the same partition and
//! updates parameters element by element, so all stages produce the same bits:
//! stage 3 trains exactly the model DDP trains, in 1/N of the memory.
//!
//!   shard::data_parallel<shard::zero<3>, comm::thread_communicator> dp(c, ledger, layer_sizes, initial, adam);
//!   dp.acquire(l); forward(dp.parameters(l)); dp.release(l);              // per layer, forward
//!   dp.acquire(l); backward(dp.parameters(l), dp.gradient(l)); dp.gradient_ready(l); dp.release(l);
//!   auto report = dp.step(adam);                                          // skipped if any rank saw NaN/Inf

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <memory_resource>
#include <optional>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <trinity/comm/async.hpp>
#include <trinity/comm/collectives.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/comm/ring.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/concepts/shard_scheme.hpp>
#include <trinity/error.hpp>
#include <trinity/half.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/ledger.hpp>

namespace trinity::shard {

//! Where data_parallel allocates: the device's memory and the offload tier's. Either may be a tier_resource,
//! a NUMA node's resource or any std::pmr::memory_resource; both must outlive the model.
struct storage {
  std::pmr::memory_resource* device = std::pmr::new_delete_resource();
  std::pmr::memory_resource* offload = std::pmr::new_delete_resource();
};

//! When data_parallel's collectives run: each in its turn on the caller's thread (the default), or on a
//! progress engine beside it, overlapping the backward pass and gathering ahead.
struct schedule {
  bool overlap = false;
  //! Ready gradients are reduced together once this many bytes of them wait: PyTorch DDP's default
  //! bucket_cap_mb, 25 MiB. Smaller starts sooner; larger hands the engine fewer, longer tasks.
  std::size_t bucket_bytes = std::size_t{25} << 20;
};

namespace detail {
//! Whether a reduction policy codes its gradients (and so takes fp32 ones): comm::compressed_reduction says so.
template <class R>
constexpr bool codes_gradients() {
  if constexpr (requires { R::compresses; })
    return R::compresses;
  else
    return false;
}
template <class R>
inline constexpr bool compresses = codes_gradients<R>();
}  // namespace detail

struct step_report {
  bool skipped = false;
  std::vector<int> nonfinite_ranks;  //!< ranks whose local gradient held NaN or Inf
  std::uint64_t offload_bytes = 0;   //!< moved between device and the offload tier in this step
};

template <class Scheme, class Comm, class Reduction = exact_reduction, class Working = float>
class data_parallel {
  static_assert(diagnose_shard_scheme<Scheme>(), "trinity: data_parallel<Scheme, Comm> takes a ShardScheme");
  static_assert(diagnose_communicator<Comm>(), "trinity: data_parallel<Scheme, Comm> takes a Communicator");
  static_assert(std::is_same_v<Working, float> || is_half_float<Working>,
                "trinity: data_parallel's working precision is float, trinity::bfloat16 or trinity::float16");
  static_assert(std::is_same_v<Working, float> || !detail::compresses<Reduction>,
                "trinity: a compressed reduction codes fp32 gradients; 16-bit gradients are already half the bytes. "
                "Fix: use shard::exact_reduction with a 16-bit working precision, or float with a codec.");

 public:
  static constexpr shard_set shards = Scheme::shards;
  static constexpr int stage = shards.zero_stage();
  static constexpr bool offload = shards.offload_optimizer_states;
  //! 16-bit parameters and gradients, updated through an fp32 master copy.
  static constexpr bool mixed = !std::is_same_v<Working, float>;
  using working_type = Working;
  //! The scheme its weights are sharded under: what a pipeline stage over it names (parallel/pipeline.hpp).
  using shard_scheme = Scheme;

  //! `initial` holds every layer's parameters, concatenated, and is the same on every rank.
  //!
  //! The optimizer interface (shard::adam is one; a plain SGD another, with no state):
  //!   static constexpr std::size_t states_per_parameter;   // fp32 states per parameter, 0 for none
  //!   void update(std::span<float> params, std::span<const float> grads, std::span<float> states, long step) const;
  //! `states` holds states_per_parameter planes of params.size() floats each (all of the first state, then all
  //! of the second; empty when there are none), `step` counts from 1. The update must be element-wise, so a
  //! shard's update gives the bits the whole tensor's would. Checkpoints keep each plane's chunk.
  template <class Optimizer>
  data_parallel(Comm& c, memory_ledger& ledger, std::vector<std::size_t> layer_sizes, std::span<const float> initial,
                const Optimizer&, Reduction reduction = {}, storage where = {}, schedule when = {})
      : comm_(&c),
        ledger_(&ledger),
        sizes_(std::move(layer_sizes)),
        states_per_(Optimizer::states_per_parameter),
        reduction_(std::move(reduction)),
        storage_(where),
        schedule_(when) {
    trinity::detail::require(where.device != nullptr && where.offload != nullptr, "storage",
                             "needs a memory resource for the device and one for the offload tier");
    const std::size_t total = std::accumulate(sizes_.begin(), sizes_.end(), std::size_t{0});
    trinity::detail::require(initial.size() == total, "initial",
                             "holds every layer's parameters: " + std::to_string(total) + " floats");
    std::size_t at = 0;
    for (std::size_t l = 0; l < sizes_.size(); ++l) {
      const comm::partition part(sizes_[l], c.size());
      parts_.push_back(part);
      const auto full = initial.subspan(at, sizes_[l]);
      const auto mine = part.chunk(full, c.rank());
      const auto held = shards.parameters ? mine : full;
      params_.emplace_back(held.size(), Working{}, alloc<Working>(state_kind::parameters));
      for (std::size_t i = 0; i < held.size(); ++i) params_.back()[i] = Working(held[i]);
      const std::size_t owned = shards.optimizer_states ? mine.size() : full.size();
      grads_.emplace_back(shards.gradients ? mine.size() : full.size(), Working{},
                          alloc<Working>(state_kind::gradients));
      const placement opt_place = offload ? placement::offload : placement::device;
      opt_.emplace_back(owned * states_per_, 0.0f, alloc<float>(state_kind::optimizer_states, opt_place));
      if constexpr (has_master) {
        // The fp32 copy the optimizer updates: on the offload tier under ZeRO-Offload, beside its states with
        // 16-bit parameters. Sharded as the states are.
        const auto src = shards.optimizer_states ? mine : full;
        master_.emplace_back(src.begin(), src.end(), alloc<float>(state_kind::optimizer_states, opt_place));
      }
      gathered_.emplace_back(alloc<Working>(state_kind::parameters));
      staging_.emplace_back(alloc<Working>(state_kind::gradients));
      at += sizes_[l];
    }
    ready_.assign(sizes_.size(), false);
    prefetched_.resize(sizes_.size());
    if constexpr (stage == 1)
      reduced_.resize(sizes_.size(), tracked_vector<Working>(alloc<Working>(state_kind::gradients)));
    if (when.overlap) engine_ = std::make_unique<comm::progress_engine<Comm>>(c);
  }
  // The engine's tasks hold `this`: a data_parallel stays where it was built.
  data_parallel(const data_parallel&) = delete;
  data_parallel& operator=(const data_parallel&) = delete;
  ~data_parallel() {
    // What other ranks wait for still runs (the engine drains before it stops), then the buffers go.
    if (engine_) {
      try {
        settle();
      } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report; step() would have
      }
    }
  }

  [[nodiscard]] std::size_t layers() const noexcept { return sizes_.size(); }
  [[nodiscard]] const comm::partition& partition(std::size_t l) const { return parts_.at(l); }

  //! Makes layer l's full parameters available (stage 3: an all-gather into a buffer booked as parameters).
  void acquire(std::size_t l) {
    check_layer(l);
    if constexpr (shards.parameters) {
      if (prefetched_[l]) {  // its gather was started by prefetch(l)
        const auto p = *std::exchange(prefetched_[l], std::nullopt);
        p.wait();
        return;
      }
      auto& g = gathered_[l];
      g.resize(sizes_[l]);
      collective([&](Comm& c) {
        comm::all_gather(c, std::span<const Working>(params_[l]), std::span<Working>(g),
                         comm::algorithm::native_or_ring);
      });
    }
  }
  //! Starts gathering layer l's parameters so that acquire(l) finds them: under stage 3 with overlap, while
  //! the caller computes another layer (FSDP's prefetch). Otherwise nothing to do; acquire gathers.
  void prefetch(std::size_t l) {
    check_layer(l);
    if constexpr (shards.parameters) {
      if (!engine_ || prefetched_[l] || gathered_[l].size() == sizes_[l]) return;
      auto& g = gathered_[l];
      g.resize(sizes_[l]);  // here, on the caller's thread: the ledger books it
      prefetched_[l] = engine_->all_gather(std::span<const Working>(params_[l]), std::span<Working>(g),
                                           comm::algorithm::native_or_ring);
    }
  }
  //! Gives layer l's parameters back (stage 3 frees the gathered buffer).
  void release(std::size_t l) {
    check_layer(l);
    if constexpr (shards.parameters) {
      if (prefetched_[l]) std::exchange(prefetched_[l], std::nullopt)->wait();  // never free under a gather
      gathered_[l].clear();
      gathered_[l].shrink_to_fit();
    }
  }
  //! Layer l's full parameters; under stage 3 only between acquire and release.
  [[nodiscard]] std::span<const Working> parameters(std::size_t l) const {
    check_layer(l);
    if constexpr (shards.parameters) {
      trinity::detail::require(gathered_[l].size() == sizes_[l] && !prefetched_[l], "layer",
                               "under stage 3 a layer's parameters exist only between acquire() and release()");
      return gathered_[l];
    } else {
      return params_[l];
    }
  }
  //! Where the backward pass accumulates layer l's local gradient (full size, zero at the start of a step).
  [[nodiscard]] std::span<Working> gradient(std::size_t l) {
    check_layer(l);
    if constexpr (shards.gradients) {
      auto& s = staging_[l];
      if (s.size() != sizes_[l]) s.assign(sizes_[l], Working{});
      return s;
    } else {
      return grads_[l];
    }
  }
  //! Layer l's local gradient is complete. Stages 2 and 3 reduce-scatter it now and free the full buffer;
  //! with overlap every stage queues its reduction in the current bucket and returns.
  //! Optional in every stage: step() reduces each layer not marked ready itself, so a loop that never
  //! calls it trains the same model under every scheme (only later). Twice in one step is an error: the
  //! second call would reduce an empty buffer over the first's sum.
  void gradient_ready(std::size_t l) {
    check_layer(l);
    if (ready_[l])
      throw invalid_input("layer", "gradient_ready(" + std::to_string(l) +
                                       ") was called twice in one step; the "
                                       "second call would overwrite the reduced gradient. Fix: call it once per layer "
                                       "and step, after the layer's whole gradient is in gradient(l)");
    ready_[l] = true;
    const auto g = gradient(l);
    nonfinite_ =
        nonfinite_ || std::any_of(g.begin(), g.end(), [](Working x) { return !std::isfinite(static_cast<float>(x)); });
    if (engine_) {
      if constexpr (stage == 1) reduced_[l].resize(parts_[l].size(comm_->rank()));  // booked here, filled there
      bucket_.push_back(l);
      bucket_fill_ += g.size_bytes();
      if (bucket_fill_ >= schedule_.bucket_bytes) start_bucket();
      reap();
      return;
    }
    if constexpr (shards.gradients) {
      reduce_layer(*comm_, l);
      staging_[l].clear();
      staging_[l].shrink_to_fit();
    }
  }

  //! Whether a local gradient this rank marked ready this step held NaN or Inf: its verdict on the whole step
  //! once every layer is marked (step() marks the rest). A model split over several data_parallels (a
  //! mixture's experts beside its dense layers) votes on it over all their ranks and passes the outcome to
  //! step(opt, also_skip), so that no part of it steps where another skips.
  [[nodiscard]] bool saw_nonfinite() const noexcept { return nonfinite_; }

  //! Reduces what is left to reduce, updates this rank's parameters and gathers them where the scheme keeps
  //! them whole. If any rank's local gradient held NaN or Inf, every rank skips the update and says who.
  template <class Optimizer>
  step_report step(const Optimizer& opt) {
    return step(opt, false);
  }
  //! The same, skipping also where `also_skip`: another part of the same model saw a non-finite gradient.
  //! Every rank of this data_parallel passes the same; its own vote runs either way and names its ranks.
  template <class Optimizer>
  step_report step(const Optimizer& opt, bool also_skip) {
    step_report report;
    // Layers the loop did not mark ready are reduced now, in layer order, the same on every rank.
    for (std::size_t l = 0; l < sizes_.size(); ++l)
      if (!ready_[l]) gradient_ready(l);
    if (engine_) settle();
    // One flag per rank, max-reduced: everyone learns who saw a non-finite gradient, and all agree to skip.
    std::vector<std::int32_t> flags(static_cast<std::size_t>(comm_->size()), 0);
    flags[static_cast<std::size_t>(comm_->rank())] = nonfinite_ ? 1 : 0;
    collective([&](Comm& c) {
      comm::all_reduce(c, std::span<std::int32_t>(flags), comm::reduce_op::max, comm::algorithm::native_or_ring);
    });
    nonfinite_ = false;
    for (int r = 0; r < comm_->size(); ++r)
      if (flags[static_cast<std::size_t>(r)]) report.nonfinite_ranks.push_back(r);
    if (also_skip || !report.nonfinite_ranks.empty()) {
      report.skipped = true;
      zero_gradients();
      return report;
    }
    ++steps_;
    for (std::size_t l = 0; l < sizes_.size(); ++l) {
      const int r = comm_->rank();
      const auto& part = parts_[l];
      std::span<const Working> grad;
      tracked_vector<Working> reduced(alloc<Working>(state_kind::gradients));
      if constexpr (stage == 0) {
        if (!engine_) reduce_layer(*comm_, l);  // with overlap it was, in its bucket
        grad = grads_[l];
      } else if constexpr (stage == 1) {
        if (engine_) {
          grad = reduced_[l];
        } else {
          reduced.resize(part.size(r));
          reduction_.reduce_scatter(*comm_, l, std::span<const Working>(grads_[l]), std::span<Working>(reduced));
          grad = reduced;
        }
      } else {
        grad = grads_[l];
      }
      // The fp32 numbers the optimizer reads: the gradient itself, or a widened copy of a 16-bit one.
      tracked_vector<float> wide(alloc<float>(state_kind::gradients, offload ? placement::offload : placement::device));
      std::span<const float> grad32;
      if constexpr (mixed) {
        wide.resize(grad.size());
        for (std::size_t i = 0; i < grad.size(); ++i) wide[i] = static_cast<float>(grad[i]);
        grad32 = wide;
      } else if constexpr (offload) {
        // Gradients go down to the offload tier, the update runs there on the master copy, parameters come back.
        wide.assign(grad.begin(), grad.end());
        grad32 = wide;
      } else {
        grad32 = grad;
      }
      if constexpr (has_master) {
        opt.update(std::span<float>(master_[l]), grad32, std::span<float>(opt_[l]), steps_);
        publish(l);
        if constexpr (offload)
          report.offload_bytes += grad.size() * sizeof(Working) + master_[l].size() * sizeof(Working);
      } else {
        const std::span<float> target =
            stage == 0 || stage == 3 ? std::span<float>(params_[l]) : part.chunk(std::span<float>(params_[l]), r);
        opt.update(target, grad32, std::span<float>(opt_[l]), steps_);
        if constexpr (stage == 1 || stage == 2)
          collective([&](Comm& c) {
            comm::all_gather(c, std::span<const float>(target), std::span<float>(params_[l]),
                             comm::algorithm::native_or_ring);
          });
      }
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
    if constexpr (has_master) {
      // The fp32 master, not the 16-bit copy: a checkpoint keeps what the optimizer updates.
      const std::span<const float> m = master_[l];
      const auto p = shards.optimizer_states ? m : part.chunk(m, r);
      out.parameters.assign(p.begin(), p.end());
    } else {
      const std::span<const float> source = params_[l];
      const auto p = shards.parameters ? source : part.chunk(source, r);
      out.parameters.assign(p.begin(), p.end());
    }
    const std::size_t owned = owned_states(l);
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
      collective([&](Comm& c) {
        comm::all_gather(c, std::span<const float>(part.chunk(whole, r)), whole, comm::algorithm::native_or_ring);
      });
    };
    if constexpr (has_master) {
      if constexpr (shards.optimizer_states)
        std::copy(parameters.begin(), parameters.end(), master_[l].begin());
      else
        put_whole(master_[l], parameters);
      publish(l);
    } else {
      if constexpr (shards.parameters)
        std::copy(parameters.begin(), parameters.end(), params_[l].begin());
      else
        put_whole(params_[l], parameters);
    }
    const std::size_t owned = owned_states(l);
    for (std::size_t k = 0; k < states_per_; ++k) {
      const auto plane = std::span<float>(opt_[l]).subspan(k * owned, owned);
      const auto mine = states.subspan(k * n, n);
      if constexpr (shards.optimizer_states)
        std::copy(mine.begin(), mine.end(), plane.begin());
      else
        put_whole(plane, mine);
    }
  }
  void set_steps_taken(long steps) {
    trinity::detail::require(steps >= 0, "steps", "must not be negative");
    steps_ = steps;
  }
  [[nodiscard]] long steps_taken() const noexcept { return steps_; }
  [[nodiscard]] std::size_t states_per_parameter() const noexcept { return states_per_; }
  //! Parameters of layer l whose optimizer states this rank holds: its chunk, or the whole layer unsharded.
  //! A stateless optimizer (plain SGD) holds no state plane, and this is 0.
  [[nodiscard]] std::size_t owned_states(std::size_t l) const {
    check_layer(l);
    return states_per_ == 0 ? 0 : opt_[l].size() / states_per_;
  }
  [[nodiscard]] Reduction& reduction() noexcept { return reduction_; }
  [[nodiscard]] const storage& memory() const noexcept { return storage_; }
  [[nodiscard]] const schedule& timing() const noexcept { return schedule_; }

 private:
  // An fp32 master copy beside the working parameters: under ZeRO-Offload (updated on the offload tier) and
  // with 16-bit working parameters.
  static constexpr bool has_master = offload || mixed;

  template <class T>
  tracking_allocator<T> alloc(state_kind k, placement p = placement::device) const {
    return tracking_allocator<T>(*ledger_, k, p, p == placement::device ? storage_.device : storage_.offload);
  }

  // The working parameters from the master copy: narrowed to the working precision where it is 16 bits, and
  // gathered where the scheme keeps parameters whole but the master is sharded (stages 1 and 2).
  void publish(std::size_t l) {
    const auto& part = parts_[l];
    const int r = comm_->rank();
    const std::span<Working> whole = params_[l];
    const std::span<Working> mine = shards.optimizer_states && !shards.parameters ? part.chunk(whole, r) : whole;
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = Working(master_[l][i]);
    if constexpr (shards.optimizer_states && !shards.parameters)
      collective([&](Comm& c) {
        comm::all_gather(c, std::span<const Working>(mine), whole, comm::algorithm::native_or_ring);
      });
  }
  // A collective in its turn: on the engine's thread when there is one (it owns the communicator), else here.
  template <class F>
  void collective(F f) {
    if (engine_)
      engine_->run(std::move(f));
    else
      f(*comm_);
  }
  // Layer l's gradient reduction, on whichever thread runs it: into its shard (stages 2-3 from the staging
  // buffer, stage 1 into reduced_) or in place (stage 0).
  void reduce_layer(Comm& c, std::size_t l) {
    if constexpr (stage == 0)
      reduction_.all_reduce(c, l, std::span<Working>(grads_[l]));
    else if constexpr (stage == 1)
      reduction_.reduce_scatter(c, l, std::span<const Working>(grads_[l]), std::span<Working>(reduced_[l]));
    else
      reduction_.reduce_scatter(c, l, std::span<const Working>(staging_[l]), std::span<Working>(grads_[l]));
  }
  void start_bucket() {
    if (bucket_.empty()) return;
    auto layers = std::exchange(bucket_, {});
    auto done = engine_->start([this, layers](Comm& c) {
      for (const auto l : layers) reduce_layer(c, l);
    });
    in_flight_.push_back({std::move(done), std::move(layers)});
    bucket_fill_ = 0;
  }
  // Frees the staging buffers of buckets already reduced, so a long backward holds only what is in flight.
  void reap() {
    std::erase_if(in_flight_, [this](const bucket& b) {
      if (!b.done.ready()) return false;
      try {
        b.done.wait();  // ready: does not block
      } catch (...) {
        return false;  // the error stays for settle() to rethrow
      }
      if constexpr (shards.gradients)
        for (const auto l : b.layers) {
          staging_[l].clear();
          staging_[l].shrink_to_fit();
        }
      return true;
    });
  }
  // Starts what is queued, waits for every reduction and gather, frees the staging buffers (here: the ledger
  // is the caller's thread's), and rethrows the first error once all are done.
  void settle() {
    start_bucket();
    std::exception_ptr first;
    const auto wait = [&](const comm::pending& p) {
      try {
        p.wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    };
    for (const auto& b : std::exchange(in_flight_, {})) wait(b.done);
    for (auto& p : prefetched_)
      if (p) wait(*p);
    if constexpr (shards.gradients)
      for (auto& s : staging_) {
        s.clear();
        s.shrink_to_fit();
      }
    if (first) std::rethrow_exception(first);
  }
  void check_layer(std::size_t l) const {
    if (l >= sizes_.size())
      throw invalid_input("layer",
                          std::to_string(l) + " is not a layer of a model with " + std::to_string(sizes_.size()));
  }
  void zero_gradients() {
    std::fill(ready_.begin(), ready_.end(), false);
    if constexpr (stage == 1)
      for (auto& g : reduced_) {
        g.clear();
        g.shrink_to_fit();
      }
    for (auto& g : grads_) std::fill(g.begin(), g.end(), Working{});
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
  storage storage_;
  std::vector<comm::partition> parts_;
  std::vector<tracked_vector<Working>> params_, grads_, gathered_, staging_;
  std::vector<tracked_vector<float>> opt_, master_;
  std::vector<bool> ready_;  //!< layers whose gradient this step has been marked ready (and, stages 2-3, reduced)
  bool nonfinite_ = false;
  long steps_ = 0;
  schedule schedule_;
  std::vector<tracked_vector<Working>> reduced_;          //!< stage 1 with overlap: each layer's reduced shard
  std::vector<std::optional<comm::pending>> prefetched_;  //!< stage 3: gathers started by prefetch
  std::vector<std::size_t> bucket_;                       //!< ready layers not yet handed to the engine
  std::size_t bucket_fill_ = 0;
  struct bucket {
    comm::pending done;
    std::vector<std::size_t> layers;
  };
  std::vector<bucket> in_flight_;                        //!< buckets on the engine
  std::unique_ptr<comm::progress_engine<Comm>> engine_;  //!< last: destroyed first, draining onto live buffers
};

}  // namespace trinity::shard
