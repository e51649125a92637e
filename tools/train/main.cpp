// trinity-train: trains a small MLP data-parallel on N ranks, threads in one
// process or processes under mpirun, with ZeRO stage 0-3, optional optimizer
// offload and gradient compression (in any stage), or model-parallel (--tp, --sp: Megatron's MLP pairs over a
// tensor group; --pp, --vpp: 1F1B or interleaved; --cp: each sequence's tokens over a context group, the
// attention block's keys and values around a ring; ZeRO, offload and the codec over each rank's data and
// context ranks), and prints one
// JSON line per step (loss,
// resident bytes per rank by kind, bytes sent per rank), then a summary with
// model/sharding.hpp's prediction beside the last step.
//
//   build/bin/trinity-train --ranks 4 --stage 3
//   mpirun -n 4 build/bin/trinity-train --stage 3
//   build/bin/trinity-train --ranks 4 --stage 2 --compress int8-ef
//   build/bin/trinity-train --ranks 8 --pp 2 --vpp 2 --micro-batches 4 --stage 1
//   build/bin/trinity-train --ranks 8 --tp 2 --sp --pp 2 --stage 1
//   build/bin/trinity-train --ranks 8 --tp 2 --pp 2 --stage 1 --offload --compress int8-ef
//   build/bin/trinity-train --ranks 4 --sequence 8 --cp 2 --stage 2
//   build/bin/trinity-train --ranks 4 --experts 8 --top-k 2 --ep 2 --stage 1
//   build/bin/trinity-train --ranks 8 --tp 2 --sp --pp 2 --experts 8 --ep 2 --stage 1

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>

#include <trinity/comm/thread_world.hpp>
#include <trinity/detail/printable.hpp>
#include <trinity/model/pipeline_schedule.hpp>

#ifdef TRINITY_TRAIN_WITH_MPI
#include <trinity/backends/mpi.hpp>
#endif

#include "../cli_values.hpp"
#include "runners.hpp"

