#pragma once
//! \file
//! The layout search, a workload of the planning engine (plan/engine.hpp): every
//! Megatron-style layout of a transformer on g GPUs (tensor × pipeline × virtual
//! stages × context × data parallelism, the ZeRO stage over the data and
//! context ranks, the micro-batch, the recomputation policy and sequence
//! parallelism) priced by the step model (model/parallel_training.hpp) on the
//! system's link hierarchy (plan/parallel_cluster.hpp), checked against the
//! device's memory and an optional budget of bytes sent, reduced to its Pareto
//! front over (step time, energy, device bytes, bytes sent, dollars), and the
//! best for the objective chosen, with the explanation: what binds pure data
//! parallelism (the untraded plan), what each slot the choice moved traded, and
//! for each layout one slot away what beat it.
//! The untraded plan is pure data parallelism, or where the batch does not
//! split over every GPU, the fewest pipeline stages that let it (untraded_layout).
//!
//!   const auto s = plan::presets::dgx_h100();
//!   auto r = plan::plan_parallel(s, plan::presets::llm_70b(), {.gpus = 64});
//!   r.chosen().plan.layout;  r.chosen().cost.step.step;  r.explanation.trades;
//!
//! Topology is the step model's: a group whose span (tensor innermost, then
//! context and data, the pipeline outermost) fits the scale-up domain uses its link, one that
//! crosses it the scale-out link, so tensor parallelism past the domain prices
//! itself out rather than being forbidden.
//!
//! The space, per slot:
//!  - tp: divisors of g that the step model accepts (heads, KV heads, FFN);
//!  - pp: divisors of g/tp up to the layers; vpp: 1, or with pp > 1 each v > 1
//!    with pp·v dividing the layers (Megatron's interleaving needs equal chunks);
//!  - cp: divisors of g/(tp·pp) that divide the sequence; dp what is left;
//!  - micro-batch 1, 2, 4, 8 (dividing the replica's share of the batch);
//!  - recomputation none, selective (not under FlashAttention, where it redoes
//!    nothing), full; and where recomputing none does not fit and every layer
//!    does, the fewest layers of each chunk that fit (recompute_layers, found by
//!    bisection: memory falls as time rises); where every layer alone does not
//!    fit, the uniform method's group that holds least (leanest_uniform_group);
//!    sp off, and on with tp > 1;
//!  - ZeRO 0-3 (3 only without a pipeline, as the step model refuses it; 0 only
//!    when no data or context ranks share the weights);
//!  - optimizer states on the device, or offloaded to the system's second tier
//!    (ZeRO-Offload), which must hold them;
//!  - a mixture of experts' ep: each divisor of the experts that divides a stage's tp·cp·dp ranks, experts
//!    whole on a rank (etp = 1), sequence parallel with tp > 1 (for_each_expert_split);
//!  - the gradient codec of the data-parallel reduction (where data or context
//!    ranks share weights): the codecs the system's devices run
//!    (default_codecs_for), or a measured profile's, as the data-parallel
//!    planner (plan/planner.hpp) prices them; one that adds more relative error
//!    than the workload's error_budget is priced and refused.

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/detail/measured_gemm.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/layout_tiling.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/workload.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct parallel_plan {
  model::parallel_layout layout;
  friend bool operator==(const parallel_plan&, const parallel_plan&) = default;
};

struct parallel_cost {
  resource_vector total;  //!< per GPU and step: model FLOPs, bytes sent, device bytes, energy, step time
  model::parallel_step_cost step;
  double dollars = 0;  //!< one GPU (and its device memory, where priced) rented for the step
};

