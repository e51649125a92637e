// The reference trainer's data-parallel step as library pieces, on comm::thread_world: train::forward_backward over
// 2 ranks and the voted optimizer step give one rank's parameters and loss; recomputing the layers in groups gives
// them bit for bit; a checkpoint saved by 2 ranks (train::save_checkpoint) resumes on one (train::resume_from,
// train::load_checkpoint) with the same parameters and the loop's position, and what is not a checkpoint is
// refused.
#include <catch2/catch.hpp>

#include <trinity/comm/thread_world.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/schemes.hpp>
#include <trinity/train/checkpoint.hpp>
#include <trinity/train/data_parallel_pass.hpp>
#include <trinity/train/step_vote.hpp>

#include <cstddef>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "small_trainer.hpp"

namespace train_data_parallel_pass_test {

using namespace trinity;
using rank_comm = comm::thread_communicator;
using states = shard::data_parallel<shard::replicate, rank_comm, shard::exact_reduction>;
using experts = train::moe_block<shard::replicate, rank_comm>;

train::config small(std::size_t recompute_layers = 0) {
  auto cfg = test::small_trainer();
  cfg.recompute_layers = recompute_layers;
  return cfg;
}

struct trained {
  std::vector<float> parameters;  // rank 0's, every layer's in order
  double loss = 0;                // the steps' summed loss over every rank
};

// `steps` steps over `n` ranks; with `save`, rank pieces into that checkpoint after the last.
trained train_on(int n, const train::config& cfg, long steps, const std::filesystem::path& save = {}) {
  const auto shape = cfg.shape();
  trained out;
  comm::thread_world world(n);
  comm::run_ranks(world, [&](rank_comm& c) {
    shard::memory_ledger ledger;
    states dp(c, ledger, shape.layer_sizes(), train::initial_parameters(shape, cfg.seed + 1), shard::adam{}, {});
    const train::teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
    const comm::partition samples(cfg.batch, c.size());
    comm::group self(c, {c.rank()});
    std::optional<experts> none;
    double loss = 0;
    for (long t = 0; t < steps; ++t) {
      train::mlp_pass pass(shape, samples.size(c.rank()), ledger, cfg.recomputed_layers(shape.layers()),
                           cfg.group_layers());
      loss += train::forward_backward(dp, c, self, cfg, shape, task, pass, samples, t);
      train::step_all(dp, none, c, shard::adam{});
    }
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    if (!save.empty()) train::save_checkpoint(save, {}, dp, c, none, c, steps, train::layout_word(cfg, c.size()));
    if (c.rank() != 0) return;
    out.loss = loss;
    for (std::size_t l = 0; l < shape.layers(); ++l) {
      const auto p = dp.parameters(l);
      out.parameters.insert(out.parameters.end(), p.begin(), p.end());
    }
  });
  return out;
}

TEST_CASE("data-parallel pass: two ranks give one rank's parameters and loss", "[parallel][train]") {
  const auto one = train_on(1, small(), 3), two = train_on(2, small(), 3);
  CHECK(two.loss == Approx(one.loss).epsilon(1e-6));
  REQUIRE(two.parameters.size() == one.parameters.size());
  for (std::size_t i = 0; i < one.parameters.size(); ++i)
    CHECK(two.parameters[i] == Approx(one.parameters[i]).margin(1e-6));
}

TEST_CASE("data-parallel pass: recomputing the layers, a pair or every one in a group, gives them bit for bit",
          "[parallel][train]") {
  const auto kept = train_on(2, small(), 2);
  for (const std::size_t again : {std::size_t{1}, std::size_t{2}}) {
    const auto recomputed = train_on(2, small(again), 2);
    CHECK(recomputed.parameters == kept.parameters);
    CHECK(recomputed.loss == kept.loss);
  }
  auto uniform = small(2);
  uniform.recompute_method = model::recompute_method::uniform;
  CHECK(train_on(2, uniform, 2).parameters == kept.parameters);
}

TEST_CASE("data-parallel pass: a checkpoint of two ranks resumes on one, its parameters and position", "[train]") {
  const auto dir = std::filesystem::temp_directory_path() / "trinity-train-checkpoint-test";
  std::filesystem::remove_all(dir);
  const auto saved = train_on(2, small(), 2, dir);
  const auto cfg = small();
  const auto shape = cfg.shape();
  comm::thread_world world(1);
  rank_comm c(world, 0);
  shard::memory_ledger ledger;
  states dp(c, ledger, shape.layer_sizes(), train::initial_parameters(shape, 99), shard::adam{}, {});
  std::vector<std::size_t> layers(shape.layers());
  std::iota(layers.begin(), layers.end(), std::size_t{0});
  std::optional<experts> none;
  const long at =
      train::resume_from(c, dir, [&] { return train::load_checkpoint(dir, dp, 0, layers, shape, 1, 0, false, none); });
  CHECK(at == 2);
  std::vector<float> loaded;
  for (std::size_t l = 0; l < shape.layers(); ++l) {
    const auto p = dp.parameters(l);
    loaded.insert(loaded.end(), p.begin(), p.end());
  }
  CHECK(loaded == saved.parameters);
  const auto empty = std::filesystem::temp_directory_path() / "trinity-train-not-a-checkpoint";
  std::filesystem::create_directories(empty);
  CHECK_THROWS_AS(train::resume_from(
                      c, empty, [&] { return train::load_checkpoint(empty, dp, 0, layers, shape, 1, 0, false, none); }),
                  invalid_input);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(empty);
}

}  // namespace train_data_parallel_pass_test