namespace {

using namespace trinity;

// The attention block's shape (--sequence, --heads) and the context group that splits it (--cp).
void check_attention(const train::config& cfg) {
  if (cfg.sequence % cfg.context != 0)
    throw invalid_input("--cp", "splits each sequence's " + std::to_string(cfg.sequence) + " tokens over " +
                                    std::to_string(cfg.context) + " ranks. Fix: --sequence a multiple of " +
                                    std::to_string(cfg.context) + " (--sequence " + std::to_string(2 * cfg.context) +
                                    ", say)");
  if (!cfg.attention()) return;
  if (cfg.width % cfg.heads != 0)
    throw invalid_input("--heads", std::to_string(cfg.heads) + " heads do not divide the first layer's " +
                                       std::to_string(cfg.width) +
                                       " outputs (--width). Fix: a --heads that divides --width");
  if (cfg.heads % cfg.tensor != 0)
    throw invalid_input("--heads", std::to_string(cfg.heads) + " heads do not split over " +
                                       std::to_string(cfg.tensor) +
                                       " tensor-parallel ranks. Fix: a --heads that --tp divides");
}

// The mixture-of-experts block (--experts): its experts over expert groups of --ep ranks, regrouped from the
// tp·cp·dp ranks of the pipeline stage that holds it.
template <class Comm>
void check_experts(const Comm& c, const train::config& cfg) {
  const auto& m = cfg.moe;
  if (!cfg.experts()) {
    if (m.ep > 1 || m.etp > 1 || m.expert_width > 0 || m.capacity_factor > 0 || m.balanced || m.shared_experts > 0)
      throw invalid_input(m.shared_experts > 0 ? "--shared-experts" : "--ep",
                          "--ep, --etp, --expert-width, --capacity-factor, --balanced-routing and --shared-experts "
                          "shape a mixture of experts. Fix: --experts N");
    return;
  }
  if (cfg.hidden_layers < 2)
    throw invalid_input("--layers",
                        "the experts follow the second layer, and with 1 hidden layer it is the output "
                        "layer. Fix: --layers 2 or more");
  if (cfg.tensor > 1 && !cfg.sequence_parallel)
    throw invalid_input("--sp",
                        "the experts take the tokens a rank holds sequence-parallel, as Megatron-Core's MoE "
                        "layers do beside tensor parallelism. Fix: add --sp");
  if (m.top_k > m.experts)
    throw invalid_input("--top-k", std::to_string(m.top_k) + " experts a token, of " + std::to_string(m.experts) +
                                       ". Fix: --top-k at most --experts");
  if (m.experts % m.ep != 0)
    throw invalid_input("--ep", std::to_string(m.ep) + " ranks do not split the " + std::to_string(m.experts) +
                                    " experts evenly. Fix: an --ep that divides --experts");
  // The expert groups regroup a pipeline stage's ranks: the world's without --pp.
  const auto world = static_cast<std::size_t>(c.size());
  const std::size_t stage = world % cfg.pipeline == 0 ? world / cfg.pipeline : world;
  const std::string ranks = std::to_string(stage) + " ranks" + (stage == world ? "" : " of a pipeline stage");
  const std::string fix = stage == world ? "--ranks a multiple of" : "--ranks / --pp a multiple of";
  if (stage % m.ep != 0)
    throw invalid_input(
        "--ep", std::to_string(m.ep) + " ranks an expert group do not divide the " + ranks + ". Fix: " + fix + " --ep");
  const std::size_t width = m.expert_width ? m.expert_width : cfg.width;
  if (width % m.etp != 0)
    throw invalid_input("--etp", std::to_string(m.etp) + " ranks do not split an expert's width, " +
                                     std::to_string(width) + ". Fix: an --etp that divides --expert-width");
  if (width * m.shared_experts % cfg.tensor != 0)
    throw invalid_input("--shared-experts", std::to_string(m.shared_experts) + " shared experts of width " +
                                                std::to_string(width) + " do not split over the " +
                                                std::to_string(cfg.tensor) +
                                                " tensor-parallel ranks. Fix: --expert-width or --shared-experts "
                                                "that --tp divides");
  if (stage % (m.ep * m.etp) != 0)
    throw invalid_input("--etp", "--ep times --etp (" + std::to_string(m.ep * m.etp) + ") does not divide the " +
                                     ranks + ". Fix: " + fix + " --ep x --etp");
}

template <class Comm>
int dispatch(Comm& c, const train::config& cfg, std::ostream& out) {
  if (cfg.inject_nan_step >= 0 && cfg.inject_nan_rank >= c.size())
    throw invalid_input("--inject-nan", "rank " + std::to_string(cfg.inject_nan_rank) + " is not one of the run's " +
                                            std::to_string(c.size()) +
                                            " ranks, and no gradient would be hit. Fix: a "
                                            "RANK from 0 to " +
                                            std::to_string(c.size() - 1));
  check_attention(cfg);
  check_experts(c, cfg);
  if (cfg.pipeline > 1 || cfg.virtual_stages > 1 || cfg.micro_batches > 0 || cfg.tensor > 1 || cfg.sequence_parallel ||
      cfg.context > 1 || !cfg.chunk_layers.empty() || !cfg.schedule.empty()) {
    auto pcfg = cfg;
    if (pcfg.micro_batches == 0) pcfg.micro_batches = pcfg.pipeline;
    if (pcfg.virtual_stages > 1 && pcfg.pipeline == 1)
      throw invalid_input("--vpp", "interleaving needs pipeline stages. Fix: --pp 2 or more");
    if (!pcfg.schedule.empty() && pcfg.pipeline == 1)
      throw invalid_input("--schedule", "orders a pipeline's passes. Fix: --pp 2 or more");
    return train::run_model_parallel(c, pcfg, out);
  }
  train::check_recompute(cfg, cfg.shape().layers());
  return train::run_data_parallel(c, cfg, out);
}

// --inject-nan STEP[:RANK], each a whole decimal number: STEP from 1 (stored from 0), RANK from 0 (checked against
// the run's ranks in dispatch).
void parse_inject_nan(const std::string& text, train::config& cfg) {
  const auto number = [&](std::string_view part, const char* what) {
    long v = -1;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc{} || end != part.data() + part.size() || part.empty())
      throw invalid_input("--inject-nan", "\"" + text + "\": " + what +
                                              " is not a whole number. Fix: STEP[:RANK], e.g. 2:1 (step 2, rank 1)");
    return v;
  };
  const auto colon = text.find(':');
  const std::string_view all(text);
  cfg.inject_nan_step = number(all.substr(0, colon), "STEP") - 1;
  if (colon != std::string::npos) {
    const long rank = number(all.substr(colon + 1), "RANK");
    if (rank < 0 || rank > 1 << 20)
      throw invalid_input("--inject-nan", "RANK " + std::to_string(rank) + " is no rank. Fix: a RANK from 0");
    cfg.inject_nan_rank = static_cast<int>(rank);
  }
  if (cfg.inject_nan_step < 0) throw invalid_input("--inject-nan", "STEP counts from 1");
}

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"); }

