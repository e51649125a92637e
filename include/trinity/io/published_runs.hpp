#pragma once
//! \file
//! Published training runs, read strictly (bench/published/training-runs.json): the sources, and per run the
//! model, the batch, the layout, the cluster it ran on, and what was published, as an iteration time or as
//! teraFLOP/s per GPU under a named FLOP count:
//!   "narayanan-eq3"  96·B·s·l·h²·(1 + s/6h + V/16lh), the recomputed forward counted (Narayanan et al., SC'21)
//!   "model"          3 passes with full s² attention, no recomputation (model::training_flops, none)
//! The FLOP count converts a throughput into the iteration time the model is judged on.

#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/plan/attention_kernel.hpp>
#include <trinity/units/format.hpp>

namespace trinity::io {

struct published_run {
  std::string name, source, role, system, assumed;
  std::string attention_kernel;  //!< the fused attention kernel it ran (plan/attention_kernel.hpp); empty: its system's
  std::size_t gpus = 0;
  model::training_job job;
  model::parallel_layout layout;
  double iteration_s = 0;  //!< published, or converted from the published throughput
  std::string published;   //!< the figure as the source gives it ("137 TFLOP/s per GPU", "1.42 s")
};

struct published_runs {
  std::map<std::string, std::string> sources;
  std::vector<published_run> runs;
};

namespace detail {
inline constexpr key runs_file_keys[] = {{"about"}, {"sources", required}, {"runs", required}};
inline constexpr key run_keys[] = {{"name", required},
                                   {"source", required},
                                   {"role", required},
                                   {"system", required},
                                   {"gpus", required},
                                   {"model", required},
                                   {"sequence", required},
                                   {"global_batch", required},
                                   {"parallelism", required},
                                   {"flash_attention"},
                                   {"attention_kernel"},
                                   {"dropout"},
                                   {"overlap_dp"},
                                   {"cross_entropy"},
                                   {"zero"},
                                   {"precision"},
                                   {"fp8_params"},
                                   {"state_bytes"},
                                   {"capacity_factor"},
                                   {"expert_imbalance"},
                                   {"published", required},
                                   {"assumed"}};
inline constexpr key run_own_shape_keys[] = {{"layers", required}, {"hidden", required},   {"ffn_hidden", required},
                                             {"heads", required},  {"kv_heads", required}, {"vocabulary", required}};
inline constexpr auto run_shape_keys = concat(run_own_shape_keys, optional_shape_keys);
inline constexpr key published_keys[] = {{"tflops_per_gpu"}, {"flops"}, {"iteration_s"}, {"tokens_per_second_per_gpu"}};
inline constexpr key state_bytes_keys[] = {{"parameter", required}, {"gradient", required}, {"optimizer", required}};
inline constexpr std::string_view roles[] = {"fit", "held-out"};
inline constexpr std::string_view flop_counts[] = {"narayanan-eq3", "model"};

//! The workload reader's shape (workload.hpp), with a shape error named at its path in the file.
inline model::transformer_shape read_run_shape(const json& j, const std::string& path) {
  const object o(j, path, run_shape_keys, "a transformer's shape");
  try {
    return read_shape(o);
  } catch (const invalid_input& e) {
    if (e.field().rfind(path, 0) == 0) throw;  // already at its path: a key read through o
    fail(join(path, e.field()), e.problem());
  }
}

//! The bytes a parameter takes in each training state, where a run's optimizer keeps other than mixed precision's
//! 2, 2 and 12 (fp32 master weights and moments): Apex's DistributedFusedAdam with its state in bf16, say.
inline model::state_bytes read_state_bytes(const json& j, const std::string& path) {
  const object o(j, path, state_bytes_keys, "bytes a parameter takes as a weight, a gradient and optimizer state");
  const model::state_bytes b{o.number("parameter"), o.number("gradient"), o.number("optimizer")};
  for (const auto& [value, name] : {std::pair{b.parameter, "parameter"}, std::pair{b.gradient, "gradient"}})
    if (!(value > 0 && std::isfinite(value))) fail(o.path(name), "must be a positive number of bytes");
  if (!(b.optimizer >= 0 && std::isfinite(b.optimizer)))
    fail(o.path("optimizer"), "must be a number of bytes, 0 or more (0: an optimizer without state)");
  return b;
}

inline published_run read_run(const json& j, const std::string& path, const published_runs& file) {
  const object o(j, path, run_keys, "a published run");
  published_run r;
  r.name = o.text("name");
  r.source = o.text("source");
  if (!file.sources.contains(r.source)) fail(o.path("source"), "\"" + r.source + "\" is none of the file's sources");
  r.role = choice(o.at("role"), o.path("role"), roles);
  r.system = o.text("system");
  r.gpus = o.count("gpus");
  o.get("assumed", r.assumed);
  r.job.shape = read_run_shape(o.at("model"), o.path("model"));
  r.job.sequence = o.count("sequence");
  r.job.global_batch = o.count("global_batch");
  o.get("flash_attention", r.job.flash_attention);
  if (o.has("attention_kernel")) {
    r.attention_kernel = o.text("attention_kernel");
    plan::require_attention_kernel(r.attention_kernel, o.path("attention_kernel"));
    plan::require_fused_attention(r.attention_kernel, r.job.flash_attention, o.path("attention_kernel"));
  }
  o.get("dropout", r.job.dropout);
  o.get("overlap_dp", r.job.overlap_dp);
  if (o.has("cross_entropy")) r.job.cross_entropy = loss_kernel_name(o, "cross_entropy");  // as its recipe names it
  if (o.has("precision")) {
    // mixed: bf16 GEMMs over fp32 master weights; fp8: Transformer Engine's fp8 GEMMs over the same states.
    static constexpr std::string_view precisions[] = {"mixed", "fp8"};
    r.job.fp8 = choice(o.at("precision"), o.path("precision"), precisions) == "fp8";
  }
  o.get("fp8_params", r.job.fp8_params);
  if (r.job.fp8_params && !r.job.fp8)
    fail(o.path("fp8_params"), "keeps the GEMM weights in fp8; the run's precision must be \"fp8\"");
  if (o.has("state_bytes")) r.job.precision = read_state_bytes(o.at("state_bytes"), o.path("state_bytes"));
  const auto routing = read_routing(o, r.job.shape);  // as a workload gives it: balanced and dropless unless said
  r.job.expert_imbalance = routing.imbalance, r.job.capacity_factor = routing.capacity_factor;
  try {
    r.layout = parse_parallel_layout(o.text("parallelism"), o.path("parallelism"));
  } catch (const invalid_input& e) {
    fail(o.path("parallelism"), e.problem());
  }
  if (o.has("zero")) r.layout.zero_stage = static_cast<int>(o.count("zero", 3));
  if (r.layout.gpus() != r.gpus)
    fail(o.path("gpus"),
         std::to_string(r.gpus) + " GPUs, but the layout uses tp·pp·cp·dp = " + std::to_string(r.layout.gpus()));
  if (const auto broken = model::check_layout(r.job, r.layout)) fail(o.path("parallelism"), broken->message());
  const object p(o.at("published"), o.path("published"), published_keys, "what the source published");
  if (p.has("iteration_s") + p.has("tflops_per_gpu") + p.has("tokens_per_second_per_gpu") != 1)
    fail(p.path(),
         "give one of iteration_s, tokens_per_second_per_gpu or tflops_per_gpu (with flops, the count it "
         "was measured in)");
  if (p.has("tokens_per_second_per_gpu")) {
    // The step time the throughput implies: the global batch's tokens over every GPU's rate.
    const double rate = p.number("tokens_per_second_per_gpu");
    if (!(rate > 0)) fail(p.path("tokens_per_second_per_gpu"), "must be positive");
    r.iteration_s = static_cast<double>(r.job.global_batch) * static_cast<double>(r.job.sequence) /
                    (rate * static_cast<double>(r.gpus));
    r.published = units::detail::format_number(rate) + " tokens/s per GPU";
  } else if (p.has("iteration_s")) {
    r.iteration_s = p.number("iteration_s");
    if (!(r.iteration_s > 0)) fail(p.path("iteration_s"), "must be positive");
    r.published = units::detail::format_number(r.iteration_s) + " s";
  } else {
    const double tflops = p.number("tflops_per_gpu");
    if (!(tflops > 0)) fail(p.path("tflops_per_gpu"), "must be positive");
    if (!p.has("flops")) fail(p.path("flops"), "missing; name the FLOP count the throughput was measured in");
    const std::string count = choice(p.at("flops"), p.path("flops"), flop_counts);
    const auto r_count = count == "narayanan-eq3" ? model::recomputation::full : model::recomputation::none;
    const double f = model::training_flops(r.job.shape, static_cast<double>(r.job.global_batch),
                                           static_cast<double>(r.job.sequence), r_count)
                         .value();
    r.iteration_s = f / (static_cast<double>(r.gpus) * tflops * 1e12);
    r.published = units::detail::format_number(tflops) + " TFLOP/s per GPU";
  }
  return r;
}
}  // namespace detail

//! From parsed JSON (io::load or io::parse): errors name the JSON path.
inline published_runs read_published_runs(const json& j) {
  const object o(j, "", detail::runs_file_keys, "a file of published runs");
  published_runs file;
  if (!o.at("sources").is_object()) fail("sources", "expected an object of source names and their citations");
  for (auto it = o.at("sources").begin(); it != o.at("sources").end(); ++it)
    file.sources[it.key()] = io::text(it.value(), join("sources", it.key()));
  for_each(o.at("runs"), "runs",
           [&](const json& r, const std::string& path) { file.runs.push_back(detail::read_run(r, path, file)); });
  if (file.runs.empty()) fail("runs", "no run to replay");
  return file;
}

}  // namespace trinity::io
