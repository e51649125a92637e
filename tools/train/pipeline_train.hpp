#pragma once
// trinity-train with pipeline parallelism (--pp, --vpp): the MLP's layers split into pp·vpp chunks, rank r of
// each pipeline holding chunks r, r + pp, …; the world's pp-rank pipelines are data-parallel replicas, each
// taking its share of the global batch in --micro-batches micro-batches through parallel::run_pipeline (1F1B,
// or interleaved), its layers' states in a shard::data_parallel under the ZeRO stage over its data-parallel
// group (parallel::groups_of). Same task, same initial parameters, same loss as the data-parallel loop, so
// the losses are DDP's up to the order fp32 sums run in. Rank 0 prints one JSON line per step and a summary
// with the pipeline's bytes and kept activations as the mechanism's model says them.

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include <trinity/comm/group.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/parallel/pipeline.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard.hpp>

#include "mlp.hpp"
#include "task.hpp"
#include "train.hpp"

namespace trinity::train {

namespace detail {

// One rank's chunks of the MLP; weights and gradients live in `States`, the task gives inputs and targets.
template <class States>
struct mlp_chunks {
  const mlp_shape* shape;
  const teacher_task* task;
  States* states;
  std::size_t p, v, rank, first_sample, rows, batch;
  long step;
  double loss = 0;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<float>>> kept;

  std::size_t per_chunk() const { return shape->layers() / (p * v); }
  std::size_t layer_of(std::size_t chunk, std::size_t k) const { return (chunk * p + rank) * per_chunk() + k; }
  std::size_t input_size(std::size_t stage) const { return rows * shape->widths[stage * per_chunk()]; }

  void sample(std::size_t mb, std::span<float> x, std::span<float> y) const {
    const std::size_t in = shape->widths.front(), out = shape->widths.back();
    for (std::size_t s = 0; s < rows; ++s)
      task->sample(static_cast<std::uint64_t>(step), first_sample + mb * rows + s, x.subspan(s * in, in), y.subspan(s * out, out));
  }

  std::vector<float> forward(std::size_t chunk, std::size_t mb, std::span<const float> in) {
    std::vector<std::vector<float>> a(1);
    if (chunk * p + rank == 0) {
      a[0].resize(rows * shape->widths.front());
      std::vector<float> y(rows * shape->widths.back());
      sample(mb, a[0], y);
    } else {
      a[0].assign(in.begin(), in.end());
    }
    for (std::size_t k = 0; k < per_chunk(); ++k) {
      const std::size_t l = layer_of(chunk, k), local = chunk * per_chunk() + k;
      const std::size_t n_in = shape->in(l), n_out = shape->out(l);
      const bool last = l + 1 == shape->layers();
      states->acquire(local);
      const auto w = states->parameters(local);
      std::vector<float> z(rows * n_out);
      for (std::size_t s = 0; s < rows; ++s)
        for (std::size_t o = 0; o < n_out; ++o) {
          float acc = w[n_out * n_in + o];
          for (std::size_t i = 0; i < n_in; ++i) acc += w[o * n_in + i] * a.back()[s * n_in + i];
          z[s * n_out + o] = last ? acc : std::tanh(acc);
        }
      states->release(local);
      a.push_back(std::move(z));
    }
    auto out = a.back();
    kept[{chunk, mb}] = std::move(a);
    return out;
  }