// The flags of recomputation, each with its values.
void add_recompute_options(CLI::App& app, train::config& cfg) {
  app.add_option("--recompute-layers", cfg.recompute_layers,
                 "blocks of each model chunk that keep only their input and run their forward again in the "
                 "backward (Megatron-Core's full recomputation, block method); a block is a column/row pair of "
                 "layers")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  app.add_option_function<std::string>(
         "--recompute-method",
         [&cfg](const std::string& v) {
           cfg.recompute_method = v == "uniform" ? model::recompute_method::uniform : model::recompute_method::block;
         },
         "block (the default): --recompute-layers counts each chunk's first blocks recomputed; uniform: every block "
         "is, in checkpointed groups of --recompute-layers blocks (Megatron-Core's --recompute-method)")
      ->check(CLI::IsMember({"block", "uniform"}));
  app.add_flag("--recompute-attention", cfg.recompute_attention,
               "the attention block keeps its input alone and runs its core again in the backward, its keys and "
               "values around the context ring again (Megatron-Core's selective recomputation)");
  app.add_flag("--recompute-experts", cfg.recompute_experts,
               "the experts' block keeps its input alone and runs again in the backward, its router, dispatch and "
               "combine (Megatron-Core's recompute module moe)");
  app.add_flag("--recompute-shared-experts", cfg.recompute_shared,
               "the shared experts keep the block's input alone and run again in the backward, their collectives "
               "too (Megatron-Core's recompute module shared_experts)");
}

