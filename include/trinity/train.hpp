#pragma once
//! \file
//! Umbrella for trinity/train/: the reference trainer (trinity-train's mechanism) as a library component. Its
//! config and placement, the perceptron and its recomputation, a pipeline rank's chunks and what they send and keep,
//! the data-parallel step and the world's vote on the optimizer step, the attention block, the mixture-of-experts
//! block with its dispatcher policies and shared experts, and checkpoints saved and resumed at any layout.
#include <trinity/train/any_reduction.hpp>
#include <trinity/train/attention_block.hpp>
#include <trinity/train/checkpoint.hpp>
#include <trinity/train/checkpoint_layout.hpp>
#include <trinity/train/config.hpp>
#include <trinity/train/data_parallel_pass.hpp>
#include <trinity/train/expert_checkpoint.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/moe_block.hpp>
#include <trinity/train/moe_parameters.hpp>
#include <trinity/train/pipeline_chunks.hpp>
#include <trinity/train/pipeline_prediction.hpp>
#include <trinity/train/placement.hpp>
#include <trinity/train/seeded_draws.hpp>
#include <trinity/train/shared_experts.hpp>
#include <trinity/train/step_vote.hpp>
#include <trinity/train/teacher_task.hpp>
#include <trinity/train/tensor_slices.hpp>
#include <trinity/train/token_dispatch.hpp>
