#pragma once
//! \file
//! What a training stack (Megatron-Core, PyTorch FSDP2, DeepSpeed, ...) adds to the step model's count of one
//! machine's work: the constants that differ between stacks on the same hardware. The hardware profile (the
//! device's GEMM and attention curves, plan/device_presets.hpp) says what the kernels can do; a stack says how
//! much of it its kernels and its framework get, and what its allocator holds beyond the tensors the model
//! counts. The defaults are the stack the model was fitted on (Megatron-Core: its curves are measured under it).
//! plan/training_stack.hpp names stacks and fits them to a user's runs (`trinity fit`).

#include <string>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

struct stack_constants {
  //! The share of the device's GEMM and fused attention curves the stack's kernels reach: below 1 where it runs
  //! other kernels (eager PyTorch, unfused epilogues) or loses the GPU to its own work between them.
  double matmul_share = 1;
  //! Per layer and pass (forward, backward, a recomputed forward): what the framework spends beyond the kernels'
  //! work (launches, hooks, Python), on the critical path.
  seconds layer_overhead{};
  //! Device bytes the allocator holds per byte the model counts: above 1 for its rounding, fragmentation and the
  //! temporaries the model does not list (weight-gradient buffers, communication buckets); below 1 where the stack
  //! keeps less than the model counts (a checkpointing policy that saves fewer activations than Megatron's).
  double memory_factor = 1;
  //! Per GPU beyond that: the CUDA context, cuBLAS and NCCL workspaces.
  bytes memory_overhead{};

  friend bool operator==(const stack_constants&, const stack_constants&) = default;
};

//! Throws invalid_input at `at`.<field> for a constant no stack can have. The field's name is built only on a
//! failure: the step model checks its stack on every pricing.
inline void validate(const stack_constants& k, const std::string& at = "stack") {
  if (!(k.matmul_share > 0 && k.matmul_share <= 1.5))
    throw invalid_input(at + ".matmul_share",
                        "must lie in (0, 1.5]: the share of the device's measured curves the stack's kernels reach");
  if (!(k.layer_overhead.value() >= 0 && k.layer_overhead.value() < 1))
    throw invalid_input(at + ".layer_overhead", "must be at least 0 s and under 1 s a layer and pass");
  if (!(k.memory_factor >= 0.25 && k.memory_factor <= 4))
    throw invalid_input(at + ".memory_factor", "must lie in [0.25, 4]: device bytes per byte the model counts");
  if (!(k.memory_overhead.value() >= 0 && k.memory_overhead.value() < 1e12))
    throw invalid_input(at + ".memory_overhead", "must be at least 0 B and under 1 TB");
}

}  // namespace trinity::model