struct parallel_options {
  std::size_t gpus = 0;  //!< GPUs to lay out; 0: the workload's ranks (data_parallel, else the system's devices)
  plan::objective objective = objective::time;
  std::optional<bytes> link_budget = std::nullopt;  //!< most bytes a GPU may send per step
  //! Fraction of device memory kept free (the allocator's fragmentation, library workspaces, NCCL's buffers):
  //! a layout must fit in the rest. 0 by default: no published figure fits every stack; measure yours.
  double memory_headroom = 0;
  //! The gradient codecs to try, "identity" among them; empty: the codecs the system's devices run
  //! (default_codecs_for). `trinity calibrate --out profile.json` measures them on the machine at hand.
  std::vector<model::compressor_cost> codecs = {};
};

using parallel_evaluated = candidate<parallel_plan, parallel_cost>;
using parallel_plan_result = result<parallel_plan, parallel_cost>;

//! The step model's job for a training workload: its shape, and `global_batch` sequences a step (the
//! workload's, else its batch per rank times `ranks`).
inline model::training_job job_of(const training_workload& w, std::size_t ranks) {
  trinity::detail::require(w.shape.has_value(), "workload",
                           "has no transformer shape; give heads, ffn_hidden and vocabulary (docs/parallelism.md)");
  model::training_job j;
  j.shape = *w.shape;
  j.sequence = w.sequence;
  j.global_batch = w.global_batch ? w.global_batch : w.batch * ranks;
  j.precision = w.precision;
  j.flash_attention = w.flash_attention;
  j.dropout = w.dropout;
  j.overlap_dp = w.overlap;
  j.fp8 = w.compute_precision == "fp8";
  j.fp8_params = w.fp8_params;
  j.expert_imbalance = w.expert_imbalance;
  j.capacity_factor = w.capacity_factor;
  j.cross_entropy = w.cross_entropy;
  return j;
}

//! The cluster a system is to the step model, with the device's GEMM curve and the measured κ.
inline model::training_cluster cluster_of(const system& s, const training_workload& w) {
  auto c = cluster_of(s, s.device.gemm, detail::measured_elementwise_traffic, w.compute_precision);
  c.attention = attention_kernel_curve(s, w.attention_kernel, "workload.attention_kernel");
  c.stack = w.stack.constants;
  return c;
}

//! The cluster a layout must fit: the system's, its device memory less `o.memory_headroom` of it.
inline model::training_cluster usable_cluster(const system& s, const training_workload& w, const parallel_options& o) {
  trinity::detail::require(o.memory_headroom >= 0 && o.memory_headroom < 1, "memory_headroom",
                           "is the fraction of device memory kept free: at least 0 and below 1");
  auto c = cluster_of(s, w);
  c.memory = c.memory * (1.0 - o.memory_headroom);
  return c;
}

//! The cost of the gradient codec `name` (empty: the gradient uncoded) among `codecs`; an unknown name is refused
//! with the names there are.
inline const model::compressor_cost& gradient_codec(const std::vector<model::compressor_cost>& codecs,
                                                    const std::string& name) {
  const std::string& want = name.empty() ? model::uncoded_gradient().name : name;
  for (const auto& c : codecs)
    if (c.name == want) return c;
  std::vector<std::string_view> names;
  for (const auto& c : codecs)
    if (!model::is_uncoded(c)) names.push_back(c.name);
  names.push_back("none");
  throw invalid_input("codec", "\"" + name + "\" is not a gradient codec here" +
                                   trinity::detail::suggestion(name, names) +
                                   " (the system's devices' codecs, or --profile's)");
}

//! The codecs a layout search on `s` tries: `o.codecs`, or the ones the system's devices run; each validated,
//! "identity" (the gradient uncoded, the untraded choice) among them.
inline std::vector<model::compressor_cost> codecs_of(const system& s, const parallel_options& o) {
  auto codecs = o.codecs.empty() ? default_codecs_for(s) : o.codecs;
  detail::identity_codec(codecs, ": the gradient uncoded, the untraded choice");
  return codecs;
}

//! One layout's step on the cluster, its gradient codec's cost taken from `codecs`.
inline model::parallel_step_cost price(const model::training_job& j, const model::training_cluster& c,
                                       const model::parallel_layout& l,
                                       const std::vector<model::compressor_cost>& codecs) {
  return model::price(j, c, l, gradient_codec(codecs, l.codec));
}

