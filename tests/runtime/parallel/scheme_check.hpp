// One body for every backend (threads here, MPI in tests/mpi): pp_check's MLP trained for two Adam steps by
// a pipeline of p ranks (1F1B or interleaved), each rank's layers held by a shard::data_parallel under a ZeRO
// stage over its data-parallel group (parallel::groups_of), against DDP's model: the whole MLP trained on one
// rank over every replica's micro-batches. Within 2e-5: Adam's ε of 1e-3 keeps the update's sensitivity to
// the gradient's summation order near lr/ε·2⁻²⁴ per step.
#pragma once

#include "pipeline_check.hpp"

#include <trinity/comm/group.hpp>
#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel/context_parallel.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard/adam.hpp>
#include <trinity/shard/data_parallel.hpp>

#include <cmath>
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
    for (std::size_t i = 0; i < pp_check::width * pp_check::width + pp_check::width; ++i)
      w.push_back(pp_check::weight(l, i));
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
      pp_check::mlp_stage<decltype(dp)> whole{1, pp_check::layers, 0, d, step, &dp,
                                              {}};  // one rank, one chunk per layer
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
  shard::data_parallel<Shard, comm::group<C>> states(dp, ledger, std::vector<std::size_t>(layers.size(), layer_size),
                                                     initial, optimizer);
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

// Context parallelism composed with a ZeRO stage: one attention layer, q, k and v projected from the tokens by
// W = [Wq; Wk; Wv] (3h x h, in a shard::data_parallel over the ranks that share weights: data and context), a
// ring over the context group, ½‖o − y‖² per token averaged over every token of the step. Each rank holds
// 1/c of each of its replica's sequences; its gradient is its tokens' share, summed over the weights group.
namespace context {

constexpr std::size_t hidden = 8, tokens = 24, sequences_per_replica = 2;

inline float value(std::size_t what, std::size_t seq, std::size_t tok, std::size_t i) {
  return 0.5f * std::sin(0.37f * static_cast<float>(seq) + 0.11f * static_cast<float>(tok) +
                         0.53f * static_cast<float>(i) + 1.7f * static_cast<float>(what));
}
inline std::vector<float> initial_weights() {
  std::vector<float> w(3 * hidden * hidden);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.3f * std::cos(0.71f * static_cast<float>(i) + 0.2f);
  return w;
}

// Adds this rank's gradient of W for tokens [first, first + n) of sequence `seq`, its attention run over `cp`.
template <class C>
void accumulate(C& cp, std::span<const float> w, std::span<float> g, std::size_t seq, std::size_t first, std::size_t n,
                double all_tokens) {
  const std::size_t h = hidden;
  std::vector<float> x(n * h), y(n * h), q(n * h), k(n * h), v(n * h), o(n * h);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t i = 0; i < h; ++i) {
      x[t * h + i] = value(0, seq, first + t, i);
      y[t * h + i] = value(1, seq, first + t, i);
    }
  const auto project = [&](std::size_t part, std::vector<float>& out) {
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t r = 0; r < h; ++r) {
        float acc = 0.0f;
        for (std::size_t i = 0; i < h; ++i) acc += w[(part * h + r) * h + i] * x[t * h + i];
        out[t * h + r] = acc;
      }
  };
  project(0, q);
  project(1, k);
  project(2, v);
  parallel::ring_attention attn({.heads = 1, .tokens = n, .head_dim = h});
  attn.forward(cp, q, k, v, o);
  std::vector<float> d_o(n * h), dq(n * h), dk(n * h), dv(n * h);
  for (std::size_t i = 0; i < d_o.size(); ++i) d_o[i] = static_cast<float>((o[i] - y[i]) / all_tokens);
  attn.backward(cp, d_o, dq, dk, dv);
  const std::vector<float>* d[3] = {&dq, &dk, &dv};
  for (std::size_t part = 0; part < 3; ++part)
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t r = 0; r < h; ++r)
        for (std::size_t i = 0; i < h; ++i) g[(part * h + r) * h + i] += (*d[part])[t * h + r] * x[t * h + i];
}

// DDP's W after `steps` steps: every replica's sequences whole on one rank.
inline std::vector<float> reference(std::size_t replicas) {
  comm::thread_world world(1);
  comm::thread_communicator c(world, 0);
  shard::memory_ledger ledger;
  shard::data_parallel<shard::replicate, comm::thread_communicator> dp(c, ledger, {3 * hidden * hidden},
                                                                       initial_weights(), optimizer);
  const std::size_t all = replicas * sequences_per_replica;
  for (std::size_t step = 0; step < steps; ++step) {
    for (std::size_t seq = 0; seq < all; ++seq)
      accumulate(c, dp.parameters(0), dp.gradient(0), step * 1000 + seq, 0, tokens, static_cast<double>(all * tokens));
    dp.step(optimizer);
  }
  const auto p = dp.parameters(0);
  return {p.begin(), p.end()};
}

// cp ranks per sequence, the rest data parallel; W under `Shard` over the weights group. Returns what differs.
template <class Shard, class C>
std::vector<std::string> train(C& world, std::size_t cp_degree, const std::vector<float>& want) {
  model::parallel_layout l;
  l.cp = cp_degree;
  l.dp = static_cast<std::size_t>(world.size()) / cp_degree;
  const auto g = parallel::groups_of(l, world.size(), world.rank());
  comm::group cp(world, g.cp), weights(world, g.weights);
  const std::size_t replica = static_cast<std::size_t>(world.rank()) / cp_degree, n = tokens / cp_degree;
  const std::size_t first = static_cast<std::size_t>(cp.rank()) * n;
  shard::memory_ledger ledger;
  shard::data_parallel<Shard, comm::group<C>> states(weights, ledger, {3 * hidden * hidden}, initial_weights(),
                                                     optimizer);
  const double all = static_cast<double>(l.dp * sequences_per_replica * tokens);
  for (std::size_t step = 0; step < steps; ++step) {
    for (std::size_t k = 0; k < sequences_per_replica; ++k) {
      states.acquire(0);
      accumulate(cp, states.parameters(0), states.gradient(0), step * 1000 + replica * sequences_per_replica + k, first,
                 n, all);
      states.release(0);
    }
    states.step(optimizer);
  }
  std::vector<std::string> bad;
  states.acquire(0);
  const auto w = states.parameters(0);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::abs(w[i] - want[i]) > 2e-5f)
      bad.push_back("W[" + std::to_string(i) + "] " + std::to_string(w[i]) + " vs DDP's " + std::to_string(want[i]));
  states.release(0);
  return bad;
}

}  // namespace context

}  // namespace scheme_check
