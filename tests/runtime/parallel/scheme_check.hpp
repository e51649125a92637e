// One body for every backend (threads here, MPI in tests/mpi): pp_check's MLP trained for two Adam steps by
// a pipeline of p ranks (1F1B or interleaved), each rank's layers held by a shard::data_parallel under a ZeRO
// stage over its data-parallel group (parallel::groups_of), against DDP's model: the whole MLP trained on one
// rank over every replica's micro-batches. Within 2e-5: Adam's ε of 1e-3 keeps the update's sensitivity to
// the gradient's summation order near lr/ε·2⁻²⁴ per step.
#pragma once

#include "pipeline_check.hpp"

#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard/adam.hpp>
#include <trinity/shard/data_parallel.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scheme_check {

using namespace trinity;

constexpr shard::adam optimizer{.learning_rate = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .epsilon = 1e-3f};
constexpr std::size_t steps = 2;

std::vector<float> initial_weights() {
  std::vector<float> w;
  for (std::size_t l = 0; l < pp_check::layers; ++l)
    for (std::size_t i = 0; i < pp_check::width * pp_check::width + pp_check::width; ++i) w.push_back(pp_check::weight(l, i));
  return w;
}

// DDP's model after `steps` steps: the whole MLP on one rank over every replica's micro-batches.
std::vector<float> ddp_reference(std::size_t replicas, std::size_t m) {
  comm::thread_world world(1);
  comm::thread_communicator c(world, 0);
  shard::memory_ledger ledger;
  const std::vector<std::size_t> sizes(pp_check::layers, pp_check::width * pp_check::width + pp_check::width);
  shard::data_parallel<shard::replicate, comm::thread_communicator> dp(c, ledger, sizes, initial_weights(), optimizer);
  for (std::size_t step = 0; step < steps; ++step) {
    for (std::size_t d = 0; d < replicas; ++d) {
      pp_check::mlp_stage<decltype(dp)> whole{1, pp_check::layers, 0, d, step, &dp, {}};  // one rank, one chunk per layer
      parallel::run_pipeline(c, m, pp_check::layers, whole);
    }
    dp.step(optimizer);
  }
  std::vector<float> out;
  for (std::size_t l = 0; l < pp_check::layers; ++l) {
    const auto p = dp.parameters(l);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

template <class Shard, class C>
std::vector<std::string> train(C& world, std::size_t p, std::size_t v, std::size_t m,
                               const std::vector<float>& reference) {
  std::vector<std::string> bad;
  const std::size_t W = static_cast<std::size_t>(world.size());
  model::parallel_layout l;
  l.pp = p;
  l.vpp = v;
  l.dp = W / p;
  const auto g = parallel::groups_of(l, world.size(), world.rank());
  comm::group pp(world, g.pp), dp(world, g.weights);
  const std::size_t rank = static_cast<std::size_t>(pp.rank()), replica = static_cast<std::size_t>(dp.rank());
  const std::size_t layer_size = pp_check::width * pp_check::width + pp_check::width;
  // This rank's layers, chunk by chunk, and their initial weights.
  const auto layers = pp_check::layers_of(p, v, rank);
  std::vector<float> initial;
  const auto all = initial_weights();
  for (const auto global : layers)
    initial.insert(initial.end(), all.begin() + static_cast<std::ptrdiff_t>(global * layer_size),
                   all.begin() + static_cast<std::ptrdiff_t>((global + 1) * layer_size));
  shard::memory_ledger ledger;
  shard::data_parallel<Shard, comm::group<C>> states(
      dp, ledger, std::vector<std::size_t>(layers.size(), layer_size), initial, optimizer);
  for (std::size_t step = 0; step < steps; ++step) {
    pp_check::mlp_stage<decltype(states)> stage{p, v, rank, replica, step, &states, {}};
    parallel::run_pipeline(pp, m, v, stage);
    states.step(optimizer);
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    states.acquire(i);
    const auto w = states.parameters(i);
    for (std::size_t j = 0; j < layer_size; ++j)
      if (std::abs(w[j] - reference[layers[i] * layer_size + j]) > 2e-5f)
        bad.push_back("layer " + std::to_string(layers[i]) + "[" + std::to_string(j) + "] " + std::to_string(w[j]) +
                      " vs DDP's " + std::to_string(reference[layers[i] * layer_size + j]));
    states.release(i);
  }
  return bad;
}


}  // namespace scheme_check