//! "tp=8 inside a scale-up domain of 8 (nvlink4-x18)": where a group of `span` GPUs talks.
inline std::string where(const system& s, const model::training_cluster& c, std::size_t span) {
  if (span <= c.domain)
    return "inside a scale-up domain of " +
           (c.domain == static_cast<std::size_t>(-1) ? std::to_string(s.device.count) : std::to_string(c.domain)) +
           " (" + s.interconnect.name + ")";
  return "across scale-up domains (" + (s.scale_out ? s.scale_out->name : s.interconnect.name) + ")";
}

namespace detail {

//! The micro-batches the searches try.
inline constexpr std::size_t searched_micro_batches[] = {1, 2, 4, 8};

//! The recomputation policy and sequence parallelism of layout l, each combination worth pricing, as f(l):
//! selective recomputation saves nothing under FlashAttention (it keeps no scores) and still costs the core's
//! forward again, so none beats it there; and sp needs tp > 1.
template <class F>
void for_each_policy(model::parallel_layout l, bool flash_attention, F&& f) {
  static constexpr model::recomputation policies[] = {model::recomputation::none, model::recomputation::selective,
                                                      model::recomputation::full};
  for (const auto r : policies) {
    if (r == model::recomputation::selective && flash_attention) continue;
    l.recompute = r;
    for (int sp = 0; sp <= (l.tp > 1 ? 1 : 0); ++sp) {
      l.sequence_parallel = sp == 1;
      f(l);
    }
  }
}

//! The expert splits of layout l worth pricing, as f(l): a dense model's l as it is; a mixture of experts'
//! every ep dividing both its experts and a stage's tp·cp·dp ranks, each expert whole on its rank (etp = 1, the
//! split Megatron-Core's folding favours), with sequence parallelism wherever tp > 1 (which it needs).
template <class F>
void for_each_expert_split(const model::transformer_shape& m, model::parallel_layout l, F&& f) {
  if (!m.moe()) return f(l);
  if (l.tp > 1 && !l.sequence_parallel) return;
  const std::size_t ranks = l.tp * l.cp * l.dp;
  for (l.ep = 1; l.ep <= std::min(m.experts, ranks); ++l.ep)
    if (m.experts % l.ep == 0 && ranks % l.ep == 0) f(l);
}

//! The layout search as the engine sees it.
struct parallel_problem {
  // The layout's degrees move together (a degree alone may not divide the GPUs): one slot.
  struct layout {
    using spends = resources::bandwidth;
    using saves = resources::memory;
    static constexpr std::string_view name = "parallel layout";
    static auto& of(parallel_plan& p) { return p.layout; }
  };
  using slots = slot_list<layout>;
  using plan_type = parallel_plan;
  using cost_type = parallel_cost;
  static constexpr const char* time_word = "step time";

  const system& s;
  const training_workload& w;
  const parallel_options& o;
  model::training_job job;
  model::training_cluster cluster;
  std::size_t gpus = 0;
  std::vector<model::compressor_cost> ks;  //!< the gradient codecs, "identity" among them

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return ks; }
  [[nodiscard]] model::parallel_step_cost step_of(const model::parallel_layout& l) const {
    return plan::price(job, cluster, l, ks);
  }

  //! No layout to price: where the GPU count is one no layout tiles, that, and the nearest count one does.
  void no_plans() const {
    if (!layouts_tile(job, gpus)) refuse_untiled(job, gpus);
  }