  std::vector<float> backward(std::size_t chunk, std::size_t mb, std::span<const float> grad) {
    auto a = std::move(kept.at({chunk, mb}));
    kept.erase({chunk, mb});
    std::vector<float> delta;
    if (chunk * p + rank + 1 == p * v) {
      // ½‖ŷ − y‖², averaged over the global batch, as the data-parallel loop.
      std::vector<float> x(rows * shape->widths.front()), y(rows * shape->widths.back());
      sample(mb, x, y);
      delta.resize(y.size());
      for (std::size_t k = 0; k < y.size(); ++k) {
        const float d = a.back()[k] - y[k];
        loss += 0.5 * static_cast<double>(d) * d;
        delta[k] = d / static_cast<float>(batch);
      }
    } else {
      delta.assign(grad.begin(), grad.end());
    }
    for (std::size_t k = per_chunk(); k-- > 0;) {
      const std::size_t l = layer_of(chunk, k), local = chunk * per_chunk() + k;
      const std::size_t n_in = shape->in(l), n_out = shape->out(l);
      const bool last = l + 1 == shape->layers();
      if (!last)
        for (std::size_t i = 0; i < delta.size(); ++i) delta[i] *= 1 - a[k + 1][i] * a[k + 1][i];
      states->acquire(local);
      const auto w = states->parameters(local);
      auto g = states->gradient(local);
      std::vector<float> dx(rows * n_in, 0.0f);
      for (std::size_t s = 0; s < rows; ++s)
        for (std::size_t o = 0; o < n_out; ++o) {
          const float d = delta[s * n_out + o];
          g[n_out * n_in + o] += d;
          for (std::size_t i = 0; i < n_in; ++i) {
            g[o * n_in + i] += d * a[k][s * n_in + i];
            dx[s * n_in + i] += d * w[o * n_in + i];
          }
        }
      states->release(local);
      delta = std::move(dx);
    }
    return delta;
  }
};

}  // namespace detail

template <class Scheme, class Comm>
int run_pipelined(Comm& c, const config& cfg, std::ostream& out) {
  using namespace trinity::shard;
  const mlp_shape shape = cfg.shape();
  const std::size_t W = static_cast<std::size_t>(c.size()), p = cfg.pipeline, v = cfg.virtual_stages, m = cfg.micro_batches;
  const std::size_t L = shape.layers();
  if (W % p != 0)
    throw invalid_input("--pp", std::to_string(p) + " stages do not divide the " + std::to_string(W) + " ranks");
  if (L % (p * v) != 0)
    throw invalid_input("--pp", std::to_string(p * v) + " model chunks (pp*vpp) do not divide the " + std::to_string(L) +
                                    " layers (--layers + 1). Fix: a layer count that splits evenly");
  model::parallel_layout layout;
  layout.pp = p;
  layout.vpp = v;
  layout.dp = W / p;
  layout.micro_batch = 1;
  layout.zero_stage = Scheme::shards.zero_stage();
  const auto groups = parallel::groups_of(layout, c.size(), c.rank());
  comm::group pp(c, groups.pp), dp(c, groups.weights);
  const comm::partition samples(cfg.batch, layout.dp);
  const std::size_t mine = samples.size(dp.rank());
  if (mine % m != 0)
    throw invalid_input("--micro-batches", std::to_string(mine) + " samples per replica do not split into " +
                                               std::to_string(m) + " micro-batches. Fix: a divisor of --batch / (ranks / pp)");
  if (v > 1 && m % p != 0)
    throw invalid_input("--micro-batches", "the interleaved schedule needs a multiple of --pp (" + std::to_string(p) + ")");
  const std::size_t rows = mine / m, rank = static_cast<std::size_t>(pp.rank()), per_chunk = L / (p * v);

  // This rank's layers, chunk by chunk, and their initial parameters (the data-parallel loop's).
  const auto sizes = shape.layer_sizes();
  const auto all = initial_parameters(shape, cfg.seed + 1);
  std::vector<std::size_t> offset(L + 1, 0);
  for (std::size_t l = 0; l < L; ++l) offset[l + 1] = offset[l] + sizes[l];
  std::vector<std::size_t> local_sizes;
  std::vector<float> initial;
  std::size_t psi = 0;
  for (std::size_t ch = 0; ch < v; ++ch)
    for (std::size_t k = 0; k < per_chunk; ++k) {
      const std::size_t l = (ch * p + rank) * per_chunk + k;
      local_sizes.push_back(sizes[l]);
      psi += sizes[l];
      initial.insert(initial.end(), all.begin() + static_cast<std::ptrdiff_t>(offset[l]),
                     all.begin() + static_cast<std::ptrdiff_t>(offset[l + 1]));
    }
  const teacher_task task(cfg.inputs, cfg.outputs, cfg.seed);
  const adam opt{.learning_rate = cfg.learning_rate};
  memory_ledger ledger;
  data_parallel<Scheme, comm::group<Comm>> states(dp, ledger, local_sizes, initial, opt);

  // The mechanism's counts: m activations per chunk boundary this rank feeds, forward and backward; rank 0
  // keeps min(p, m) micro-batches (1F1B) or p·v + p − 1 chunks (interleaved).
  std::uint64_t boundary_floats = 0;
  for (std::size_t ch = 0; ch < v; ++ch) {
    const std::size_t stage = ch * p + rank;
    if (stage + 1 < p * v) boundary_floats += rows * shape.widths[(stage + 1) * per_chunk];  // forward out
    if (stage > 0) boundary_floats += rows * shape.widths[stage * per_chunk];                  // backward in
  }
  const std::uint64_t predicted_pipeline = p == 1 ? 0 : m * boundary_floats * sizeof(float);
  const std::size_t predicted_peak_rank0 = v == 1 ? std::min(p, m) : (m == p ? m * v : p * v + p - 1);

  nlohmann::json last;
  std::vector<double> step_seconds;
  for (long t = 0; t < cfg.steps; ++t) {
    const auto started = std::chrono::steady_clock::now();
    ledger.reset_peaks();
    const std::uint64_t pp_before = pp.bytes_sent(), dp_before = dp.bytes_sent();
    detail::mlp_chunks<decltype(states)> stage{&shape, &task, &states, p, v, rank, samples.begin(dp.rank()), rows, cfg.batch, t, 0, {}};
    const auto stats = parallel::run_pipeline(pp, m, v, stage);
    const std::uint64_t res_p = ledger.resident(state_kind::parameters), res_g = ledger.resident(state_kind::gradients),
                        res_o = ledger.resident(state_kind::optimizer_states);
    const step_report report = states.step(opt);
    const auto elapsed_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
    const std::uint64_t pipeline_sent = pp.bytes_sent() - pp_before, dp_sent = dp.bytes_sent() - dp_before;
    double loss = stage.loss;
    comm::all_reduce(c, std::span<double>(&loss, 1), comm::reduce_op::sum);
    const auto pp_all = train::detail::per_rank(c, pipeline_sent), dp_all = train::detail::per_rank(c, dp_sent),
               sent_all = train::detail::per_rank(c, pipeline_sent + dp_sent),
               stash_all = train::detail::per_rank(c, stats.peak_stashed), p_all = train::detail::per_rank(c, res_p),
               g_all = train::detail::per_rank(c, res_g), o_all = train::detail::per_rank(c, res_o),
               peak_all = train::detail::per_rank(c, ledger.peak(placement::device)),
               ns_all = train::detail::per_rank(c, elapsed_ns);
    if (c.rank() == 0) {
      step_seconds.push_back(static_cast<double>(*std::max_element(ns_all.begin(), ns_all.end())) * 1e-9);
      nlohmann::json line{{"step", t + 1},
                          {"loss", loss / static_cast<double>(cfg.batch)},
                          {"skipped", report.skipped},
                          {"nonfinite_ranks", report.nonfinite_ranks},
                          {"ranks", c.size()},
                          {"pp", p},
                          {"vpp", v},
                          {"dp", layout.dp},
                          {"micro_batches", m},
                          {"stage", Scheme::shards.zero_stage()},
                          {"resident_bytes", {{"parameters", p_all}, {"gradients", g_all}, {"optimizer_states", o_all},
                                              {"offloaded", std::vector<std::uint64_t>(W, 0)}}},
                          {"peak_bytes", {{"device", peak_all}, {"activations", std::vector<std::uint64_t>(W, 0)}}},
                          {"sent_bytes", sent_all},
                          {"pipeline_bytes", pp_all},
                          {"data_parallel_bytes", dp_all},
                          {"peak_stashed_chunks", stash_all},
                          {"step_seconds", step_seconds.back()}};
      out << line.dump() << '\n' << std::flush;
      last = std::move(line);
    }
  }
  const auto predicted_all = train::detail::per_rank(c, predicted_pipeline);
  // ZeRO's traffic over the data-parallel group for this rank's Ψ (model/sharding.hpp), in whole bytes. Stage 3
  // gathers each layer for every micro-batch's forward and backward: 2m gathers and a reduce-scatter where
  // one micro-batch has three (model/parallel_training.hpp counts the same).
  const double zero_units = Scheme::shards.zero_stage() == 3 ? (1.0 + 2.0 * static_cast<double>(m)) / 3.0 : 1.0;
  const auto predicted_dp = train::detail::per_rank(c, static_cast<std::uint64_t>(std::llround(
      zero_units * model::zero_traffic_per_step(static_cast<double>(psi), layout.dp, Scheme::shards.zero_stage(),
                                                model::fp32_adam).value())));
  const auto psi_all = train::detail::per_rank(c, psi);
  if (c.rank() == 0) {
    nlohmann::json summary{{"summary",
                            {{"parameters", shape.parameters()},
                             {"ranks", c.size()},
                             {"layout", model::to_string(layout)},
                             {"parameters_per_rank", psi_all},
                             {"pipeline",
                              {{"bytes_per_step", predicted_all}, {"peak_stashed_chunks_rank0", predicted_peak_rank0},
                               {"data_parallel_bytes_per_step", predicted_dp}}},
                             {"step_seconds", step_seconds},
                             {"last_step", last}}}};
    out << summary.dump() << '\n' << std::flush;
  }
  return 0;
}

}  // namespace trinity::train
