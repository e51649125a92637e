// trinity verify: the chosen training plan run for real on this machine, at a
// size it can hold, beside what the planner's formulas predict for that size.
// The run is trinity-train (tools/train): an MLP trained data-parallel on ranks
// as threads, with the plan's ZeRO stage, offload and gradient codec; every
// byte it holds and sends is counted by its ledger. The prediction is
// plan::price and the ZeRO model it is built on, at the MLP's Ψ and the run's
// rank count. Step time too, given a profile from `trinity calibrate`: the
// planner's price with the device and link replaced by what calibrate measured
// here (dense-layer FLOP rate, shared among ranks beyond the hardware threads;
// the thread link's α-β), against the run's fastest step, as calibrate keeps
// its fastest run: the first steps of a process fault pages in. A plan that
// recomputes runs its recomputation: each pair of the MLP's layers keeps its input.

#include "cli.hpp"
#include "workload_from.hpp"
#include "machine_profile.hpp"

#include <trinity/detail/run_program.hpp>

#include <trinity/comm/partition.hpp>
#include <trinity/io/block_trace.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/plan.hpp>
#include <trinity/plan/serving_replay.hpp>
#include <trinity/units/format.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <thread>
#include <variant>

namespace trinity::cli {
namespace {

using json = nlohmann::json;

// A plan's verify flags (workloads/verify.hpp) and the training run's own: trinity-train, ranks, steps, batch.
struct verify_args : workloads::verify_request {
  std::string train, ranks = "4", steps = "3", batch = "256";
};

using workloads::refuse_training_flags;

// trinity-train's command line, an argument at a time: run as an argument vector (no shell, so no byte of a
// --train path or a codec name is read as a command) and printed as a reader would type it.
struct train_command {
  std::vector<std::string> argv;
  train_command& operator()(std::string flag) {
    argv.push_back(std::move(flag));
    return *this;
  }
  train_command& operator()(std::string flag, std::string value) {
    argv.push_back(std::move(flag));
    argv.push_back(std::move(value));
    return *this;
  }
  train_command& operator()(std::string flag, std::size_t value) {
    return (*this)(std::move(flag), std::to_string(value));
  }
  [[nodiscard]] std::string text() const { return trinity::detail::shell_quoted(argv); }
  friend std::ostream& operator<<(std::ostream& os, const train_command& c) { return os << c.text(); }
};

// Runs it, its standard error merged into its output as a terminal shows them: the output, or a refusal with how
// the run ended (its exit code, or the signal that stopped it) and its last lines.
std::string run_and_capture(const train_command& command) {
  std::cerr << "trinity verify: " << command << '\n';
  trinity::detail::program_run r;
  try {
    r = trinity::detail::run_program(command.argv, {}, trinity::detail::error_stream::merged);
  } catch (const std::exception& e) {
    throw bad_flag("--train", command.argv.front(), std::string("cannot be run: ") + e.what());
  }
  if (!r.end.succeeded()) {
    const std::string tail = r.out.size() > 600 ? r.out.substr(r.out.size() - 600) : r.out;
    throw usage_error("the run failed (" + command.text() + "): " + r.end.describe() +
                      (tail.empty() ? std::string() : "; it said: " + tail));
  }
  return r.out;
}

// The scaled-down training run's size (--ranks, --steps, --batch), checked before anything is read, and the
// machine a profile measured, which times it.
struct training_run {
  std::size_t ranks = 0, steps = 0, batch = 0;
  std::optional<machine_profile> machine;
  unsigned cores = 1;
};

training_run training_run_of(const verify_args& a) {
  training_run r;
  r.ranks = count_flag(a.ranks, "--ranks", 2, 64);
  r.steps = count_flag(a.steps, "--steps", 1, 1000);
  r.batch = count_flag(a.batch, "--batch", r.ranks, 1 << 20);
  if (!a.planning.profile.empty()) r.machine = read_profile_file(a.planning.profile).machine;
  if (r.machine) r.cores = r.machine->cores, r.steps = std::max<std::size_t>(r.steps, 8);  // past the warm-up
  return r;
}

using row = workloads::verified_row;
using workloads::ratio_text;

// The trinity-train beside this program (or --train), named as a reader would type it.
std::string train_program(const verify_args& a) {
  std::string train = a.train;
  if (train.empty()) {
    // Beside this program, named as the user named this one (build/bin/trinity -> build/bin/trinity-train);
    // found on PATH, it is named from the working directory when it lies under it.
    const std::filesystem::path typed = invoked_as();
    if (typed.has_parent_path()) {
      train = (typed.parent_path() / "trinity-train").string();
    } else {
      const auto beside = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "trinity-train";
      const auto here = std::filesystem::relative(beside);
      train = (!here.empty() && here.begin()->string() != "..") ? here.string() : beside.string();
    }
  }
  if (!std::filesystem::exists(train))
    throw bad_flag("--train", train,
                   "trinity-train is not there; build it (cmake --build --preset ci --target trinity-train)");
  return train;
}

// trinity-train's last line: its summary.
json summary_of(const std::string& out) {
  const auto last = out.find_last_of('\n', out.size() - 2);
  try {
    return json::parse(out.substr(last == std::string::npos ? 0 : last + 1)).at("summary");
  } catch (const std::exception& e) {
    throw usage_error(std::string("trinity-train's last line is not its summary: ") + e.what());
  }
}

// The most a rank reported of a per-rank figure.
double busiest(const json& values) {
  double most = 0;
  for (const auto& x : values) most = std::max(most, x.get<double>());
  return most;
}

// A layout scaled down to run here: its tp, pp, vpp, sp and ZeRO stage; two context ranks where it has context
// parallelism, two data-parallel replicas where it has any. ZeRO shards over data and context ranks together.
// Full recomputation runs: every pair of each chunk, or, where the layout recomputes some of a chunk's layers
// (recompute_layers), the first of two, the attention block and the experts with the first.
struct layout_run {
  model::parallel_layout l;
  std::size_t t, p, v, c, d, ranks, shards, m, rows, width, pairs;  // pairs: column/row pairs a chunk (tp > 1)
  std::size_t chunk_layers, recomputed;  // layers a chunk (pairs, or one layer), and pairs of each recomputed
  train_command command;
  std::size_t group;  // pairs a checkpointed group holds, where the run recomputes in groups (the uniform method)
  // Where the layout states its placement: each chunk's layers in the run, two (a pair) for each of the model's.
  std::vector<std::size_t> placed;
  // The run's layers on pipeline rank r (placed, or its v chunks' chunk_layers), and the most any rank holds.
  [[nodiscard]] std::size_t rank_layers(std::size_t r) const {
    if (placed.empty()) return v * chunk_layers;
    std::size_t n = 0;
    for (std::size_t k = r; k < placed.size(); k += p) n += placed[k];
    return n;
  }
  [[nodiscard]] std::size_t busiest_layers() const {
    std::size_t most = 0;
    for (std::size_t r = 0; r < p; ++r) most = std::max(most, rank_layers(r));
    return most;
  }
};

// Where a layout states its placement (pipeline_layout, first_stage_layers, last_stage_layers), each model chunk's
// layers as the step model places them; empty where it states none.
std::vector<std::size_t> stated_chunk_layers(const plan::training_workload& w, const model::parallel_layout& l) {
  if (!w.shape || (model::stated_stages(l) == 0 && l.pipeline_layout.empty())) return {};
  std::vector<std::size_t> out;
  if (!l.pipeline_layout.empty()) {
    for (const auto& chunk : model::parse_pipeline_layout(l.pipeline_layout)) out.push_back(chunk.layers);
    return out;
  }
  const auto stages = model::pipeline_stage_layers(w.shape->layers, l);  // one chunk a stage: the caller's vpp = 1
  out.push_back(stages.first);
  for (std::size_t r = 1; r + 1 < l.pp; ++r) out.push_back(stages.middle);
  out.push_back(stages.last);
  return out;
}

// Whether the scaled run recomputes, and pairs a chunk needs for it: one recomputed of two where the layout
// recomputes some of a chunk's layers (recompute_layers), every one of one or more where it recomputes all.
std::pair<bool, std::size_t> recomputed_pairs(const plan::training_workload& w, const model::parallel_layout& l) {
  if (l.recompute != model::recomputation::full || !w.shape) return {false, 0};
  const auto stages = model::pipeline_stage_layers(w.shape->layers, l.pp, l.vpp);
  const bool some = model::recomputed_stage_layers(l, stages).first < stages.first;
  return {true, some ? 2 : 1};
}

// The pairs a checkpointed group of the scaled run holds: two where the layout recomputes every layer in groups of
// two or more on its fullest chunk (recompute_method=uniform), a chunk of two pairs run as one group; else none (a
// group of one layer is full recomputation's own).
std::size_t grouped_pairs(const plan::training_workload& w, const model::parallel_layout& l) {
  if (!w.shape || !model::detail::uniform_groups(l)) return 0;
  return model::rebuilt_group_layers(l, model::pipeline_stage_layers(w.shape->layers, l)) >= 2 ? 2 : 0;
}

// Whether a layout's scaled run recomputes its attention core alone (trinity-train --recompute-attention): under
// selective recomputation, where it has an attention block to recompute, beside a context ring (`context` ranks).
bool runs_selective(const model::parallel_layout& l, std::size_t context) {
  return l.recompute == model::recomputation::selective && context > 1;
}

// Whether a layout's scaled run recomputes a mixture's whole block alone (trinity-train --recompute-experts): under
// the single module `moe`, which the run's expert block is.
bool runs_experts_module(const model::parallel_layout& l) { return l.modules.has(model::recompute_module::moe); }

// Whether it recomputes the MLP alone (recompute_modules=mlp): every column/row pair keeps its input and runs again,
// as under full recomputation, where a pair is all a layer of the run holds: no attention block (no context ring)
// and no experts after the first pair.
bool runs_mlp_module(const model::parallel_layout& l, std::size_t context, bool experts) {
  return l.modules.has(model::recompute_module::mlp) && context == 1 && !experts;
}

// Whether it recomputes a mixture's shared experts alone (trinity-train --recompute-shared-experts): under the single
// module `shared_experts`, which the layout takes only for a model that has them (model::check_layout).
bool runs_shared_module(const model::parallel_layout& l) {
  return l.modules.has(model::recompute_module::shared_experts);
}

// The single modules the scaled run recomputes of the layout's.
model::recompute_modules modules_run(const model::parallel_layout& l, std::size_t context, bool experts) {
  model::recompute_modules ran;
  if (runs_experts_module(l)) ran.add(model::recompute_module::moe);
  if (experts && runs_shared_module(l)) ran.add(model::recompute_module::shared_experts);
  if (runs_mlp_module(l, context, experts)) ran.add(model::recompute_module::mlp);
  return ran;
}

// A mixture's experts in a scaled run: `experts` of them, `top_k` a token, over the layout's ep and etp, and
// `shared` shared experts every token runs (the model's, two at most: their bytes over the tensor group do not
// depend on how many).
struct expert_run {
  std::size_t experts, top_k, shared = 0;
};

// How a scaled run's description names its shared experts.
std::string shared_note(const expert_run& moe) {
  return moe.shared == 0 ? ""
                         : ", " + std::to_string(moe.shared) + " shared " + (moe.shared > 1 ? "experts" : "expert");
}
// The flags of a mixture's recomputation the layout asks for: the block alone (module moe), or its shared experts.
void add_expert_recompute_flags(train_command& command, const model::parallel_layout& l) {
  if (runs_experts_module(l)) command("--recompute-experts");
  if (runs_shared_module(l)) command("--recompute-shared-experts");
}

// With `moe`, the run puts trinity-train's expert block after the second layer (--balanced-routing, as the step
// model prices it): as many data-parallel replicas as make a stage's tp·cp·dp ranks a multiple of ep·etp (two
// expert-data-parallel replicas where the layout has them), each rank holding `experts` tokens a micro-batch
// (after sp's split), so a pass spreads evenly over the experts, 64 features wide or more (a multiple of tp and
// etp), at least three layers.
layout_run layout_run_of(const verify_args& a, const plan::training_workload& w, const model::parallel_layout& l,
                         const expert_run* moe = nullptr) {
  const std::size_t t = l.tp, p = l.pp, v = l.vpp, c = l.cp > 1 ? 2 : 1;
  std::size_t d = l.dp > 1 ? 2 : 1;
  if (moe) {
    const std::size_t group = l.ep * l.etp, stage = t * c;
    d = std::lcm(stage * d, group) / stage;
    if (l.tp * l.cp * l.dp / group > 1 && stage * d / group == 1) d *= 2;
  }
  const std::size_t ranks = t * p * c * d, shards = d * c;
  if (ranks > 64)
    throw bad_flag("--parallelism", model::to_string(l),
                   "runs " + std::to_string(ranks) + " threads here (tp*pp, times 2 for context and " +
                       (moe ? "the data replicas the expert groups need" : std::string("2 for data replicas")) +
                       "); verify runs at most 64");
  // A codec's frames carry a header and per-block scales: wide enough layers that the payload dominates them,
  // as it does at the workload's size.
  const std::size_t base_width = moe ? 64 : l.codec.empty() ? 32 : 512, unit = moe ? std::lcm(t, l.etp) : t;
  // Each rank takes `rows` tokens a micro-batch: 2t samples (t·experts with experts), or with context parallelism
  // one sequence of c·rows tokens, rows of them on each context rank, in heads of width/t features (one a
  // tensor-parallel rank).
  auto [recomputes, recompute_pairs] = recomputed_pairs(w, l);
  if (runs_mlp_module(l, c, moe != nullptr)) recomputes = true, recompute_pairs = 1;  // every pair
  const std::size_t group = grouped_pairs(w, l);
  if (group > 0) recompute_pairs = group;  // a chunk of one group
  const std::size_t m = p > 1 ? 2 * p : 2, rows = moe ? t * moe->experts : 2 * t,
                    width = unit * ((base_width + unit - 1) / unit),
                    chunk = p * v *
                            (recomputes ? 2 * recompute_pairs
                             : t > 1    ? 2
                                        : 1),
                    layers = moe ? chunk * ((3 + chunk - 1) / chunk) : std::max<std::size_t>(2, chunk),
                    chunk_layers = layers / (p * v);
  // Every pair of a chunk where the layout recomputes all its layers (a mixture's chunk may hold two), else the first.
  const std::size_t recomputed = !recomputes ? 0 : recompute_pairs == 1 || group > 0 ? chunk_layers / 2 : 1;
  const std::size_t batch = c > 1 ? d * m : d * m * rows;  // sequences
  const std::size_t steps = count_flag(a.steps, "--steps", 1, 1000);
  // A stated placement runs each of the model's layers as a column/row pair, every chunk as many as it places.
  std::vector<std::size_t> placed;
  std::string placement;
  for (const std::size_t n : stated_chunk_layers(w, l)) {
    placement += (placed.empty() ? "" : ",") + std::to_string(2 * n);
    placed.push_back(2 * n);
  }
  const std::size_t run_layers =
      placed.empty() ? layers : std::accumulate(placed.begin(), placed.end(), std::size_t{0});
  train_command command{{train_program(a), "--backend", "threads"}};
  command("--ranks", ranks)("--tp", t);
  if (l.sequence_parallel) command("--sp");
  command("--pp", p)("--vpp", v)("--micro-batches", m);
  if (!l.schedule.empty()) command("--schedule", l.schedule);
  if (c > 1) command("--cp", c)("--sequence", c * rows)("--heads", t);
  if (moe) {
    command("--experts", moe->experts)("--top-k", moe->top_k)("--ep", l.ep)("--etp", l.etp)("--balanced-routing");
    if (moe->shared) command("--shared-experts", moe->shared);
  }
  command("--stage", std::to_string(l.zero_stage))("--steps", steps)("--batch", batch)("--inputs", width)("--width",
                                                                                                          width);
  command("--outputs", width)("--layers", run_layers - 1);
  if (!placement.empty()) command("--chunk-layers", placement);
  if (l.offload) command("--offload");
  if (!l.codec.empty()) command("--compress", l.codec);
  if (recomputed) command("--recompute-layers", group > 0 ? group : recomputed);
  if (group > 0) command("--recompute-method", "uniform");
  if (runs_selective(l, c)) command("--recompute-attention");
  if (moe) add_expert_recompute_flags(command, l);
  return {l,
          t,
          p,
          v,
          c,
          d,
          ranks,
          shards,
          m,
          rows,
          width,
          std::max<std::size_t>(1, chunk_layers / 2),
          chunk_layers,
          recomputed,
          command,
          group,
          placed};
}

// Of a layout run here, what its run leaves out: the step time, always, and a recomputation it does not run: the
// layout's policy unless `policy_ran`, and its single modules but those in `ran`.
std::vector<std::string> not_run_of(const model::parallel_layout& l, bool policy_ran, model::recompute_modules ran) {
  std::vector<std::string> not_run{"step time"};
  if (l.recompute != model::recomputation::none && !policy_ran)
    not_run.emplace_back("selective recomputation (the run has an attention core only beside a context ring)");
  const model::recompute_modules rest{l.modules.bits & ~ran.bits};
  if (!rest.empty()) not_run.push_back("recomputed modules (" + model::to_string(rest) + ")");
  return not_run;
}

// The rows that count, not weigh: their figures print as numbers.
constexpr std::string_view kept_chunks_row = "chunks' activations the first stage keeps at its peak";
constexpr std::string_view forwards_row = "layer forwards the first stage runs a step (a recomputed one twice)";

// The rows that count parameters, not bytes, in a mixture's table.
constexpr std::string_view routed_parameters_row = "routed experts' parameters per rank";
constexpr std::string_view shared_parameters_row = "shared experts' parameters per rank";
bool counts_parameters(const row& x) {
  return x.mechanism == routed_parameters_row || x.mechanism == shared_parameters_row;
}

// A scaled run's shared experts as the step model's shape has them (the run's block: fp32, not gated, as wide as
// the layer), from what its summary says it ran: none without experts.
model::transformer_shape shared_shape_of(const json& summary, std::size_t width) {
  const std::size_t shared =
      summary.contains("experts") ? summary["experts"].value("shared_experts", std::size_t{0}) : 0;
  return {.hidden = width, .ffn_hidden = width, .gated_mlp = false, .shared_experts = shared};
}

// The step model's counts at the run's size beside what the run measured, the busiest rank's.
std::vector<row> layout_rows(const layout_run& run, const json& summary, const model::compressor_cost& codec,
                             double psi) {
  const auto& [l, t, p, v, c, d, ranks, shards, m, rows, width, pairs, chunk_layers, recomputed, command, group,
               placed] = run;
  const auto& step = summary.at("last_step");
  // fp32 activations of `rows` tokens, `pairs` column/row pairs a chunk; a pair's forward and backward each
  // all-reduce one (with sp: an all-gather and a reduce-scatter), and a recomputed pair's forward runs again.
  const bytes activation{static_cast<double>(rows * width) * 4.0};
  const double md = static_cast<double>(m), tt = static_cast<double>(t), transfers = model::pipeline_transfers(p, v);
  // A mixture's shared experts, on the stage holding its block: their all-reduce a pass, forward and backward, and
  // the forward's again where they run again (with their pair, with the block, or alone).
  const bool shared_again = recomputed > 0 || runs_experts_module(l) || runs_shared_module(l);
  const double shared_passes =
      model::shared_expert_all_reduces(shared_shape_of(summary, width)) * (shared_again ? 3.0 : 2.0);
  const bytes tp_bytes =
      t > 1 ? md * (static_cast<double>(run.busiest_layers() + v * recomputed) + shared_passes) *
                      (2.0 * (tt - 1.0) / tt) * activation +
                  (p > 1 && !l.sequence_parallel ? md * transfers * (tt - 1.0) / tt * activation : bytes{})
            : bytes{};
  const bytes pp_bytes = md * transfers * activation / tt;
  // One attention layer, on the first stage: fp32 keys and values of this rank's tokens and heads, their forward
  // again where the first pair, or the attention core alone, is recomputed.
  const bytes cp_bytes =
      md * model::context_ring_blocks(c, recomputed > 0 || runs_selective(l, c)) * 2.0 * activation / tt;
  // ZeRO-3 gathers each layer for every micro-batch's forward and backward: 2m gathers where one pass has two.
  const double zero3 = l.zero_stage == 3 ? (1.0 + 2.0 * md) / 3.0 : 1.0;
  // A codec's frames replace the gradient's reduction (model/gradient_reduction.hpp, as the step model prices
  // it); ZeRO's parameter gathers stay fp32.
  const model::collective_link bytes_only{seconds{0.0}, bytes_per_second{1.0}, {}};  // only what is sent is read
  const bytes coded_change =
      l.codec.empty()
          ? bytes{}
          : model::gradient_reduction(shards, psi, 4.0, l.zero_stage, codec, bytes_only).sent -
                model::gradient_reduction(shards, psi, 4.0, l.zero_stage, model::uncoded_gradient(), bytes_only).sent;
  const bytes dp_bytes =
      zero3 * model::zero_traffic_per_step(psi, shards, l.zero_stage, model::fp32_adam) + coded_change;
  const auto& sb_json = summary.at("state_bytes");
  const model::state_bytes sb{sb_json.at("parameter").get<double>(), sb_json.at("gradient").get<double>(),
                              sb_json.at("optimizer").get<double>()};
  const auto states = model::zero_memory_per_rank(psi, shards, l.zero_stage, sb, l.offload);
  const auto measured = [&](const char* kind, const char* key) { return busiest(step.at(kind).at(key)); };
  std::vector<row> rows_out;
  if (t > 1)
    rows_out.push_back({"bytes over the tensor group per rank and step (tp=" + std::to_string(t) +
                            (l.sequence_parallel ? ", sp" : "") + ")",
                        tp_bytes.value(), busiest(step.at("tensor_parallel_bytes"))});
  if (p > 1) {
    rows_out.push_back(
        {"bytes between stages per rank and step (pp=" + std::to_string(p) + ", vpp=" + std::to_string(v) + ")",
         pp_bytes.value(), busiest(step.at("pipeline_bytes"))});
    rows_out.push_back({std::string(kept_chunks_row),
                        model::pipeline_in_flight(l.schedule, p, m, v) * static_cast<double>(v),
                        step.at("peak_stashed_chunks").at(0).get<double>()});
  }
  if (c == 1 && !summary.contains("experts")) {
    // What a chunk keeps: its input, and each pair's whole input, column outputs (1/t of them) and output (a chunk
    // of one layer: its whole input and outputs); a recomputed pair only its input, its output kept as the next
    // pair's; recomputed in groups, a group's input alone. The first stage keeps its in-flight chunks
    // (model::pipeline_in_flight) and, in a recomputed pair's backward, that pair rebuilt (or its whole group).
    const double held = static_cast<double>(l.sequence_parallel ? rows / t : rows) * static_cast<double>(width),
                 whole = static_cast<double>(rows * width),
                 n = static_cast<double>(placed.empty() ? pairs : placed.front() / 2),
                 r = static_cast<double>(recomputed), pair = whole + whole / tt + held,
                 g = static_cast<double>(std::min(std::max<std::size_t>(group, 1), pairs));
    const double chunk = placed.empty() && chunk_layers == 1 ? held + whole + whole / tt
                         : group > 0                         ? std::ceil(n / g) * held
                                     : held + (n - r) * pair + (recomputed == pairs ? r - 1.0 : r) * held;
    const double in_flight = model::pipeline_in_flight(l.schedule, p, m, v) * static_cast<double>(v);
    rows_out.push_back({"activation bytes the first stage keeps at its peak" +
                            (recomputed == 0 ? std::string()
                             : group > 0     ? " (each chunk's " + std::to_string(pairs) + " pairs recomputed as " +
                                               (pairs == group ? std::string("one group)") : "groups)")
                             : recomputed == pairs ? std::string(" (each chunk's pair recomputed)")
                                                   : " (" + std::to_string(recomputed) + " of each chunk's " +
                                                         std::to_string(pairs) + " pairs recomputed)"),
                        4.0 * (in_flight * chunk + (recomputed ? g * pair : 0.0)),
                        step.at("peak_bytes").at("activations").at(0).get<double>()});
  }
  rows_out.push_back({std::string(forwards_row), md * static_cast<double>(run.rank_layers(0) + v * 2 * recomputed),
                      step.at("layer_forwards").at(0).get<double>()});
  if (c > 1)
    rows_out.push_back({"bytes around the context ring per rank and step (cp=" + std::to_string(c) + ")",
                        cp_bytes.value(), busiest(step.at("context_parallel_bytes"))});
  if (shards > 1)
    rows_out.push_back({"bytes to the data-parallel group per rank and step (ZeRO-" + std::to_string(l.zero_stage) +
                            (l.codec.empty() ? "" : ", " + l.codec) + ")",
                        dp_bytes.value(), busiest(step.at("data_parallel_bytes"))});
  rows_out.push_back({"parameters held per rank", states.parameters.value(), measured("resident_bytes", "parameters")});
  rows_out.push_back({"gradients held per rank (summed over " + std::to_string(m) + " micro-batches)",
                      model::peak_gradient_bytes(psi, shards, l.zero_stage, model::fp32_adam, m).value(),
                      measured("resident_bytes", "gradients")});
  rows_out.push_back({"optimizer states held per rank", states.optimizer_states.value(),
                      measured("resident_bytes", "optimizer_states")});
  if (l.offload) {
    rows_out.push_back({"optimizer states and master copy offloaded per rank", states.offloaded.value(),
                        measured("resident_bytes", "offloaded")});
    rows_out.push_back({"bytes to and from the offload tier per rank and step",
                        model::offload_traffic_per_step(psi, shards, l.zero_stage, model::fp32_adam, true).value(),
                        busiest(step.at("offload_bytes"))});
  }
  return rows_out;
}

// The rows as JSON or a table, and a refusal when one is more than 1% off.
void print_layout_rows(const verify_args& a, const plan::training_workload& w, const layout_run& run,
                       const json& summary, double psi, const std::vector<row>& rows_out,
                       const std::string& experts = "") {
  const auto& [l, t, p, v, c, d, ranks, shards, m, rows, width, pairs, chunk_layers, recomputed, command, group,
               placed] = run;
  bool all = true;
  for (const auto& x : rows_out) all &= x.within(0.01);
  const bool has_experts = summary.contains("experts");
  const auto not_run = not_run_of(l, l.recompute == model::recomputation::full ? recomputed > 0 : runs_selective(l, c),
                                  modules_run(l, c, has_experts));
  if (a.json) {
    const json jr = workloads::rows_json(rows_out, 0.01);
    std::cout << json{{"parallelism", model::to_string(l)},
                      {"run", command.text()},
                      {"ranks", ranks},
                      {"parameters_per_rank", psi},
                      {"rows", jr},
                      {"all_within_1_percent", all},
                      {"not_run", not_run}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    std::cout << "Layout: " << model::to_string(l) << " for " << w.name << "\nRun here, scaled to an MLP of "
              << summary.at("parameters").get<long>() << " parameters on " << ranks << " ranks as threads (tp=" << t
              << ", pp=" << p << ", vpp=" << v << (c > 1 ? ", cp=" + std::to_string(c) : std::string()) << ", " << d
              << " data-parallel replica" << (d > 1 ? "s" : "") << ", " << m << " micro-batches of " << rows
              << (c > 1 ? " tokens of a sequence of " + std::to_string(c * rows) : std::string(" samples")) << experts
              << (recomputed == 0 ? std::string()
                  : group > 0     ? ", each chunk's " + std::to_string(pairs) +
                                    " column/row pairs recomputed as one group, its input alone kept"
                  : recomputed == pairs
                      ? (pairs == 1 ? std::string(", each chunk's column/row pair recomputed")
                                    : ", each chunk's " + std::to_string(pairs) + " column/row pairs recomputed")
                      : ", the first of each chunk's " + std::to_string(pairs) + " column/row pairs recomputed")
              << (runs_selective(l, c) ? ", the attention core recomputed alone" : "")
              << (runs_experts_module(l) ? ", the experts' block recomputed alone" : "")
              << (has_experts && runs_shared_module(l) ? ", the shared experts recomputed alone" : "")
              << (runs_mlp_module(l, c, has_experts) ? ", as the module mlp" : "")
              << (placed.empty() ? "" : ", each of the model's layers a column/row pair, placed as the layout states")
              << "):\n  " << command << "\n\n";
    table tb({"mechanism (the busiest rank)", "predicted", "measured", "measured / predicted", "within 1%"});
    for (std::size_t i = 0; i < rows_out.size(); ++i) {
      const auto& x = rows_out[i];
      const bool count = x.mechanism == kept_chunks_row || x.mechanism == forwards_row || counts_parameters(x);
      tb.add({x.mechanism, count ? units::detail::format_number(x.predicted) : to_string(bytes{x.predicted}),
              count ? units::detail::format_number(x.measured) : to_string(bytes{x.measured}),
              units::detail::format_number(x.ratio()), x.within(0.01) ? "yes" : "NO"});
    }
    tb.print(std::cout);
    std::cout << "\nPredicted: the step model's counts (model/parallel_training.hpp, model/sharding.hpp"
              << (experts.empty() ? "" : ", model/moe_layer.hpp") << ") at the run's size";
    if (c == 1 && experts.empty())
      std::cout << "; activations: the MLP's own (each layer's whole input and outputs), kept as the step model keeps "
                   "a layer's: the in-flight chunks, "
                << (group > 0 ? "a recomputed group's input alone, one group rebuilt in its backward"
                              : "a recomputed pair's input alone, one pair rebuilt in its backward");
    std::cout << ". Not run:";
    for (std::size_t i = 0; i < not_run.size(); ++i) std::cout << (i ? "; " : " ") << not_run[i];
    std::cout << ".\n";
  }
  if (!all) throw usage_error("a measured figure is more than 1% from the prediction (see the table)");
}

// A mixture's verified rows as JSON or a table (the second row a parameter count, the rest bytes), and a refusal
// when one is more than 1% off.
void print_expert_rows(const verify_args& a, const plan::training_workload& w, const model::parallel_layout& l,
                       const train_command& command, const std::string& scaled, std::size_t ranks,
                       const std::vector<row>& rows_out, const std::vector<std::string>& not_run) {
  bool all = true;
  for (const auto& x : rows_out) all &= x.within(0.01);
  if (a.json) {
    std::cout
        << json{{"parallelism", model::to_string(l)},           {"run", command.text()},       {"ranks", ranks},
                {"rows", workloads::rows_json(rows_out, 0.01)}, {"all_within_1_percent", all}, {"not_run", not_run}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    std::cout << "Layout: " << model::to_string(l) << " for " << w.name << "\nRun here, scaled to " << scaled << ":\n  "
              << command << "\n\n";
    table tb({"mechanism (the busiest rank)", "predicted", "measured", "measured / predicted", "within 1%"});
    for (std::size_t i = 0; i < rows_out.size(); ++i) {
      const auto& x = rows_out[i];
      const bool count = counts_parameters(x);
      tb.add({x.mechanism, count ? units::detail::format_number(x.predicted) : to_string(bytes{x.predicted}),
              count ? units::detail::format_number(x.measured) : to_string(bytes{x.measured}),
              units::detail::format_number(x.ratio()), x.within(0.01) ? "yes" : "NO"});
    }
    tb.print(std::cout);
    std::cout << "\nPredicted: the step model's counts (model/moe_layer.hpp, model/sharding.hpp) at the run's size. "
                 "Not run:";
    for (std::size_t i = 0; i < not_run.size(); ++i) std::cout << (i ? "; " : " ") << not_run[i];
    std::cout << ".\n";
  }
  if (!all) throw usage_error("a measured figure is more than 1% from the prediction (see the table)");
}

// The experts' two rows at the run's size: the bytes over the expert groups (model/moe_layer.hpp's count of
// `passes` passes of `tokens` tokens a rank, forward and backward and, `recomputed`, the forward again, fp32 rows;
// `note` says how many a step) and the routed parameters a rank, of an fp32 expert MLP as wide as the layer, not
// gated.
std::array<row, 2> expert_rows(const model::parallel_layout& l, const expert_run& moe, std::size_t width, double tokens,
                               double passes, bool recomputed, const std::string& note, const json& summary) {
  const model::transformer_shape run_shape{
      .hidden = width, .ffn_hidden = width, .gated_mlp = false, .experts = moe.experts, .top_k = moe.top_k};
  const bytes exchange = passes * model::expert_exchange_passes(recomputed) *
                         model::expert_exchange_bytes(run_shape, tokens, l.ep, l.etp, 4.0);
  const double routed =
      static_cast<double>(moe.experts / l.ep) * model::expert_parameters(run_shape) / static_cast<double>(l.etp);
  return {
      row{"bytes over the expert groups per rank and step (ep=" + std::to_string(l.ep) +
              ", etp=" + std::to_string(l.etp) + note + ")",
          exchange.value(), busiest(summary.at("last_step").at("expert_parallel_bytes"))},
      row{std::string(routed_parameters_row), routed, summary.at("experts").at("parameters_per_rank").get<double>()}};
}

// The shared experts' row, where the run has them: the weights a rank holds of them, the model's count of them
// (model::expert_parameters each, split over the tp ranks as a dense MLP is) at the run's size.
std::optional<row> shared_row(const model::parallel_layout& l, std::size_t width, const json& summary) {
  const auto m = shared_shape_of(summary, width);
  if (m.shared_experts == 0) return std::nullopt;
  return row{std::string(shared_parameters_row),
             static_cast<double>(m.shared_experts) * model::expert_parameters(m) / static_cast<double>(l.tp),
             summary.at("experts").at("shared_parameters_per_rank").get<double>()};
}

// A mixture laid out with tp, pp or cp: the layout's scaled run (layout_run_of) with the expert block on the stage
// holding the second layer. Its rows: the layout's (the dense layers' tensor, pipeline, ring and ZeRO counts, as
// without experts) and the experts', one pass a micro-batch of the tokens a rank holds there.
void run_verify_experts_parallel(const verify_args& a, const plan::training_workload& w,
                                 const model::parallel_layout& l, const expert_run& moe) {
  const auto run = layout_run_of(a, w, l, &moe);
  const json summary = summary_of(run_and_capture(run.command));
  const double psi = busiest(summary.at("parameters_per_rank"));
  auto rows_out = layout_rows(run, summary, model::compressor_cost{}, psi);
  const double held = static_cast<double>(l.sequence_parallel ? run.rows / run.t : run.rows);
  const bool again = run.recomputed > 0 || runs_experts_module(l);
  for (auto& x : expert_rows(l, moe, run.width, held, static_cast<double>(run.m), again,
                             again ? ", a micro-batch's passes, its forward again" : ", a pass a micro-batch", summary))
    rows_out.push_back(std::move(x));
  if (auto x = shared_row(l, run.width, summary)) rows_out.push_back(std::move(*x));
  const std::string experts = ", " + std::to_string(moe.experts) + " experts after the second layer (" +
                              std::to_string(moe.experts / l.ep) + " a rank, " + std::to_string(moe.top_k) +
                              " a token, ep=" + std::to_string(l.ep) + ", etp=" + std::to_string(l.etp) +
                              ", routed evenly" + shared_note(moe) + ")";
  print_layout_rows(a, w, run, summary, psi, rows_out, experts);
}

// A mixture's layout (--parallelism with ep or etp) at most two experts a rank, routed evenly (--balanced-routing)
// as the step model prices them. With tp, pp or cp above, run_verify_experts_parallel; otherwise trinity-train's
// data-parallel loop runs its expert groups, ep·etp ranks regrouped from the data-parallel ones as Megatron-Core
// folds them, twice where the layout has expert-data-parallel replicas, 64 features wide (a multiple of etp), as
// many tokens a rank as experts. The dense MLP's states shard over every rank, the experts' over the
// expert-data-parallel group.
void run_verify_experts(const verify_args& a, const plan::training_workload& w, const model::parallel_layout& l) {
  const auto refuse = [&](const std::string& why) { throw bad_flag("--parallelism", model::to_string(l), why); };
  if (!l.codec.empty()) refuse("names a codec; trinity-train's experts do not run with --compress yet");
  if (l.dispatcher == model::token_dispatcher::by_node)
    refuse(
        "names dispatcher=deepep; the step model counts its rows for experts drawn at random, and trinity-train's "
        "balanced routing gives each token consecutive experts, so the 1% check has nothing to hold it to "
        "(trinity-train --dispatcher deepep runs it, checked against its own records); give dispatcher=alltoall");
  if (const auto broken = model::check_layout(plan::job_of(w, l.gpus()), l)) refuse(broken->message());
  const auto& m = *w.shape;
  const std::size_t local = std::min<std::size_t>(m.experts / l.ep, 2), experts = l.ep * local;
  const expert_run moe{experts, std::min(m.top_k, experts), std::min<std::size_t>(m.shared_experts, 2)};
  if (l.tp > 1 || l.pp > 1 || l.cp > 1) return run_verify_experts_parallel(a, w, l, moe);
  const std::size_t ep = l.ep, etp = l.etp, group = ep * etp, replicas = l.dp / group > 1 ? 2 : 1;
  const std::size_t ranks = group * replicas;
  if (ranks > 64)
    refuse("runs " + std::to_string(ranks) +
           " threads here (ep*etp, twice with expert-data-parallel replicas); "
           "verify runs at most 64");
  const std::size_t top_k = moe.top_k, width = etp * ((64 + etp - 1) / etp), tokens = experts;
  const std::size_t steps = count_flag(a.steps, "--steps", 1, 1000);
  // The loop's four layers are two column/row pairs, the experts after the first: both recomputed, or the first
  // where the layout recomputes some of each chunk's layers.
  const auto [recomputes, recompute_pairs] = recomputed_pairs(w, l);
  const std::size_t recomputed = !recomputes ? 0 : recompute_pairs == 1 ? 2 : 1;
  // In groups of two layers or more: both pairs as one group.
  const bool grouped = grouped_pairs(w, l) > 0;
  train_command command{{train_program(a), "--backend", "threads"}};
  command("--ranks", ranks)("--experts", experts)("--top-k", top_k)("--ep", ep)("--etp", etp)("--balanced-routing");
  command("--stage", std::to_string(l.zero_stage))("--steps", steps)("--batch", ranks * tokens)("--width", width);
  if (moe.shared) command("--shared-experts", moe.shared);
  if (l.offload) command("--offload");
  if (recomputed) command("--layers", "3")("--recompute-layers", recomputed);
  if (grouped) command("--recompute-method", "uniform");
  add_expert_recompute_flags(command, l);
  const json summary = summary_of(run_and_capture(command));
  const auto& step = summary.at("last_step");

  // The step model's counts at the run's size: its MoE block (one pass a step, its forward again recomputed) and
  // ZeRO's formulas, the dense weights over every rank and the experts' over their replicas, gathered under ZeRO-3
  // once for a recomputed forward and its backward.
  const bool again = recomputed > 0 || runs_experts_module(l);
  const auto [exchange_row, routed_row] =
      expert_rows(l, moe, width, static_cast<double>(tokens), 1.0, again, again ? ", the forward again" : "", summary);
  const bytes exchange{exchange_row.predicted};
  // The shared experts are dense weights over every rank, beside the MLP's.
  const auto shared = shared_row(l, width, summary);
  const double dense = summary.at("parameters").get<double>() + (shared ? shared->predicted : 0.0),
               routed = routed_row.predicted;
  const auto& sb_json = summary.at("state_bytes");
  const model::state_bytes sb{sb_json.at("parameter").get<double>(), sb_json.at("gradient").get<double>(),
                              sb_json.at("optimizer").get<double>()};
  const auto dense_states = model::zero_memory_per_rank(dense, ranks, l.zero_stage, sb, l.offload);
  const auto expert_states = model::zero_memory_per_rank(routed, replicas, l.zero_stage, sb, l.offload);
  const bytes sent = model::zero_traffic_per_step(dense, ranks, l.zero_stage, sb) +
                     model::zero_traffic_per_step(routed, replicas, l.zero_stage, sb) + exchange;
  const auto measured = [&](const char* group_name, const char* key) { return busiest(step.at(group_name).at(key)); };
  std::vector<row> rows_out{
      exchange_row,
      routed_row,
      {"parameters held per rank (ZeRO-" + std::to_string(l.zero_stage) + ")",
       (dense_states.parameters + expert_states.parameters).value(), measured("resident_bytes", "parameters")},
      {"gradients held per rank", (dense_states.gradients + expert_states.gradients).value(),
       measured("resident_bytes", "gradients")},
      {"optimizer states held per rank", (dense_states.optimizer_states + expert_states.optimizer_states).value(),
       measured("resident_bytes", "optimizer_states")},
      {"bytes sent per rank and step (the exchange and both groups' ZeRO)", sent.value(),
       busiest(step.at("sent_bytes"))}};
  if (l.offload)
    rows_out.push_back({"optimizer states and master copy offloaded per rank",
                        (dense_states.offloaded + expert_states.offloaded).value(),
                        measured("resident_bytes", "offloaded")});
  if (shared) rows_out.insert(rows_out.begin() + 2, *shared);
  const std::string scaled = std::to_string(experts) + " experts of " + std::to_string(width) + " features (" +
                             std::to_string(local) + " a rank, " + std::to_string(top_k) + " a token) on " +
                             std::to_string(ranks) + " ranks as threads (ep=" + std::to_string(ep) +
                             ", etp=" + std::to_string(etp) + ", " + std::to_string(replicas) +
                             " expert-data-parallel " + (replicas > 1 ? "replicas" : "replica") + ", " +
                             std::to_string(tokens) + " tokens a rank routed evenly" + shared_note(moe) +
                             (recomputed == 2 && grouped ? ", both column/row pairs recomputed as one group"
                              : recomputed == 2          ? ", both column/row pairs recomputed"
                              : recomputed == 1          ? ", the first of two column/row pairs recomputed"
                                                         : "") +
                             (runs_experts_module(l) ? ", the experts' block recomputed alone" : "") +
                             (runs_shared_module(l) ? ", the shared experts recomputed alone" : "") + ")";
  print_expert_rows(a, w, l, command, scaled, ranks, rows_out, not_run_of(l, recomputed > 0, modules_run(l, 1, true)));
}

// A model-parallel layout (--parallelism): its tensor, pipeline, context and ZeRO slots run here on threads,
// scaled down to an MLP whose every activation is one size (inputs = width = outputs), each chunk one column/row
// pair (one layer without tensor parallelism), against the step model's counting formulas at that size. With
// context parallelism a sample is a sequence and an attention block follows the first layer (trinity-train
// --sequence), its keys and values going around the context ring.
void run_verify_parallel(const verify_args& a, const plan::system& s, const plan::training_workload& w) {
  if (!a.planning.profile.empty())
    throw bad_flag("--profile", a.planning.profile,
                   "times the data-parallel planner's run (add --parallelism data); a layout's step time is not "
                   "verified yet");
  for (const char* f : {"--ranks", "--batch"})
    if (std::find(a.training_flags_given.begin(), a.training_flags_given.end(), f) != a.training_flags_given.end())
      throw usage_error(std::string(f) +
                        ": a layout's run takes its ranks and batch from the layout; the "
                        "data-parallel planner's run (--parallelism data) takes them");
  if (!w.shape)
    throw bad_flag("--workload", a.workload,
                   "has no transformer shape; give heads, ffn_hidden and vocabulary "
                   "(docs/parallelism.md) to verify a parallel layout");
  const auto l = a.parallelism == "search" ? search_layouts(s, w, a.gpus, 0, a.planning).chosen().plan.layout
                                           : named_layout(s, a.parallelism, a.gpus);
  // A stated placement runs each of the model's layers as a pair, as placed: one chunk a stage, on a dense model
  // that recomputes nothing (a chunk's kept set is then its layers', which the step model counts exactly).
  if ((model::stated_stages(l) > 0 || !l.pipeline_layout.empty()) &&
      (w.shape->moe() || l.vpp > 1 || l.recompute != model::recomputation::none || !l.modules.empty()))
    throw bad_flag("--parallelism", a.parallelism,
                   "states where the model's layers sit on the pipeline's stages, which the run here places only "
                   "one chunk a stage (vpp=1), on a dense model, recomputing nothing; verify the layout without "
                   "first_stage_layers, last_stage_layers and pipeline_layout, or within those");
  if (l.flushes > 1)
    throw bad_flag("--parallelism", a.parallelism,
                   "runs a step's micro-batches in " + std::to_string(l.flushes) +
                       " pipeline flushes; trinity-train runs them in one, as Megatron-Core does; verify the layout "
                       "without flushes");
  if (w.shape->moe()) return run_verify_experts(a, w, l);
  const auto run = layout_run_of(a, w, l);
  // The codec the layout names, at the rates and ratio the planner priced it with (the system's devices').
  model::compressor_cost codec;
  if (!l.codec.empty()) {
    auto budgeted = w;
    try {
      codec = plan::gradient_codec(gradient_codecs(s, budgeted, a.planning), l.codec);
    } catch (const invalid_input& e) {
      throw bad_flag("--parallelism", model::to_string(l), e.what());
    }
  }
  const json summary = summary_of(run_and_capture(run.command));
  const double psi = busiest(summary.at("parameters_per_rank"));
  print_layout_rows(a, w, run, summary, psi, layout_rows(run, summary, codec, psi));
}

// Edge and hetero-train plans are not run here.
template <class Description>
void verify_plan(const verify_args& a, const plan::system&, const Description&, const training_run&) {
  throw bad_flag("--workload", a.workload,
                 "verify runs training, diffusion, llm-serve and data-curation plans; an edge or hetero-train "
                 "plan is not run here yet (for hetero-train's link, run trinity-stream demo)");
}

// The step time the planner prices with this machine in place of the preset's: its dense rate per rank
// (threads beyond the cores share them) and the thread link, at the run's samples per rank; beside the fastest
// step the run took.
row timed_step_row(const verify_args& a, const plan::system& small_system, const plan::training_workload& small,
                   const plan::training_plan& p, const model::compressor_cost& codec, const json& summary,
                   const training_run& run) {
  auto here = small_system;
  const double share = std::min(1.0, static_cast<double>(run.cores) / static_cast<double>(run.ranks));
  here.device.compute = run.machine->dense * share;  // the MLP runs fp32 on the CPU: one rate for all
  here.device.compute_by_precision.clear();
  here.interconnect.latency = run.machine->latency;
  here.interconnect.bandwidth = run.machine->bandwidth;
  auto at_batch = small;
  at_batch.batch = 1;
  at_batch.sequence = static_cast<std::size_t>(summary.at("samples_per_rank").get<double>());
  const auto& as_run = p;   // the run recomputes where the plan does: its FLOPs are the plan's
  auto here_codec = codec;  // this machine's rates for the plan's codec, when the profile measured it
  for (const auto& k : read_profile(a.planning.profile))
    if (k.name == codec.name) here_codec = k;
  const auto timed = plan::price(here, at_batch, here_codec, as_run);
  auto seconds_of = summary.at("step_seconds").get<std::vector<double>>();
  const double fastest = *std::min_element(seconds_of.begin(), seconds_of.end());
  return {"step time (compute " + to_string(timed.compute_time) + ", link " + to_string(timed.comm_time) + ", codec " +
              to_string(timed.codec_time) + ")",
          timed.total.time.value(), fastest, true};
}

// The MLP's activations at the peak on rank 0, of `samples` samples, as the planner keeps a model's
// (plan/training.hpp): every layer's input and the output, or, recomputing, each pair's input alone and one pair
// rebuilt (its middle activation and its output again).
row activation_row(const json& summary, std::size_t samples, bool recompute) {
  const auto widths = summary.at("widths").get<std::vector<std::size_t>>();
  std::size_t kept = 0, rebuilt = 0;
  for (std::size_t l = 0; l < widths.size(); ++l) {
    if (recompute && l % 2 == 1)
      rebuilt = std::max(rebuilt, widths[l] + widths[l + 1]);
    else
      kept += widths[l];
  }
  return {recompute ? "activations at the peak (each pair's input kept, one pair rebuilt)" : "activations at the peak",
          4.0 * static_cast<double>(samples * (kept + rebuilt)),
          summary.at("last_step").at("peak_bytes").at("activations").at(0).get<double>()};
}

// The verified plan's table (or JSON): each mechanism predicted beside measured.
void print_verify_plan(const verify_args& a, const std::string& plan_text, const train_command& command, double psi,
                       const training_run& run, const std::vector<row>& rows, bool all) {
  const auto& [ranks, steps, batch, machine, cores] = run;
  if (a.json) {
    const json jr = workloads::rows_json(rows, 0.2, true);
    std::cout << json{{"plan", plan_text},
                      {"run", command.text()},
                      {"parameters", psi},
                      {"ranks", ranks},
                      {"rows", jr},
                      {"all_within_20_percent", all},
                      {"not_run", machine ? json::array() : json::array({"step time"})}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  } else {
    std::cout << "Plan: " << plan_text << "\nRun here, scaled to an MLP of " << static_cast<long>(psi)
              << " parameters on " << ranks << " ranks as threads:\n  " << command << "\n\n";
    table t({"mechanism", "predicted", "measured", "measured / predicted", "within 20%"});
    for (const auto& x : rows)
      t.add({x.mechanism, x.timing ? to_string(seconds{x.predicted}) : to_string(bytes{x.predicted}),
             x.timing ? to_string(seconds{x.measured}) : to_string(bytes{x.measured}),
             units::detail::format_number(x.ratio()),
             std::string(x.within(0.2) ? "yes" : "NO") + (x.timing ? " (timed)" : "")});
    t.print(std::cout);
    if (machine)
      std::cout << "\nStep time: the fastest of " << steps << " steps, on " << ranks << " ranks sharing " << cores
                << " hardware threads; a time on a shared machine is reported, not held to the 20%.\n";
    else
      std::cout << "\nNot verified: step time. Measure the machine first: trinity calibrate --out profile.json, then "
                   "verify --profile profile.json.\n";
  }
}

// A training plan: a layout's slots (verify_parallel), or the data-parallel planner's plan run on threads.
void verify_plan(const verify_args& a, const plan::system& s, const plan::training_workload& training,
                 const training_run& run) {
  if (const auto mode = training_parallelism(a.parallelism, training); mode != "data") {
    auto laid = a;
    laid.parallelism = mode;
    return run_verify_parallel(laid, s, training);
  }
  if (a.gpus) throw bad_flag("--gpus", std::to_string(a.gpus), gpus_go_with);
  const auto [ranks, steps, batch, machine, cores] = run;
  auto w = training;
  // The plan is the system's (its own codecs); the profile, which measured this machine, only times the run.
  auto planning = a.planning;
  planning.profile.clear();
  const auto r = plan_training_with(s, w, planning);
  const auto& p = r.chosen().plan;
  const auto& codec = r.codecs[p.codec];

  // The run, scaled down.
  const std::string train = train_program(a);
  train_command command{{train, "--backend", "threads"}};
  command("--ranks", ranks)("--stage", std::to_string(p.stage))("--steps", steps)("--batch", batch);
  if (p.offload_tier) command("--offload");
  if (codec.name != "identity") command("--compress", codec.name);
  // Recomputation keeps each pair of layers' input alone: eight layers, so that it saves what the pairs hold.
  if (p.recompute) command("--layers", "7")("--recompute-layers", "4");
  const json summary = summary_of(run_and_capture(command));
  const auto& step = summary.at("last_step");
  const double psi = summary.at("parameters").get<double>();
  const model::state_bytes b{summary.at("state_bytes").at("parameter").get<double>(),
                             summary.at("state_bytes").at("gradient").get<double>(),
                             summary.at("state_bytes").at("optimizer").get<double>()};

  // The prediction, from the planner's own formulas at the run's size.
  auto small_system = s;
  small_system.device.count = ranks;
  plan::training_workload small{w.name + " (scaled to the MLP)", psi, 1, 1, 1, 1, ranks, b, w.error_budget};
  const auto priced = plan::price(small_system, small, codec, p);
  const auto states = model::zero_memory_per_rank(psi, ranks, p.stage, b, p.offload_tier != 0);
  const auto measured = [&](const char* group, const char* key) { return step.at(group).at(key).at(0).get<double>(); };
  std::vector<row> rows{
      {"parameters held per rank (ZeRO stage " + std::to_string(p.stage) + ")", states.parameters.value(),
       measured("resident_bytes", "parameters")},
      {"gradients held per rank", states.gradients.value(), measured("resident_bytes", "gradients")},
      {"optimizer states on the device", states.optimizer_states.value(),
       measured("resident_bytes", "optimizer_states")},
      {"optimizer states offloaded", states.offloaded.value(), measured("resident_bytes", "offloaded")},
      {"bytes sent per rank and step (" + codec.name + ")", priced.link_bytes.value(),
       step.at("sent_bytes").at(0).get<double>()},
      {"bytes to and from the offload tier per step", priced.offload_bytes.value(),
       step.at("offload_bytes").at(0).get<double>()},
  };
  rows.push_back(activation_row(summary, comm::partition(batch, static_cast<int>(ranks)).size(0), p.recompute));
  if (machine) rows.push_back(timed_step_row(a, small_system, small, p, codec, summary, run));
  bool all = true;
  for (const auto& x : rows) all &= x.timing || x.within(0.2);
  print_verify_plan(a, plan::describe(r, s), command, psi, run, rows, all);
  if (!all) throw usage_error("a measured figure is more than 20% from the prediction (see the table)");
}

void run_verify(const verify_args& a) {
  const auto run = training_run_of(a);
  const auto s = system_from(a.system);
  auto w = workload_from(a.workload, s);
  // A workload the library can run verifies itself; training is run here, with trinity-train.
  w.visit([&]<class Kind>(Kind, auto& d) {
    if constexpr (workloads::VerifiableWorkload<Kind>)
      Kind::verify(a, s, d, std::cout);
    else
      verify_plan(a, s, d, run);
  });
}

}  // namespace

void register_verify(CLI::App& app) {
  auto a = std::make_shared<verify_args>();
  auto* v = app.add_subcommand("verify", "Run the chosen plan here, scaled down, beside the planner's prediction");
  v->add_option("--system", a->system, "A preset or a JSON file, as for plan")->type_name("PRESET|FILE");
  v->add_option("--workload", a->workload,
                "A training, diffusion, llm-serve, data-curation, rag-serve or embedding-serve workload: a preset or a "
                "JSON file")
      ->type_name("PRESET|FILE");
  add_planning_flags(*v, a->planning);
  v->add_option("--ranks", a->ranks, "Ranks (threads) of the scaled-down run (default 4)")->type_name("COUNT");
  v->add_option("--steps", a->steps, "Training steps of the run (default 3)")->type_name("COUNT");
  v->add_option("--batch", a->batch, "Global batch of the run, split across ranks (default 256)")->type_name("COUNT");
  v->add_option("--trace", a->trace,
                "A diffusion plan: the request trace to replay (default: a synthetic one); an "
                "llm-serve plan: the block-hashed trace (Mooncake's JSONL format); an embedding-serve plan: a "
                "directory of DLRM lookup traces (trace_<t>.log or .bin, size_trace_<t>.log) to replay")
      ->type_name("FILE.csv|FILE.jsonl");
  v->add_option("--embeddings", a->embeddings, "A diffusion plan: the trace's prompt embeddings")
      ->type_name("FILE.fvecs");
  v->add_option("--requests", a->requests, "A diffusion plan: requests of the synthetic trace (default 10000)")
      ->type_name("COUNT");
  v->add_option("--samples", a->samples, "A data-curation plan: samples per placement (default: about 8 s of them)")
      ->type_name("COUNT");
  v->add_option("--train", a->train, "The trinity-train program (default: beside this one)")->type_name("FILE");
  add_layout_flags(*v, a->parallelism, a->gpus,
                   "run this layout's tensor, pipeline, context and ZeRO slots here, scaled down "
                   "(as for plan: tp=2,pp=4,vpp=2,sp=on,zero=1), or the layout search's "
                   "choice (`search`, the default)");
  v->add_flag("--json", a->json, "Print JSON");
  v->callback([a, v] {
    for (const char* f : {"--ranks", "--steps", "--batch", "--train"})
      if (v->count(f)) a->training_flags_given.push_back(f);
    a->planning.read_profile = read_profile;
    run_verify(*a);
  });
}

}  // namespace trinity::cli