  template <class F>
  void for_each_plan(F&& f) const {
    for_each_frame(job.shape, gpus, [&](model::parallel_layout l) {
      for (l.cp = 1; l.cp <= gpus / (l.tp * l.pp); ++l.cp) {
        if ((gpus / (l.tp * l.pp)) % l.cp != 0 || job.sequence % l.cp != 0) continue;
        l.dp = gpus / (l.tp * l.pp * l.cp);
        for (const std::size_t mbs : searched_micro_batches) {
          l.micro_batch = mbs;
          if (job.global_batch % (l.dp * mbs) != 0) continue;
          if (l.vpp > 1 && (job.global_batch / (l.dp * mbs)) % l.pp != 0) continue;
          // Without data or context ranks there is nothing for ZeRO to shard: one stage only, 0, or 1 where
          // fp8_params needs the distributed optimizer (which then shards over the one rank).
          const int least = model::least_zero_stage(job);
          const int most = l.dp * l.cp == 1 ? least : l.pp > 1 ? 2 : 3;
          for (l.zero_stage = least; l.zero_stage <= most; ++l.zero_stage)
            for_each_policy(l, job.flash_attention, [&](model::parallel_layout y) {
              for_each_expert_split(job.shape, y, [&](model::parallel_layout x) {
                // Optimizer states on the device, and where the system has a tier below it, offloaded there.
                for (int off = 0; off <= (cluster.host_memory > bytes{} ? 1 : 0); ++off) {
                  x.offload = off == 1;
                  x.codec.clear();
                  // Every layer recomputed alone, and where worth pricing the block method's fewest layers and
                  // the uniform method's leanest groups.
                  using model::recompute_method;
                  x.recompute_layers.reset(), x.recompute_method = recompute_method::block;
                  const std::pair<std::optional<std::size_t>, recompute_method> ways[] = {
                      {std::nullopt, recompute_method::block},
                      {fewest_recomputed_to_fit(x), recompute_method::block},
                      {leanest_uniform_group(x), recompute_method::uniform}};
                  for (std::size_t way = 0; way < std::size(ways); ++way) {
                    const auto& [layers, method] = ways[way];
                    if (way > 0 && !layers) continue;
                    x.recompute_layers = layers, x.recompute_method = method;
                    // A gradient codec only where ranks share weights and so reduce a gradient.
                    for (const auto& k : ks) {
                      if (!model::is_uncoded(k) && l.dp * l.cp == 1) continue;
                      x.codec = model::is_uncoded(k) ? std::string() : k.name;
                      f(parallel_plan{x});
                    }
                  }
                }
              });
            });
        }
      }
    });
  }