// The flags of model parallelism, each with its range, and recomputation's.
void add_parallel_options(CLI::App& app, train::config& cfg) {
  app.add_option("--pp", cfg.pipeline,
                 "pipeline stages: the layers split over PP ranks, data parallel across pipelines")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  app.add_option("--vpp", cfg.virtual_stages,
                 "model chunks per pipeline rank (Megatron's interleaved schedule; 1: 1F1B)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  app.add_option(
         "--schedule", cfg.schedule,
         "the pipeline schedule: " + trinity::model::schedule_names() + " (default 1f1b, interleaved with --vpp)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return trinity::model::known_schedule(v) && !v.empty() ? std::string()
                                                                   : "use one of " + trinity::model::schedule_names();
          },
          "NAME"));
  app.add_option("--chunk-layers", cfg.chunk_layers,
                 "each model chunk's layers, pp*vpp counts in the model's order, chunk c on rank c mod pp "
                 "(Megatron-Core's --pipeline-model-parallel-layout; default: an even split)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{0}, std::size_t{1025}));
  app.add_option("--micro-batches", cfg.micro_batches,
                 "micro-batches a pipeline replica splits its samples into (default: --pp)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 16));
  app.add_option("--tp", cfg.tensor,
                 "tensor-parallel ranks: each pair of a chunk's layers split column- then row-wise over them")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  add_recompute_options(app, cfg);
  app.add_flag("--sp", cfg.sequence_parallel,
               "sequence parallelism: tokens outside a pair split over the tensor group");
  app.add_option("--sequence", cfg.sequence,
                 "tokens a sample has (--batch counts sequences); above 1 an attention block "
                 "follows the first layer")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  app.add_option("--heads", cfg.heads, "the attention block's heads, over the first layer's --width outputs")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  app.add_option("--cp", cfg.context,
                 "context-parallel ranks: each sequence's tokens split over them, keys and values "
                 "passed around a ring")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
}

// The flags, each with its range: a value outside it is a usage error before anything runs.
void add_options(CLI::App& app, train::config& cfg, int& ranks, std::string& backend, std::string& nan) {
  app.add_option("--ranks", ranks, "ranks as threads of this process (ignored under mpirun)")
      ->check(CLI::Range(1, 256));
  app.add_option("--backend", backend, "threads, mpi, or auto (mpi when started by mpirun)")
      ->check(CLI::IsMember({"auto", "threads", "mpi"}));
  app.add_option("--stage", cfg.stage, "0 (DDP), 1, 2 or 3")->check(CLI::Range(0, 3));
  app.add_flag("--offload", cfg.offload, "keep optimizer states (and the master copy) in the offload tier");
  app.add_option("--compress", cfg.compress, "reduce gradients through this compressor, e.g. int8-ef");
  app.add_option("--steps", cfg.steps, "training steps")->check(CLI::Range(1L, 1000000L));
  app.add_option("--batch", cfg.batch, "global batch, split across ranks")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  app.add_option("--width", cfg.width, "hidden width")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  app.add_option("--layers", cfg.hidden_layers, "hidden layers")->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  app.add_option("--inputs", cfg.inputs, "input features")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  app.add_option("--outputs", cfg.outputs, "outputs")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  // CLI::Range compares, and NaN compares false to everything: a NaN rate would pass it and train to NaN.
  app.add_option("--lr", cfg.learning_rate, "Adam's learning rate, from 0 to 10")
      ->check(CLI::Validator(
          [](std::string& v) {
            float x = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            return ec == std::errc{} && end == v.data() + v.size() && std::isfinite(x) && x >= 0 && x <= 10
                       ? std::string()
                       : "a learning rate is a finite number from 0 to 10, e.g. 0.001";
          },
          "RATE"));
  app.add_option("--seed", cfg.seed, "seed of the task and the initial parameters")
      ->check(CLI::Validator(
          [](std::string& v) {  // as written: no sign, no wrap past 2^64 - 1 (CLI11 would take -1 as 2^64 - 1)
            std::uint64_t x = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            return ec == std::errc{} && end == v.data() + v.size() && !v.empty() && v.front() != '+'
                       ? std::string()
                       : "a seed is a whole number from 0 to 18446744073709551615";
          },
          "SEED"));
  app.add_option("--save-checkpoint", cfg.save_checkpoint, "write a sharded checkpoint into DIR after the last step");
  app.add_option("--load-checkpoint", cfg.load_checkpoint,
                 "resume from a sharded checkpoint in DIR (any rank count and layout)");
  add_parallel_options(app, cfg);
  app.add_option("--inject-nan", nan, "STEP[:RANK]: put a NaN in RANK's gradient at STEP (counted from 1)");
}

// The mixture of experts' flags, each with its range.
void add_expert_options(CLI::App& app, train::config& cfg, std::string& dispatcher, std::size_t& node_ranks) {
  app.add_option("--experts", cfg.moe.experts,
                 "a mixture-of-experts block of this many experts after the second layer (0: none)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1024}));
  app.add_option("--top-k", cfg.moe.top_k, "experts a token runs")->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  app.add_option("--ep", cfg.moe.ep, "expert-parallel ranks: the experts spread over them, tokens sent to them")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  app.add_option("--etp", cfg.moe.etp, "expert-tensor-parallel ranks: each expert's width split over them")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  app.add_option("--expert-width", cfg.moe.expert_width, "an expert's FFN width (default --width)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 14));
  app.add_option("--capacity-factor", cfg.moe.capacity_factor,
                 "an expert's capacity over its even share of a rank's assignments; the rest are dropped "
                 "(default: dropless)")
      ->check(CLI::Validator(
          [](std::string& v) {  // CLI::Range lets NaN through: it compares false both ways
            double x = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            return ec == std::errc{} && end == v.data() + v.size() && x >= 1 && x <= 1024
                       ? std::string()
                       : "a capacity factor is a number from 1 to 1024 (leave it out for dropless routing)";
          },
          "FACTOR"));
  app.add_option("--shared-experts", cfg.moe.shared_experts,
                 "experts every token runs beside its routed ones, one MLP that many experts wide, split over the "
                 "tensor group (DeepSeek's, Qwen's)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{64}));
  app.add_flag("--balanced-routing", cfg.moe.balanced,
               "route every rank's tokens evenly over the experts, each weighed 1/k, with no router");
  app.add_option("--dispatcher", dispatcher,
                 "how tokens reach their experts: alltoall (Megatron-Core's) or deepep (deduplicated by node, "
                 "--node-ranks a node)")
      ->check(CLI::IsMember({"alltoall", "deepep"}));
  app.add_option("--node-ranks", node_ranks,
                 "with --dispatcher deepep: consecutive ranks of an expert group a node "
                 "(default --ep, one node)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
}

// --dispatcher and --node-ranks as the block's dispatcher policy.
void set_dispatcher(train::config& cfg, const std::string& dispatcher, std::size_t node_ranks, bool ranks_given) {
  if (dispatcher != "deepep") {
    if (ranks_given)
      throw invalid_input("--node-ranks",
                          "sizes the nodes of --dispatcher deepep, and the run's dispatcher is the "
                          "all-to-all. Fix: add --dispatcher deepep, or drop --node-ranks");
    return;
  }
  const std::size_t g = ranks_given ? node_ranks : cfg.moe.ep;
  if (cfg.moe.etp > 1)
    throw invalid_input("--dispatcher", "deepep sends a token's whole row once a node and once a rank, and --etp " +
                                            std::to_string(cfg.moe.etp) +
                                            " splits each expert's rows. Fix: --etp 1, or --dispatcher alltoall");
  if (cfg.moe.ep % g != 0)
    throw invalid_input("--node-ranks", std::to_string(g) + " ranks a node do not split an expert group of --ep " +
                                            std::to_string(cfg.moe.ep) + ". Fix: a --node-ranks that divides --ep");
  cfg.moe.dispatch = train::node_dispatch{.node_ranks = g};
}

// Tells a failure on stderr, in one write so that processes under mpirun do not interleave their lines: exit code
// 2 for input refused (as `trinity`), 1 for any other.
int report(const std::exception& e) {
  std::cerr << ("trinity-train: " + trinity::detail::printable(e.what()) + '\n') << std::flush;
  return dynamic_cast<const invalid_input*>(&e) ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "trinity-train: training of a small MLP, data-parallel under ZeRO stage 0-3, tensor-, pipeline- and "
      "context-parallel; one JSON line per step"};
  train::config cfg;
  int ranks = 1;
  std::string backend = "auto", nan, dispatcher = "alltoall";
  std::size_t node_ranks = 1;
  add_options(app, cfg, ranks, backend, nan);
  add_expert_options(app, cfg, dispatcher, node_ranks);
  trinity::cli::refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a "ParseError" that exits 0; every real one is a usage error, exit code 2 like `trinity`.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (!nan.empty()) parse_inject_nan(nan, cfg);
    // A flag that shapes the experts, given where there are none (--experts 0, or left out), would be ignored.
    for (const char* f : {"--top-k", "--ep", "--etp", "--expert-width", "--capacity-factor", "--balanced-routing",
                          "--shared-experts", "--dispatcher", "--node-ranks"})
      if (cfg.moe.experts == 0 && app.count(f) > 0)
        throw invalid_input(f,
                            "shapes a mixture of experts, and the run has none (--experts 0 or left out). Fix: "
                            "--experts N, or drop " +
                                std::string(f));
    set_dispatcher(cfg, dispatcher, node_ranks, app.count("--node-ranks") > 0);
    const bool mpi = backend == "mpi" || (backend == "auto" && launched_by_mpirun());
    if (mpi) {
#ifdef TRINITY_TRAIN_WITH_MPI
      trinity::mpi::environment env(argc, argv);
      // A failure is told before MPI_Finalize: a peer that exits first has mpirun abort this process, and a
      // reason printed after finalizing may never be printed.
      try {
        trinity::mpi::communicator c;
        return dispatch(c, cfg, std::cout);
      } catch (const std::exception& e) {
        return report(e);
      }
#else
      throw invalid_input("--backend", "this build has no MPI backend; configure with -DTRINITY_WITH_MPI=ON");
#endif
    }
    comm::thread_world world(ranks);
    int code = 0;
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      const int rc = dispatch(c, cfg, std::cout);
      if (c.rank() == 0) code = rc;
    });
    // Its lines reached their destination (a full disk behind a redirect is a failed run, not a quiet one).
    if (code == 0 && !(std::cout << std::flush))
      throw invalid_input("output", "the step lines could not be written: standard output is full or closed");
    return code;
  } catch (const std::exception& e) {
    return report(e);
  }
}
