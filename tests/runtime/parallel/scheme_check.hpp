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

// One rank's chunks of pp_check's MLP, its weights held by a data_parallel over the data-parallel group.
template <class States>
struct training_stage {
  std::size_t p, v, rank, replica, step;
  States* states;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<float>>> kept;
  std::size_t per_chunk() const { return pp_check::layers / (p * v); }
  std::size_t input_size(std::size_t) const { return pp_check::rows * pp_check::width; }
  std::size_t data(std::size_t d) const { return d + 10 * step; }

  std::vector<float> forward(std::size_t chunk, std::size_t mb, std::span<const float> in) {
    using namespace pp_check;
    std::vector<std::vector<float>> a(1);
    if (chunk * p + rank == 0)
      for (std::size_t i = 0; i < rows * width; ++i) a[0].push_back(input(data(replica), mb, i));
    else
      a[0].assign(in.begin(), in.end());
    for (std::size_t k = 0; k < per_chunk(); ++k) {
      const std::size_t local = chunk * per_chunk() + k, l = (chunk * p + rank) * per_chunk() + k;
      states->acquire(local);
      const auto w = states->parameters(local);
      std::vector<float> y(rows * width);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < width; ++o) {
          float z = w[width * width + o];
          for (std::size_t j = 0; j < width; ++j) z += w[o * width + j] * a.back()[r * width + j];
          y[r * width + o] = activated(l) ? std::tanh(z) : z;
        }
      states->release(local);
      a.push_back(std::move(y));
    }
    auto out = a.back();
    kept[{chunk, mb}] = std::move(a);
    return out;
  }

  std::vector<float> backward(std::size_t chunk, std::size_t mb, std::span<const float> grad) {
    using namespace pp_check;
    auto a = std::move(kept.at({chunk, mb}));
    kept.erase({chunk, mb});
    std::vector<float> dy(rows * width);
    if (chunk * p + rank + 1 == p * v)
      for (std::size_t i = 0; i < rows * width; ++i) dy[i] = seed_grad(data(replica), mb, i);
    else
      dy.assign(grad.begin(), grad.end());
    for (std::size_t k = per_chunk(); k-- > 0;) {
      const std::size_t local = chunk * per_chunk() + k, l = (chunk * p + rank) * per_chunk() + k;
      states->acquire(local);
      const auto w = states->parameters(local);
      auto g = states->gradient(local);
      if (activated(l))
        for (std::size_t i = 0; i < rows * width; ++i) dy[i] *= 1 - a[k + 1][i] * a[k + 1][i];
      std::vector<float> dx(rows * width, 0.0f);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < width; ++o) {
          g[width * width + o] += dy[r * width + o];
          for (std::size_t j = 0; j < width; ++j) {
            g[o * width + j] += dy[r * width + o] * a[k][r * width + j];
            dx[r * width + j] += dy[r * width + o] * w[o * width + j];
          }
        }
      states->release(local);
      dy = std::move(dx);
    }
    return dy;
  }
};

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
      training_stage<decltype(dp)> whole{1, pp_check::layers, 0, d, step, &dp, {}};  // one rank, one chunk per layer
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
  const std::size_t per_chunk = pp_check::layers / (p * v), layer_size = pp_check::width * pp_check::width + pp_check::width;
  // This rank's layers, chunk by chunk, and their initial weights.
  std::vector<std::size_t> layers;
  std::vector<float> initial;
  const auto all = initial_weights();
  for (std::size_t c = 0; c < v; ++c)
    for (std::size_t k = 0; k < per_chunk; ++k) {
      const std::size_t global = (c * p + rank) * per_chunk + k;
      layers.push_back(global);
      initial.insert(initial.end(), all.begin() + static_cast<std::ptrdiff_t>(global * layer_size),
                     all.begin() + static_cast<std::ptrdiff_t>((global + 1) * layer_size));
    }
  shard::memory_ledger ledger;
  shard::data_parallel<Shard, comm::group<C>> states(
      dp, ledger, std::vector<std::size_t>(layers.size(), layer_size), initial, optimizer);
  for (std::size_t step = 0; step < steps; ++step) {
    training_stage<decltype(states)> stage{p, v, rank, replica, step, &states, {}};
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