  //! Under full recomputation, the fewest of each chunk's layers recomputed (Megatron-Core's block method) that fit
  //! the device where recomputing none does not. Memory falls and time rises with each layer recomputed, so of the
  //! blocks this is the fastest that fits; none where no block is worth pricing (recomputing nothing fits, every
  //! layer does not, or a chunk holds one layer).
  [[nodiscard]] std::optional<std::size_t> fewest_recomputed_to_fit(model::parallel_layout x) const {
    if (x.recompute != model::recomputation::full) return {};
    const auto stages = model::pipeline_stage_layers(job.shape.layers, x);
    const std::size_t v = x.pp > 1 ? x.vpp : 1,
                      chunk = (std::max({stages.first, stages.middle, stages.last}) + v - 1) / v;
    if (chunk <= 1) return {};
    const auto fits = [&](const model::parallel_layout& y) { return step_of(y).device_bytes <= cluster.memory; };
    auto none = x;
    none.recompute = model::recomputation::none;
    if (fits(none) || !fits(x)) return {};
    // The least n below a chunk's layers that fits; hi = chunk stands for none (a block of a whole chunk is full
    // recomputation, but for a prediction module, which the block method leaves unrecomputed).
    std::size_t lo = 1, hi = chunk;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      x.recompute_layers = mid;
      if (fits(x))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo >= chunk) return {};
    return lo;
  }

  //! Under full recomputation, where recomputing every layer alone does not fit the device, the group of the
  //! uniform method (Megatron-Core's --recompute-method uniform) that holds the least and fits: a chunk of C layers
  //! keeps one input a group and rebuilds a group at once, so memory falls with the groups and then rises with their
  //! size, every size from 2 to C priced (the stages' chunks differ, so no closed form picks it). None where nothing
  //! fits, every layer alone does, or a chunk holds one layer. Its time is full recomputation's whatever the group.
  [[nodiscard]] std::optional<std::size_t> leanest_uniform_group(model::parallel_layout x) const {
    if (x.recompute != model::recomputation::full) return {};
    const auto stages = model::pipeline_stage_layers(job.shape.layers, x);
    const std::size_t v = x.pp > 1 ? x.vpp : 1,
                      chunk = (std::max({stages.first, stages.middle, stages.last}) + v - 1) / v;
    x.recompute_layers.reset(), x.recompute_method = model::recompute_method::block;
    if (chunk <= 1 || step_of(x).device_bytes <= cluster.memory) return {};
    x.recompute_method = model::recompute_method::uniform;
    std::optional<std::size_t> best;
    bytes least{};
    for (std::size_t n = 2; n <= chunk; ++n) {
      x.recompute_layers = n;
      const bytes held = step_of(x).device_bytes;
      if (held <= cluster.memory && (!best || held < least)) best = n, least = held;
    }
    return best;
  }

  [[nodiscard]] parallel_cost price(const parallel_plan& p) const {
    parallel_cost c;
    c.step = step_of(p.layout);
    const auto& r = c.step;
    const auto& l = p.layout;
    const double n = static_cast<double>(l.gpus());
    const bytes sent = r.tp_bytes + r.cp_bytes + r.pp_bytes + r.dp_bytes + r.ep_bytes + r.embedding_bytes;
    const seconds busy =
        r.gemm + r.attention + r.elementwise + r.recompute + r.codec + (p.layout.offload ? seconds{} : r.optimizer);
    // Bytes cost the energy of the link their group uses (model::span: tensor innermost, the pipeline outermost).
    const auto energy_of = [&](model::layout_group g) {
      return model::span(l, g) <= cluster.domain || !s.scale_out ? s.interconnect.energy : s.scale_out->energy;
    };
    c.total.compute = flops{r.model_flops.value() / n};
    c.total.bandwidth = sent;
    c.total.memory = r.device_bytes;
    c.total.time = r.step;
    c.total.energy =
        busy * s.device.power + (r.step - busy) * s.device.idle_power +
        r.tp_bytes * energy_of(model::layout_group::tensor) + r.cp_bytes * energy_of(model::layout_group::context) +
        (r.pp_bytes + r.embedding_bytes) * energy_of(model::layout_group::pipeline) +
        r.dp_bytes * energy_of(model::layout_group::stage) + r.ep_bytes * energy_of(model::layout_group::expert) +
        (l.offload ? r.offload_bytes * s.tiers[1].energy : joules{});
    c.dollars = plan::dollars(s, r.step, {r.device_bytes}, sent);
    return c;
  }

  [[nodiscard]] std::string check(const parallel_plan& p, const parallel_cost& c) const {
    if (!p.layout.codec.empty()) {
      const double error = gradient_codec(ks, p.layout.codec).relative_error;
      if (error > w.error_budget)
        return "error budget: " + p.layout.codec + " adds relative error " + units::detail::format_number(error) +
               ", more than " + units::detail::format_number(w.error_budget);
    }
    if (c.total.memory > cluster.memory)
      return s.tiers[0].name + " capacity: needs " + to_string(c.total.memory) + " per GPU of " +
             to_string(cluster.memory) +
             (o.memory_headroom > 0
                  ? " (" + to_string(s.tiers[0].capacity) + " less " + pct(o.memory_headroom) + " headroom)"
                  : "");
    if (c.step.offloaded > cluster.host_memory)
      return s.tiers[1].name + " capacity: offloads " + to_string(c.step.offloaded) + " per GPU of " +
             to_string(cluster.host_memory);
    if (o.link_budget && c.total.bandwidth > *o.link_budget)
      return "interconnect budget: sends " + to_string(c.total.bandwidth) + " per GPU and step, more than " +
             to_string(*o.link_budget);
    return {};
  }

  model::parallel_layout base;  //!< the untraded layout (untraded_layout)
  [[nodiscard]] bool is_baseline(const parallel_plan& p) const { return p.layout == base; }

  // Lexicographic: the objective, the runner-up, device bytes, bytes sent.
  [[nodiscard]] bool better(const parallel_evaluated& a, const parallel_evaluated& b) const {
    const auto key = [&](const parallel_evaluated& e) {
      return std::array<double, 4>{score(e.cost, o.objective), score(e.cost, runner_up(o.objective)),
                                   e.cost.total.memory.value(), e.cost.total.bandwidth.value()};
    };
    return key(a) < key(b);
  }
  [[nodiscard]] std::array<double, 5> pareto_keys(const parallel_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.total.memory.value(), c.total.bandwidth.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const parallel_plan& p) const { return model::to_string(p.layout); }

  // What dominates the step, or what the layout runs out of.
  [[nodiscard]] std::string binding(const parallel_evaluated& e) const {
    if (!e.fits()) return e.violation;
    const auto& r = e.cost.step;
    const std::pair<double, const char*> parts[] = {{(r.gemm + r.attention).value(), "matrix multiplies"},
                                                    {r.elementwise.value(), "memory-bound work"},
                                                    {r.recompute.value(), "recomputation"},
                                                    {r.tp_comm.value(), "tensor-parallel collectives"},
                                                    {r.ep_comm.value(), "the experts' all-to-alls"},
                                                    {r.cp_comm.value(), "the context ring"},
                                                    {r.pp_comm.value(), "pipeline sends"},
                                                    {r.bubble.value(), "the pipeline bubble"},
                                                    {r.dp_comm.value(), "the data-parallel reduction"},
                                                    {r.optimizer.value(), "the optimizer step"},
                                                    {r.offload.value(), "the optimizer offload traffic"},
                                                    {r.codec.value(), "gradient coding"},
                                                    {r.embedding_sync.value(), "the embedding all-reduce"}};
    const auto top = *std::max_element(std::begin(parts), std::end(parts));
    return std::string(top.second) + " (" + pct(top.first / r.step.value()) + " of a " + to_string(r.step) +
           " step, MFU " + pct(r.mfu) + "); " + s.tiers[0].name + " " + pct(r.device_bytes / cluster.memory) + " full";
  }

  // From the baseline to the choice one slot at a time, in the order a reader takes them; a slot whose
  // layout cannot run alone (a batch that does not split, say) is taken with the next.
  [[nodiscard]] std::vector<std::string> trades(const parallel_plan_result& r) const {
    std::vector<std::string> out;
    const auto& want = r.chosen().plan.layout;
    auto at = r.candidates[r.baseline].plan.layout;
    if (at == want) return {"none: the untraded layout is already the best that fits"};
    model::parallel_step_cost from = r.candidates[r.baseline].cost.step;
    std::string pending;
    const auto move = [&](bool changed, auto&& change, const std::string& what) {
      if (!changed) return;
      change(at);
      at.dp = gpus / (at.tp * at.pp * at.cp);
      pending += (pending.empty() ? "" : "; ") + what;
      if (model::check_layout(job, at)) return;
      const auto to = step_of(at);
      out.push_back(pending + ": device memory " + to_string(from.device_bytes) + " -> " + to_string(to.device_bytes) +
                    " per GPU, step time " + to_string(from.step) + " -> " + to_string(to.step));
      from = to;
      pending.clear();
    };
    const auto& c = cluster;
    move(
        want.tp != at.tp || want.sequence_parallel != at.sequence_parallel,
        [&](model::parallel_layout& l) {
          l.tp = want.tp;
          l.sequence_parallel = want.sequence_parallel;
        },
        "tensor parallelism tp=" + std::to_string(want.tp) +
            (want.sequence_parallel ? " with sequence parallelism" : "") + " " + where(s, c, want.tp) +
            " (bandwidth for memory: weights and activations split " + std::to_string(want.tp) + " ways)");
    move(
        want.cp != at.cp, [&](model::parallel_layout& l) { l.cp = want.cp; },
        "context parallelism cp=" + std::to_string(want.cp) + " " + where(s, c, want.tp * want.cp) +
            " (bandwidth for memory: the sequence split " + std::to_string(want.cp) + " ways)");
    move(
        want.pp != at.pp || want.vpp != at.vpp || want.first_stage_layers != at.first_stage_layers ||
            want.last_stage_layers != at.last_stage_layers || want.pipeline_layout != at.pipeline_layout,
        [&](model::parallel_layout& l) {
          l.pp = want.pp;
          l.vpp = want.vpp;
          l.first_stage_layers = want.first_stage_layers;
          l.last_stage_layers = want.last_stage_layers;
          l.pipeline_layout = want.pipeline_layout;
        },
        "pipeline pp=" + std::to_string(want.pp) +
            (want.vpp > 1 ? " interleaved vpp=" + std::to_string(want.vpp) : "") + " " +
            where(s, c, want.tp * want.cp * want.pp) + " (bandwidth and a bubble for memory: layers split " +
            std::to_string(want.pp) + " ways)");
    move(
        want.zero_stage != at.zero_stage, [&](model::parallel_layout& l) { l.zero_stage = want.zero_stage; },
        "ZeRO stage " + std::to_string(want.zero_stage) + " over the " + std::to_string(want.dp * want.cp) +
            " data and context ranks (bandwidth for memory)");
    move(
        want.offload != at.offload, [&](model::parallel_layout& l) { l.offload = want.offload; },
        "optimizer states offloaded to " + (s.tiers.size() > 1 ? s.tiers[1].name : std::string("the host")) +
            " (bandwidth to it for device memory)");
    move(
        want.codec != at.codec, [&](model::parallel_layout& l) { l.codec = want.codec; },
        (want.codec.empty() ? std::string("gradients uncoded") : want.codec + " gradients") +
            " over the data-parallel group (" +
            (want.codec.empty() ? "bandwidth for compute)" : "compute for bandwidth)"));
    move(
        want.ep != at.ep || want.etp != at.etp,
        [&](model::parallel_layout& l) {
          l.ep = want.ep;
          l.etp = want.etp;
        },
        "expert parallelism ep=" + std::to_string(want.ep) + (want.etp > 1 ? ",etp=" + std::to_string(want.etp) : "") +
            " " + where(s, c, want.ep * want.etp) + " (bandwidth for memory: each GPU holds " +
            std::to_string(job.shape.experts / want.ep) + " of the " + std::to_string(job.shape.experts) +
            " experts, and every MoE layer sends its tokens to them and back)");
    move(
        want.recompute != at.recompute || want.recompute_layers != at.recompute_layers ||
            want.recompute_method != at.recompute_method,
        [&](model::parallel_layout& l) {
          l.recompute = want.recompute;
          l.recompute_layers = want.recompute_layers;
          l.recompute_method = want.recompute_method;
        },
        std::string(to_string(want.recompute)) + " recomputation" +
            (!want.recompute_layers ? ""
             : want.recompute_method == model::recompute_method::uniform
                 ? " in groups of " + std::to_string(*want.recompute_layers) +
                       " layers, one input kept a group (the uniform method)"
                 : " of " + std::to_string(*want.recompute_layers) + " layers a chunk") +
            " (compute for memory)");
    move(
        want.micro_batch != at.micro_batch, [&](model::parallel_layout& l) { l.micro_batch = want.micro_batch; },
        "micro-batches of " + std::to_string(want.micro_batch) + " (memory for compute: larger matrix multiplies" +
            (want.pp > 1 ? ", fewer micro-batches to fill the pipeline)" : ")"));
    return out;
  }

  [[nodiscard]] std::string tie_note(const parallel_evaluated& e, const parallel_evaluated& chosen) const {
    const auto& a = e.cost.total;
    const auto& b = chosen.cost.total;
    return detail::as_good(o.objective) + ", but " +
           (a.memory > b.memory ? "holds " + to_string(a.memory) + " per GPU vs " + to_string(b.memory)
                                : "sends " + to_string(a.bandwidth) + " per GPU vs " + to_string(b.bandwidth));
  }

  // Layouts one slot away: one degree, the micro-batch, the policy, sp or the stage moved (dp follows).
  [[nodiscard]] bool neighbour(const parallel_plan_result& r, std::size_t i) const {
    const auto& q = r.candidates[i].plan.layout;
    const auto& p = r.chosen().plan.layout;
    return (q.tp != p.tp) + (q.pp != p.pp) + (q.vpp != p.vpp) + (q.cp != p.cp) + (q.micro_batch != p.micro_batch) +
               (q.recompute != p.recompute || q.recompute_layers != p.recompute_layers ||
                q.recompute_method != p.recompute_method) +
               (q.sequence_parallel != p.sequence_parallel) + (q.zero_stage != p.zero_stage) +
               (q.offload != p.offload) + (q.codec != p.codec) + (q.ep != p.ep || q.etp != p.etp) ==
           1;
  }

  [[noreturn]] void none_fits(const parallel_plan_result& r) const {
    const parallel_evaluated* lean = &r.candidates.front();
    for (const auto& e : r.candidates)
      if (e.cost.total.memory < lean->cost.total.memory) lean = &e;
    throw invalid_input("workload",
                        "no layout of " + std::to_string(gpus) + " GPUs fits " + s.name + ": the leanest, " +
                            describe(lean->plan) + ", breaks the " + lean->violation +
                            ". Fix: more GPUs (--gpus), a smaller global batch or sequence, or more memory");
  }
};

}  // namespace detail

