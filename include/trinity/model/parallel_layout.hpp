#pragma once
//! \file
//! A hybrid parallel layout as the step model (model/parallel_training.hpp) prices it: tensor, pipeline (and
//! its interleaving), context, data and expert parallelism, the micro-batch, recomputation (of every layer, alone or
//! in groups, or of a chunk's first few), sequence parallelism, the ZeRO stage, offload, the gradient codec and
//! overlap, the layers of the pipeline's first and last stages (or of every chunk) where a run states them, the
//! pipeline flushes a step runs, and its `tp=..,pp=..` spelling.
//! (Recomputation: a policy, and single modules besides it, model/recompute_modules.hpp.)

#include <cstddef>
#include <optional>
#include <string>

#include <trinity/model/rank_layout.hpp>
#include <trinity/model/recompute_modules.hpp>
#include <trinity/model/transformer.hpp>

namespace trinity::model {

//! How full recomputation spends recompute_layers = n (Megatron-Core's --recompute-method): `block` recomputes the
//! first n layers of each model chunk, each alone, and keeps the others' activations; `uniform` recomputes every
//! layer, checkpointing the input of each group of n (a chunk's last group the layers left), so a chunk keeps fewer
//! inputs and its backward rebuilds a whole group at once.
enum class recompute_method { block, uniform };

inline const char* to_string(recompute_method m) { return m == recompute_method::block ? "block" : "uniform"; }

//! How a mixture's tokens reach their experts' ranks. `all_to_all`: Megatron-Core's alltoall dispatcher, a row a
//! token's choice to each rank holding the expert (parallel/expert_parallel.hpp). `by_node`: DeepEP's and HybridEP's
//! (Megatron-Core's flex dispatcher), a token crosses to another node once and reaches a rank once, however many of
//! its experts they hold (parallel/node_dispatch.hpp).
enum class token_dispatcher { all_to_all, by_node };

inline const char* to_string(token_dispatcher d) { return d == token_dispatcher::all_to_all ? "alltoall" : "deepep"; }

//! How the ranks split the work. tp·pp·cp·dp ranks in all; a mixture of experts' layers regroup the tp·cp·dp
//! ranks of a stage into ep-way expert parallelism of etp-way tensor-parallel experts over the rest
//! (Megatron-Core's "MoE parallel folding").
struct parallel_layout {
  std::size_t tp = 1, pp = 1, vpp = 1, cp = 1, dp = 1;
  std::size_t micro_batch = 1;  //!< sequences per micro-batch
  recomputation recompute = recomputation::none;
  bool sequence_parallel = false;
  int zero_stage = 0;    //!< over the dp·cp ranks that hold the same weights (1: Megatron's distributed optimizer)
  bool offload = false;  //!< optimizer states (and their update) in the host tier: ZeRO-Offload
  //! The gradient codec of the data-parallel reduction, by name (empty: the gradient as the trainer holds it).
  //! price() takes its cost: its ratio and its rates on the device.
  std::string codec = {};
  //! The data-parallel collectives bucket by bucket under the backward and forward passes (Megatron's
  //! --overlap-grad-reduce and --overlap-param-gather); unset: the job's default (training_job::overlap_dp).
  std::optional<bool> overlap = {};
  //! Expert parallelism: the experts spread over ep ranks, each expert's MLP split etp ways (a dense model: 1).
  std::size_t ep = 1, etp = 1;
  //! Single modules recomputed besides `recompute` (Megatron-Core's --recompute-modules). Last, so that the
  //! positional initialisers written before it keep their meaning.
  recompute_modules modules = {};
  //! The layers the first and the last pipeline stage hold, where the run states them (Megatron-Core's
  //! --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers): the other stages split the
  //! rest evenly. Unset: the split of pipeline_stage_layers (model/parallel_training.hpp).
  std::optional<std::size_t> first_stage_layers = {}, last_stage_layers = {};
  //! Every chunk's layers, as Megatron-Core's --pipeline-model-parallel-layout places them (`Et|(tt|)*30mL`,
  //! model/pipeline_layout.hpp), where the run states them; empty: the split above. It fixes vpp.
  std::string pipeline_layout = {};
  //! Under recompute=full, the layers of each model chunk recomputed, its first ones (Megatron-Core's
  //! --recompute-method block --recompute-num-layers N); the chunk's others keep their activations and run once.
  //! Under recompute_method uniform, the layers a checkpointed group holds. Unset: every layer, each alone (its
  //! --recompute-method uniform --recompute-num-layers 1).
  std::optional<std::size_t> recompute_layers = {};
  //! What recompute_layers counts (above). Last, for the positional initialisers before it.
  model::recompute_method recompute_method = model::recompute_method::block;
  //! How a mixture's tokens reach their experts (above). Last, for the positional initialisers before it.
  token_dispatcher dispatcher = token_dispatcher::all_to_all;
  //! The pipeline flushes a step's micro-batches run in: 1, as Megatron-Core runs them, all in one schedule; F, as
  //! PyTorch's pipeline schedules run gradient accumulation (NeMo AutoModel's GA: F schedule steps of m/F
  //! micro-batches each). Each flush fills and drains the pipeline, and ends in the data-parallel reduction its
  //! next one's forward gathers after: PyTorch's stage defers FSDP2's reduce-scatter to the last backward of a
  //! schedule step and keeps the gathered weights through it (torch/distributed/pipelining/stage.py,
  //! backward_maybe_with_nosync), so a flush pays ZeRO-1's collectives. Last, for the positional initialisers.
  std::size_t flushes = 1;
  //! The pipeline schedule, by name (model/pipeline_schedule.hpp's pipeline_schedules); empty: the list's first,
  //! 1F1B (interleaved with vpp > 1), as Megatron-Core runs. Last, for the positional initialisers.
  std::string schedule = {};

