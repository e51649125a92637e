// One body for every backend (threads here, MPI in tests/mpi): an MLP of 8 layers split into p·v chunks,
// run through parallel::run_pipeline on p-rank pipeline groups, each of the world's W/p replicas taking its
// own micro-batches, the layer gradients then summed over the data-parallel group. Checked against the whole
// MLP in double over every micro-batch, which is what DDP computes:
//  - every layer's gradient within 1e-5 of (1 + the sum of |terms|): fp32 sums of a few terms in another
//    order, where a lost or misrouted micro-batch is off by the terms themselves;
//  - bytes each rank sent: m activations (rows × width floats) per chunk boundary it feeds, forward and
//    backward: 2·v·m of them on a middle rank (the step model's pp_bytes), one fewer per micro-batch at the
//    ends;
//  - the most chunks' activations a rank kept at once: min(p − r, m) for 1F1B, and on rank 0 of the
//    interleaved schedule p·v + p − 1, that is p·(1 + (p − 1)/(p·v)) stages' worth (Korthikanti et al.).
#pragma once

#include <trinity/comm/collectives.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/parallel/pipeline.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pp_check {

inline constexpr std::size_t layers = 8, width = 6, rows = 3;

inline float value(std::uint64_t seed, std::size_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL + 7;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ULL << 24) * 2.0 - 1.0);
}
// Layer l's W (width × width) then b; micro-batch mb's input and output gradient, per replica.
inline float weight(std::size_t l, std::size_t i) { return value(100 + l, i) * 0.6f; }
inline float input(std::size_t replica, std::size_t mb, std::size_t i) { return value(1000 + replica * 100 + mb, i); }
inline float seed_grad(std::size_t replica, std::size_t mb, std::size_t i) {
  return value(5000 + replica * 100 + mb, i);
}
inline bool activated(std::size_t l) { return l + 1 < layers; }  // tanh on all but the last

// The whole MLP in double over every micro-batch of every replica: each layer's summed dW, db.
inline std::vector<std::vector<double>> reference(std::size_t replicas, std::size_t m) {
  std::vector<std::vector<double>> g(layers, std::vector<double>(width * width + width, 0.0));
  for (std::size_t d = 0; d < replicas; ++d)
    for (std::size_t mb = 0; mb < m; ++mb) {
      std::vector<std::vector<double>> a(layers + 1, std::vector<double>(rows * width));
      for (std::size_t i = 0; i < rows * width; ++i) a[0][i] = input(d, mb, i);
      for (std::size_t l = 0; l < layers; ++l)
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t o = 0; o < width; ++o) {
            double z = weight(l, width * width + o);
            for (std::size_t j = 0; j < width; ++j) z += double(weight(l, o * width + j)) * a[l][r * width + j];
            a[l + 1][r * width + o] = activated(l) ? std::tanh(z) : z;
          }
      std::vector<double> dy(rows * width);
      for (std::size_t i = 0; i < rows * width; ++i) dy[i] = seed_grad(d, mb, i);
      for (std::size_t l = layers; l-- > 0;) {
        if (activated(l))
          for (std::size_t i = 0; i < rows * width; ++i) dy[i] *= 1 - a[l + 1][i] * a[l + 1][i];
        std::vector<double> dx(rows * width, 0.0);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t o = 0; o < width; ++o) {
            g[l][width * width + o] += dy[r * width + o];
            for (std::size_t j = 0; j < width; ++j) {
              g[l][o * width + j] += dy[r * width + o] * a[l][r * width + j];
              dx[r * width + j] += dy[r * width + o] * weight(l, o * width + j);
            }
          }
        dy = dx;
      }
    }
  return g;
}

//! This rank's layers, chunk by chunk (global indices): what its stage's local index i stands for.
inline std::vector<std::size_t> layers_of(std::size_t p, std::size_t v, std::size_t rank) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < v; ++c)
    for (std::size_t k = 0; k < layers / (p * v); ++k) out.push_back((c * p + rank) * (layers / (p * v)) + k);
  return out;
}