//! Pure data parallelism (DDP, one sequence a micro-batch, nothing recomputed; the distributed optimizer, ZeRO-1,
//! where fp8_params needs it), or where dp = g does not split the batch, the fewest pipeline stages that make
//! it split: the plan the search trades from.
inline model::parallel_layout untraded_layout(const model::training_job& j, std::size_t gpus) {
  model::parallel_layout l;
  l.zero_stage = model::least_zero_stage(j);
  for (l.pp = 1; l.pp <= gpus; ++l.pp) {
    if (gpus % l.pp != 0) continue;
    l.dp = gpus / l.pp;
    if (!model::check_layout(j, l)) return l;
  }
  l.pp = 1;
  l.dp = gpus;
  return l;
}

//! Searches every layout of the workload on `o.gpus` GPUs of the system (past its device count only over a
//! scale-out link) and picks the best for the objective.
inline parallel_plan_result plan_parallel(const system& s, const training_workload& w, const parallel_options& o = {}) {
  validate(s);
  trinity::detail::require(w.shape.has_value(), "workload",
                           w.name +
                               " has no transformer shape; give heads, ffn_hidden and vocabulary (docs/parallelism.md) "
                               "to search parallel layouts");
  const std::size_t gpus = o.gpus ? o.gpus : w.ranks(s);
  trinity::detail::require(gpus <= 1'000'000, "gpus", "at most 1,000,000");
  trinity::detail::require(s.scale_out.has_value() || gpus <= s.device.count, "gpus",
                           std::to_string(gpus) + " GPUs, and " + s.name + " has " + std::to_string(s.device.count) +
                               " in one domain with no scale-out link. Fix: at most " + std::to_string(s.device.count) +
                               ", or a system with scale_out");
  trinity::detail::require(!o.link_budget || o.link_budget->value() >= 0, "link_budget", "must not be negative");
  detail::require_prices(s, o.objective);
  const auto job = job_of(w, gpus);
  model::validate(job.shape);
  const detail::parallel_problem p{
      s, w, o, job, usable_cluster(s, w, o), gpus, codecs_of(s, o), untraded_layout(job, gpus)};
  return solve(p, {.objective = o.objective, .link_budget = o.link_budget});
}

}  // namespace trinity::plan