  [[nodiscard]] std::size_t gpus() const noexcept { return tp * pp * cp * dp; }
  friend bool operator==(const parallel_layout&, const parallel_layout&) = default;
};

//! Ranks are laid out as Megatron-Core lays them out (its default order tp-cp-ep-dp-pp; Megatron-LM's since
//! Narayanan et al. 2021): tensor innermost, then context, then data, the pipeline outermost, so
//! rank = t + tp·(c + cp·(d + dp·p)): shape (tp, cp, dp, pp), compact strides (model/rank_layout.hpp).
[[nodiscard]] constexpr parallel_ranks rank_layout_of(const parallel_layout& l) noexcept {
  return parallel_ranks::compact({l.tp, l.cp, l.dp, l.pp});
}

//! A stage's tp·cp·dp ranks regrouped for a mixture's experts (Megatron-Core's folding), expert tensor parallelism
//! innermost, then expert parallelism, then the ranks that hold the same expert slices. The stage's ranks must
//! split into ep·etp groups (check_layout's rule).
[[nodiscard]] constexpr expert_ranks expert_fold(const parallel_layout& l) noexcept {
  return expert_ranks::compact({l.etp, l.ep, l.tp * l.cp * l.dp / (l.ep * l.etp)});
}

//! The span of a group is how many consecutive ranks hold all of it: a group whose span fits the scale-up domain
//! talks over it. The tensor group spans tp ranks, the context group tp·cp, a pipeline stage (the data-parallel
//! ranks that share its weights, and the expert groups regrouped from them) tp·cp·dp, and a pipeline every rank:
//! its sends cross domains as soon as the job does. A mixture's expert group, regrouped inside a stage with expert
//! tensor parallelism innermost, spans ep·etp.
enum class layout_group { tensor, context, expert, stage, pipeline };
[[nodiscard]] inline std::size_t span(const parallel_layout& l, layout_group g) noexcept {
  const auto ranks = rank_layout_of(l);
  switch (g) {
    case layout_group::tensor:
      return ranks.span(rank_axis::tensor);
    case layout_group::context:
      return ranks.span(rank_axis::context);
    case layout_group::expert:
      return expert_ranks::compact({l.etp, l.ep, 1}).span(expert_axis::expert);
    case layout_group::stage:
      return ranks.span(rank_axis::data);
    case layout_group::pipeline:
      break;
  }
  return ranks.span(rank_axis::pipeline);
}

inline std::string to_string(const parallel_layout& l) {
  return "tp=" + std::to_string(l.tp) + ",pp=" + std::to_string(l.pp) + ",vpp=" + std::to_string(l.vpp) +
         ",cp=" + std::to_string(l.cp) + ",dp=" + std::to_string(l.dp) + ",mbs=" + std::to_string(l.micro_batch) +
         ",recompute=" + to_string(l.recompute) +
         (l.recompute_layers ? ",recompute_layers=" + std::to_string(*l.recompute_layers) : std::string()) +
         (l.recompute_method == recompute_method::uniform ? ",recompute_method=uniform" : "") +
         (l.modules.empty() ? std::string() : ",recompute_modules=" + to_string(l.modules)) +
         ",sp=" + (l.sequence_parallel ? "on" : "off") + ",zero=" + std::to_string(l.zero_stage) +
         (l.offload ? ",offload=on" : "") + (l.codec.empty() ? "" : ",codec=" + l.codec) +
         (l.overlap ? std::string(",overlap=") + (*l.overlap ? "on" : "off") : std::string()) +
         (l.ep > 1 || l.etp > 1 ? ",ep=" + std::to_string(l.ep) + ",etp=" + std::to_string(l.etp) : std::string()) +
         (l.dispatcher == token_dispatcher::by_node ? ",dispatcher=deepep" : "") +
         (l.flushes > 1 ? ",flushes=" + std::to_string(l.flushes) : std::string()) +
         (l.schedule.empty() ? std::string() : ",schedule=" + l.schedule) +
         (l.first_stage_layers ? ",first_stage_layers=" + std::to_string(*l.first_stage_layers) : std::string()) +
         (l.last_stage_layers ? ",last_stage_layers=" + std::to_string(*l.last_stage_layers) : std::string()) +
         (l.pipeline_layout.empty() ? std::string() : ",pipeline_layout=" + l.pipeline_layout);
}

}  // namespace trinity::model
