#pragma once
//! \file
//! What one training step of a transformer costs under a hybrid layout:
//! t-way tensor parallelism (with or without sequence parallelism), p pipeline
//! stages of v model chunks each, c-way context parallelism, d-way data
//! parallelism with a ZeRO stage over the d·c ranks that hold the same weights,
//! micro-batches of b sequences, and a recomputation policy. Megatron-LM's
//! mechanisms as Narayanan et al. (SC'21) and Korthikanti et al. (2022)
//! describe them. Per micro-batch, on the stage that binds:
//!  - matrix multiplies at the device's GEMM efficiency for their shape
//!    (model/gemm.hpp): forward, and backward's data and weight gradients;
//!  - the attention core (QKᵀ and the weighted sum of V, full s² as
//!    Narayanan et al. count it) at the efficiency of its batched shape; with
//!    flash_attention, one fused causal kernel (model/fused_attention.hpp):
//!    half the s² work forward, 2.5 times that backward, at the device's
//!    measured kernel curve by sequence and head dimension; a layer with a
//!    sliding window of w does s·w − w²/2 of the pairs, at the curve's rate
//!    for a sequence of 2w;
//!  - memory-bound work (norms, softmax, dropout, activation functions,
//!    residuals): κ bytes of device-memory traffic per byte of activations
//!    the layer keeps, at the memory's bandwidth;
//!  - tensor-parallel all-reduces (or all-gather + reduce-scatter with sequence
//!    parallelism, the same ring time): two per layer forward, two backward;
//!  - context parallelism's ring: each rank passes its K and V chunk c − 1
//!    times forward; backward, K and V go round again with their gradients,
//!    which then take one more hop home (parallel/context_parallel.hpp), the
//!    whole hidden behind the attention core where it is shorter;
//!  - pipeline sends of the activation between stages, split t ways
//!    (Narayanan et al.'s scatter/gather), forward and backward, v times with
//!    interleaving;
//!  - a mixture of experts' layers (every moe_layer_frequency-th) run the experts' block in place of the
//!    MLP (model/moe_layer.hpp): the router, the grouped expert GEMMs at their small per-expert shapes, the
//!    token all-to-alls over the ep ranks, four a layer, at the busiest rank's load, and the memory-bound
//!    copies that put the rows in order for them and back; the routed experts'
//!    weights shard over the expert-parallel ranks and reduce over the expert-data-parallel ones;
//!  - on the last stage, the logits and the cross entropy over them, memory-bound in fp32
//!    (model/cross_entropy.hpp);
//!  - full recomputation runs the forward (its all-reduces and context ring too) again, of every layer, or of the first
//!    recompute_layers of each chunk (Megatron-Core's block method; the chunk's other layers keep their
//!    activations and run once), or of every layer in groups of recompute_layers (its uniform method: a chunk
//!    keeps one input a group, and a group's backward holds the whole group rebuilt);
//!    selective recomputation runs the attention core again, its ring with it (a fused one too, for no memory saved);
//!    single modules (the norms, the experts' activation, latent attention's up-projections:
//!    model/recompute_modules.hpp) run again in place of keeping their outputs.
//! A step is m micro-batches plus the bubble (p − 1)/(m·v) of them, then the
//! data-parallel gradient reduction and ZeRO's parameter all-gathers (exposed
//! whole, or with overlap, bucket by bucket under the last micro-batch's
//! backward and the first one's forward, model/overlap.hpp; through a gradient
//! codec, model/gradient_reduction.hpp, whose coding is never hidden), then the
//! optimizer step (memory-bound: Adam reads and writes its states once).
//! Links: ranks are laid out as Megatron-Core lays them out, tensor-innermost,
//! then context and data, the pipeline outermost (model/parallel_layout.hpp's
//! span); a group whose span fits the fast domain (NVLink, NVL72) uses it,
//! otherwise the slower fabric, each at one direction of one GPU's port.
//! Memory per GPU (the larger of the first and last stage): weights, gradients
//! and optimizer states of the stage, sharded by the ZeRO stage over d·c; the
//! activations of the micro-batches in flight (1F1B keeps min(p, m) on the
//! first stage, times 1 + (p − 1)/(p·v) interleaved; Korthikanti et al. §4.2.3)
//! counted per tensor the layer keeps (below), with a recomputed layer's whole
//! set (or group's) during its backward; the last stage's fp32 logits.
//!
//! The model is split along its seams in model/training/ (activations, stages, the step's cost, the layout
//! checks, a layer's cost, the weights, the binding stage, the data-parallel collectives, memory, and the step);
//! this header includes them all.

#include <trinity/model/training/activations.hpp>
#include <trinity/model/training/binding_stage.hpp>
#include <trinity/model/training/data_parallel_cost.hpp>
#include <trinity/model/training/layer_cost.hpp>
#include <trinity/model/training/layout_checks.hpp>
#include <trinity/model/training/memory.hpp>
#include <trinity/model/training/stages.hpp>
#include <trinity/model/training/step.hpp>
#include <trinity/model/training/step_cost.hpp>
#include <trinity/model/training/weights.hpp>
