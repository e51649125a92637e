#pragma once
//! \file
//! What the step model predicts for one parallel layout, spelt out: the step time, where it goes and the bytes
//! per GPU, as a table (`trinity plan --parallelism`, `trinity validate --explain`) and as JSON.

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::workloads {

namespace detail {
// Which stage a step is priced on: the last (its layers, the logits and any prediction modules), or the fullest
// of the others.
inline const char* binding_stage(const model::parallel_step_cost& r) {
  return r.last_binds ? "last" : r.pipeline_stages > 2 ? "middle" : "first";
}

// Whether the layout recomputes some of each chunk's layers and not all (model::recomputed_stage_layers).
inline bool recomputes_some(const model::parallel_step_cost& r) {
  return r.recomputed != model::stage_layers{} && r.recomputed != r.stages;
}

// "5 of 32", or per stage "first 4 of 8, middle 6 of 8, last 2 of 4"; middle stages that hold different counts
// (a stated layout) as "middle 10 of 10 to 11", or "middle 9 of 10 to 10 of 11" where they count different ones:
// of each stage's layers, those `x` counts (the recomputed ones, or the inputs kept).
inline std::string recomputed_text(const model::parallel_step_cost& r, const model::stage_layers& x) {
  const auto& g = r.stages;
  const auto of = [](std::size_t a, std::size_t b) { return std::to_string(a) + " of " + std::to_string(b); };
  if (r.pipeline_stages == 1) return of(x.first, g.first);
  std::string middle;
  if (r.pipeline_stages > 2)
    middle = ", middle " + (g.middle_fewest == g.middle ? of(x.middle, g.middle)
                            : x.middle_fewest == x.middle
                                ? of(x.middle, g.middle_fewest) + " to " + std::to_string(g.middle)
                                : of(x.middle_fewest, g.middle_fewest) + " to " + of(x.middle, g.middle));
  return "first " + of(x.first, g.first) + middle + ", last " + of(x.last, g.last);
}
}  // namespace detail

//! The tokens a step trains and the GPUs that train them: what throughput a practitioner compares is made of.
struct step_tokens {
  double per_step = 0;   //!< global batch × sequence
  std::size_t gpus = 0;  //!< every GPU of the layout
  [[nodiscard]] double per_second(const model::parallel_step_cost& r) const {
    return r.step > seconds{} ? per_step / r.step.value() : 0.0;
  }
  [[nodiscard]] double per_gpu_second(const model::parallel_step_cost& r) const {
    return gpus ? per_second(r) / static_cast<double>(gpus) : 0.0;
  }
};

//! The tokens of `j`'s step on `gpus` GPUs.
inline step_tokens tokens_of(const model::training_job& j, std::size_t gpus) {
  return {static_cast<double>(j.global_batch) * static_cast<double>(j.sequence), gpus};
}

//! "4,210 tokens/s per GPU, 269,440 on the 64 GPUs": beside MFU, what training runs are compared by.
inline std::string throughput_text(const model::parallel_step_cost& r, const step_tokens& t) {
  return reports::whole_grouped(t.per_gpu_second(r)) + " tokens/s per GPU, " + reports::whole_grouped(t.per_second(r)) +
         " on the " + std::to_string(t.gpus) + " GPUs";
}

//! What the step model predicts for a layout: the step, its tokens a second, peak bytes per GPU, and where each
//! goes.
inline nlohmann::json parallel_predicted_json(const model::parallel_step_cost& r, const step_tokens& t) {
  return {{"step_time_s", r.step.value()},
          {"tokens_per_second", t.per_second(r)},
          {"tokens_per_second_per_gpu", t.per_gpu_second(r)},
          {"pipeline",
           {{"stages", r.pipeline_stages},
            {"first_layers", r.stages.first},
            {"middle_layers", r.stages.middle},
            {"middle_layers_fewest", r.stages.middle_fewest},
            {"last_layers", r.stages.last},
            {"prediction_modules", r.prediction_modules},
            {"flushes", r.flushes},
            {"binding", detail::binding_stage(r)}}},
          {"recomputed_layers",
           {{"first", r.recomputed.first},
            {"middle", r.recomputed.middle},
            {"middle_fewest", r.recomputed.middle_fewest},
            {"last", r.recomputed.last}}},
          {"checkpointed_inputs",
           {{"first", r.checkpointed.first},
            {"middle", r.checkpointed.middle},
            {"middle_fewest", r.checkpointed.middle_fewest},
            {"last", r.checkpointed.last},
            {"rebuilt_group_layers", r.rebuilt_group}}},
          {"device_bytes", r.device_bytes.value()},
          {"mfu", r.mfu},
          {"breakdown",
           {{"gemm_s", r.gemm.value()},
            {"attention_s", r.attention.value()},
            {"elementwise_s", r.elementwise.value()},
            {"recompute_s", r.recompute.value()},
            {"tensor_parallel_s", r.tp_comm.value()},
            {"expert_parallel_s", r.ep_comm.value()},
            {"context_parallel_s", r.cp_comm.value()},
            {"pipeline_p2p_s", r.pp_comm.value()},
            {"bubble_s", r.bubble.value()},
            {"data_parallel_s", r.dp_comm.value()},
            {"optimizer_s", r.optimizer.value()},
            {"offload_s", r.offload.value()},
            {"gradient_coding_s", r.codec.value()},
            {"embedding_all_reduce_s", r.embedding_sync.value()}}},
          {"memory",
           {{"parameters_bytes", r.parameters.value()},
            {"gradients_bytes", r.gradients.value()},
            {"optimizer_states_bytes", r.optimizer_states.value()},
            {"activations_bytes", r.activations.value()},
            {"allocator_bytes", r.allocator.value()},
            {"offloaded_bytes", r.offloaded.value()},
            {"expert_parameters", r.expert_parameters}}},
          {"offload_bytes_per_step", r.offload_bytes.value()},
          {"sent_per_gpu",
           {{"tensor_parallel_bytes", r.tp_bytes.value()},
            {"expert_parallel_bytes", r.ep_bytes.value()},
            {"context_parallel_bytes", r.cp_bytes.value()},
            {"pipeline_bytes", r.pp_bytes.value()},
            {"data_parallel_bytes", r.dp_bytes.value()},
            {"embedding_bytes", r.embedding_bytes.value()}}}};
}

//! The step's breakdown, its throughput and the memory per GPU, as a table.
inline void print_parallel_breakdown(std::ostream& out, const model::parallel_step_cost& r, bytes capacity,
                                     const step_tokens& tokens) {
  reports::table t({"", "predicted"});
  const auto share = [&](seconds x) { return to_string(x) + " (" + plan::detail::pct(x / r.step) + ")"; };
  t.add({"step time", to_string(r.step) + ", MFU " + plan::detail::pct(r.mfu)});
  t.add({"throughput", throughput_text(r, tokens)});
  t.add({"  matrix multiplies", share(r.gemm)});
  t.add({"  attention core", share(r.attention)});
  t.add({"  memory-bound work", share(r.elementwise)});
  t.add({"  recomputation", share(r.recompute)});
  t.add({"  tensor-parallel collectives", share(r.tp_comm)});
  const bool experts = r.expert_parameters > 0;
  if (experts) t.add({"  expert all-to-alls", share(r.ep_comm)});
  t.add({"  context-parallel ring (exposed)", share(r.cp_comm)});
  t.add({"  pipeline sends", share(r.pp_comm)});
  t.add({"  pipeline bubble" + (r.flushes > 1 ? " (" + std::to_string(r.flushes) + " flushes)" : std::string()),
         share(r.bubble)});
  t.add({"  data-parallel reduction (exposed)", share(r.dp_comm)});
  t.add({"  optimizer step" + std::string(r.offloaded > bytes{} ? " (on the host)" : ""), share(r.optimizer)});
  if (r.offloaded > bytes{}) t.add({"  optimizer offload traffic", share(r.offload)});
  if (r.codec > seconds{}) t.add({"  gradient coding", share(r.codec)});
  if (r.embedding_sync > seconds{}) t.add({"  embedding all-reduce", share(r.embedding_sync)});
  if (r.pipeline_stages > 1) {
    const auto& g = r.stages;
    const std::string binding = detail::binding_stage(r);
    // A stated layout's middle stages may hold different counts: the range, the fullest priced.
    const std::string middle =
        (g.middle_fewest < g.middle ? std::to_string(g.middle_fewest) + " to " : "") + std::to_string(g.middle);
    t.add({"layers per pipeline stage",
           "first " + std::to_string(g.first) + (r.pipeline_stages > 2 ? ", middle " + middle : std::string()) +
               ", last " + std::to_string(g.last) +
               (r.prediction_modules ? ", the logits and " + std::to_string(r.prediction_modules) +
                                           " prediction module" + (r.prediction_modules > 1 ? "s" : "")
                                     : std::string(" and the logits")) +
               "; priced on the busiest, " + (binding == "middle" ? "a middle one" : "the " + binding)});
  }
  if (detail::recomputes_some(r))
    t.add({"layers recomputed in full", detail::recomputed_text(r, r.recomputed) + " (each chunk's first)"});
  if (r.rebuilt_group > 1)
    t.add({"inputs kept a micro-batch", detail::recomputed_text(r, r.checkpointed) + " (one a group of " +
                                            std::to_string(r.rebuilt_group) + " layers, rebuilt at once)"});
  t.add({"device memory per GPU", to_string(r.device_bytes) + " of " + to_string(capacity) +
                                      (r.device_bytes <= capacity ? "" : ": does NOT fit")});
  t.add({"  weights, gradients, optimizer",
         to_string(r.parameters) + ", " + to_string(r.gradients) + ", " + to_string(r.optimizer_states)});
  if (experts)
    t.add({"  routed experts' parameters per GPU", units::detail::format_number(r.expert_parameters / 1e9) + "G of " +
                                                       units::detail::format_number(r.stage_parameters / 1e9) + "G"});
  t.add({"  activations", to_string(r.activations)});
  if (r.allocator != bytes{})  // the stack's allocator beyond the tensors counted (model/training_stack.hpp)
    t.add({"  the stack's allocator",
           (r.allocator < bytes{} ? "-" + to_string(bytes{} - r.allocator) : to_string(r.allocator))});
  if (r.offloaded > bytes{}) t.add({"optimizer states offloaded per GPU", to_string(r.offloaded)});
  t.print(out);
}

}  // namespace trinity::workloads
