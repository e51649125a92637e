#pragma once
//! \file
//! What one training step costs on a GPU of the binding stage, part by part: what price() returns.
//! One seam of the training step model; model/parallel_training.hpp includes them all and says what a step costs.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/cross_entropy.hpp>
#include <trinity/model/fused_attention.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/gradient_reduction.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/pipeline_layout.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/units/quantity.hpp>
#include <trinity/model/training/stages.hpp>

namespace trinity::model {

//! The cost of one step, per GPU of the binding stage. Its times, gemm to codec, are the step's parts: they add up
//! to `step`, each second in one of them (a recomputed forward's collectives in `recompute`, not `tp_comm`).
struct parallel_step_cost {
  double micro_batches = 0;
  std::size_t flushes = 1;  //!< the pipeline flushes they ran in (parallel_layout::flushes)
  seconds gemm{}, attention{}, elementwise{}, recompute{};  //!< per step, summed over micro-batches
  seconds tp_comm{}, cp_comm{}, pp_comm{};                  //!< per step, on the critical path
  seconds ep_comm{};  //!< a mixture's all-to-alls (and expert tensor-parallel collectives), on the critical path
  seconds bubble{}, dp_comm{}, optimizer{};
  seconds offload{};  //!< gradient shard down, parameter shard up, per step
  seconds codec{};    //!< encoding and decoding the gradient, per step
  //! The word embedding's gradient summed between the pipeline's first and last stages, once a step
  //! (embedding_all_reduce); zero where they do not both hold it.
  seconds embedding_sync{};
  seconds step{};
  bytes tp_bytes{}, cp_bytes{}, pp_bytes{}, dp_bytes{};  //!< sent per GPU per step
  bytes ep_bytes{};                                      //!< the all-to-alls', sent per GPU per step
  bytes embedding_bytes{};  //!< the embedding all-reduce's, sent per GPU of the first or last stage per step
  bytes parameters{}, gradients{}, optimizer_states{}, activations{};  //!< per GPU, the fuller stage
  bytes offloaded{}, offload_bytes{};  //!< optimizer states held in the host tier; bytes moved to and from it a step
  bytes gradient_frame{};  //!< the fuller stage's gradient as its reduction sends it: bf16, or the codec's frame
  //! What one parameter all-gather assembles on a GPU, for the dense weights and the routed experts' (under ZeRO
  //! 1-3; the GEMM weights at a byte where fp8_params keeps them); zero where nothing is gathered.
  bytes gathered_dense{}, gathered_experts{};
  bytes allocator{};  //!< what the training stack's allocator holds beyond those (model/training_stack.hpp)
  bytes device_bytes{};
  flops model_flops{};  //!< per step, all GPUs: 3 passes, full s² (Narayanan et al.'s count without recomputation)
  double mfu = 0;       //!< model FLOPs over the step time and every GPU's peak
  std::size_t layers_per_stage = 0;  //!< the binding stage's
  std::size_t pipeline_stages = 1;
  stage_layers stages{};      //!< the layers the first, middle and last stages hold (pipeline_stage_layers)
  stage_layers recomputed{};  //!< of those, the layers recomputed in full (recomputed_stage_layers)
  //! The inputs those keep a micro-batch (checkpointed_stage_inputs), and the layers one backward rebuilds at once
  //! (rebuilt_group_layers): a recomputed layer's own, or under the uniform method one a group and its group.
  stage_layers checkpointed{};
  std::size_t rebuilt_group = 1;
  std::size_t prediction_modules = 0;  //!< multi-token prediction modules, on the last stage after its layers
  bool last_binds = true;       //!< whether the binding stage is the last, its layers and the logits (else the fullest)
  double stage_parameters = 0;  //!< Ψ: the fuller stage's parameters on one GPU, before ZeRO shards them
  double expert_parameters = 0;  //!< of Ψ, the routed experts', sharded over the expert-data-parallel ranks
  seconds dp_collectives{};      //!< the data-parallel collectives' whole time, before backward hides any of it
  bool overlap = false;          //!< whether they ran bucket by bucket under the passes (model/overlap.hpp)
  double buckets = 0;            //!< how many buckets, when they did
};

}  // namespace trinity::model
