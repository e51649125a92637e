// train::mlp_chunks, a pipeline rank's chunks of the reference trainer's perceptron, run by parallel::run_pipeline on
// comm::thread_world: over 2 stages the gradients and the loss are one stage's; recomputing each chunk's pair, or
// running GPipe's schedule, gives them bit for bit; a rank's activation peak is what pipeline_prediction.hpp counts
// from the shapes, smaller recomputed.
#include <catch2/catch.hpp>

#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/schemes.hpp>
#include <trinity/train/pipeline_chunks.hpp>
#include <trinity/train/pipeline_prediction.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "small_trainer.hpp"

namespace train_pipeline_chunks_test {

using namespace trinity;
using rank_comm = comm::thread_communicator;
using group = comm::group<rank_comm>;
using experts = train::moe_block<shard::replicate, rank_comm>;

struct step_result {
  std::map<std::size_t, std::vector<float>> gradients;  // by model layer
  double loss = 0;
  std::vector<std::uint64_t> peak_bytes, predicted_bytes;  // each pipeline rank's activations
};

train::config config_of(std::size_t pp, const std::string& schedule, std::size_t recompute_layers) {
  auto cfg = test::small_trainer();  // 4 layers: a pair a chunk over 2 stages
  cfg.pipeline = pp;
  cfg.micro_batches = 4;
  cfg.schedule = schedule;
  cfg.recompute_layers = recompute_layers;
  return cfg;
}

// One pipelined forward and backward of every micro-batch over cfg.pipeline ranks.
step_result run(const train::config& cfg) {
  const auto shape = cfg.shape();
  const auto p = static_cast<int>(cfg.pipeline);
  step_result out;
  out.peak_bytes.resize(cfg.pipeline);
  out.predicted_bytes.resize(cfg.pipeline);
  std::mutex lock;
  comm::thread_world world(p);
  comm::run_ranks(world, [&](rank_comm& c) {
    const auto layout = train::pipelined_layout(cfg, shape, cfg.pipeline, 0);
    const auto g = parallel::groups_of(layout, p, c.rank());
    group tp(c, g.tp), pp(c, g.pp), cp(c, g.cp), dp(c, g.weights);
    const auto rank = static_cast<std::size_t>(pp.rank());
    const std::size_t rows = train::micro_batch_rows(cfg, cfg.batch);
    const auto local = train::local_layers_of(cfg, shape, rank, 0);
    const train::teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
    shard::memory_ledger ledger;
    shard::data_parallel<shard::replicate, group, shard::exact_reduction> states(dp, ledger, local.sizes, local.initial,
                                                                                 shard::adam{}, {});
    auto stage = train::chunks_of(cfg, shape, task, states, tp, cp, static_cast<experts*>(nullptr), rank, 0, rows, 0);
    parallel::run_pipeline(pp, cfg.schedule, cfg.micro_batches, cfg.virtual_stages, stage);
    const std::lock_guard hold(lock);
    for (std::size_t i = 0; i < local.ids.size(); ++i) {
      const auto grad = states.gradient(i);
      out.gradients[local.ids[i]].assign(grad.begin(), grad.end());
    }
    out.loss += stage.loss;
    out.peak_bytes[rank] = stage.peak_floats * sizeof(float);
    out.predicted_bytes[rank] = train::predict_pipelined(cfg, shape, rows, rank, 0).activation_peak;
  });
  return out;
}

TEST_CASE("pipeline chunks: two stages give one stage's gradients and loss", "[parallel][train]") {
  const auto one = run(config_of(1, "", 0)), two = run(config_of(2, "", 0));
  CHECK(two.loss == Approx(one.loss).epsilon(1e-6));
  REQUIRE(two.gradients.size() == one.gradients.size());
  for (const auto& [l, grad] : one.gradients) {
    INFO("layer " << l);
    REQUIRE(two.gradients.at(l).size() == grad.size());
    for (std::size_t i = 0; i < grad.size(); ++i) CHECK(two.gradients.at(l)[i] == Approx(grad[i]).margin(1e-7));
  }
}

TEST_CASE("pipeline chunks: recomputation and GPipe give the gradients bit for bit, the peak as counted",
          "[parallel][train]") {
  const auto kept = run(config_of(2, "", 0));
  CHECK(kept.peak_bytes == kept.predicted_bytes);
  for (const auto& [schedule, recompute] : {std::pair<std::string, std::size_t>{"", 1}, {"gpipe", 0}, {"gpipe", 1}}) {
    INFO("schedule '" << schedule << "', " << recompute << " pair recomputed");
    const auto again = run(config_of(2, schedule, recompute));
    CHECK(again.gradients == kept.gradients);
    CHECK(again.loss == kept.loss);
    CHECK(again.peak_bytes == again.predicted_bytes);
    if (schedule.empty()) CHECK(again.peak_bytes[0] < kept.peak_bytes[0]);
    if (!schedule.empty() && recompute == 0) CHECK(again.peak_bytes[0] > kept.peak_bytes[0]);
  }
}

}  // namespace train_pipeline_chunks_test