// The weights as weight() gives them and a gradient per layer, for a stage run without a sharding.
struct fixed_weights {
  std::vector<std::size_t> ids;
  std::vector<std::vector<float>> w, g;
  explicit fixed_weights(std::vector<std::size_t> held) : ids(std::move(held)) {
    for (const auto l : ids) {
      w.emplace_back();
      for (std::size_t i = 0; i < width * width + width; ++i) w.back().push_back(weight(l, i));
      g.emplace_back(width * width + width, 0.0f);
    }
  }
  void acquire(std::size_t) {}
  void release(std::size_t) {}
  [[nodiscard]] std::span<const float> parameters(std::size_t i) const { return w[i]; }
  [[nodiscard]] std::span<float> gradient(std::size_t i) { return g[i]; }
};

// One rank's chunks of the MLP (virtual stage s holds layers [s·L/S, (s+1)·L/S)), reading weights from and
// adding gradients to `States` by the rank's layer index: fixed_weights below, or a shard::data_parallel.
template <class States>
struct mlp_stage {
  using weights = States;  // a data_parallel's shard scheme, run_pipeline checks
  std::size_t p, v, rank, replica, step;
  States* states;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<float>>> kept;
  std::size_t per_chunk() const { return layers / (p * v); }
  std::size_t input_size(std::size_t) const { return rows * width; }
  std::size_t data(std::size_t d) const { return d + 10 * step; }

  std::vector<float> forward(std::size_t chunk, std::size_t mb, std::span<const float> in) {
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

//! Runs on every rank of `world` (W a multiple of p): p-rank pipelines, W/p replicas. Returns what went wrong.
template <class C>
std::vector<std::string> run(C& world, std::size_t p, std::size_t m, std::size_t v) {
  using namespace trinity;
  std::vector<std::string> bad;
  const std::size_t W = static_cast<std::size_t>(world.size()), me = static_cast<std::size_t>(world.rank());
  const std::size_t replicas = W / p, pr = me % p, replica = me / p;
  std::vector<int> pp_members(p), dp_members(replicas);
  std::iota(pp_members.begin(), pp_members.end(), static_cast<int>(replica * p));
  for (std::size_t d = 0; d < replicas; ++d) dp_members[d] = static_cast<int>(d * p + pr);
  comm::group pp(world, pp_members), dp(world, dp_members);

  fixed_weights weights(layers_of(p, v, pr));
  mlp_stage<fixed_weights> stage{p, v, pr, replica, 0, &weights, {}};
  const auto stats = parallel::run_pipeline(pp, m, v, stage);
  if (!stage.kept.empty()) bad.push_back("activations left after every backward");

  const auto ref = reference(replicas, m);
  std::size_t written = 0;
  for (std::size_t k = 0; k < weights.ids.size(); ++k) {
    auto& g = weights.g[k];
    const std::size_t l = weights.ids[k];
    written += std::any_of(g.begin(), g.end(), [](float x) { return x != 0.0f; });
    comm::all_reduce(dp, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
    for (std::size_t i = 0; i < g.size(); ++i)
      if (std::abs(g[i] - ref[l][i]) > 1e-5 * (1 + 4.0 * static_cast<double>(rows * m * replicas)))
        bad.push_back("layer " + std::to_string(l) + " gradient[" + std::to_string(i) + "] " + std::to_string(g[i]) +
                      " vs " + std::to_string(ref[l][i]));
  }
  if (written != v * layers / (p * v)) bad.push_back("wrote the gradients of " + std::to_string(written) + " layers");

  const std::uint64_t act = rows * width * sizeof(float);
  const std::uint64_t boundaries = 2 * v - (pr == 0 ? 1 : 0) - (pr + 1 == p ? 1 : 0);
  const std::uint64_t want = p == 1 ? 0 : m * boundaries * act;
  if (stats.bytes_sent != want)
    bad.push_back("sent " + std::to_string(stats.bytes_sent) + " bytes, expected " + std::to_string(want));
  // Rank 0's peak is the step model's count of micro-batches in flight, in chunks of 1/v of them.
  const std::size_t peak = pr == 0
                               ? static_cast<std::size_t>(std::llround(model::pipeline_in_flight(p, m, v) * double(v)))
                           : v == 1 ? std::min(p - pr, m)
                                    : 0;
  if (peak && stats.peak_stashed != peak)
    bad.push_back("kept " + std::to_string(stats.peak_stashed) + " chunks' activations at most, expected " +
                  std::to_string(peak));
  return bad;
}

}  // namespace pp_check
