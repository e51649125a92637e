#pragma once
//! \file
//! A data-curation plan scaled down to run here on pipeline::executor (trinity verify). Each of the plan's
//! devices becomes a thread computing at `duty` of a core, so that they and one CPU worker fit this
//! machine's cores; each model becomes an index_model whose weights are its memory at `memory_scale` and
//! whose passes give it its share of the work; the CPU operators become decoding and pooling a clip whose
//! size gives them theirs. Every kernel is timed here first, as the run will run it (its thread's CPU time,
//! as the executor times it: a model on every device at once at its duty, the clips beside a device's
//! search), and the prediction is model::rates over those measured costs, for the plan's placements.

#include <trinity/model/coresidency.hpp>
#include <trinity/pipeline.hpp>
#include <trinity/pipeline/kernels.hpp>
#include <trinity/plan/data_curation.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <time.h>

namespace trinity::workloads {

struct scaled_curation {
  std::size_t devices = 0;
  double duty = 1;
  double memory_scale = 0;
  bytes device_memory{};  // each device's budget here
  std::size_t dimension = 64;
  std::size_t clip_floats = 0;  // values per clip the CPU operators decode and pool
  std::vector<pipeline::model_operator> models;
  std::vector<std::size_t> rows, passes;      // per model
  std::vector<double> search_seconds;         // per model: one search, measured here
  double cpu_seconds = 0;                     // per sample, measured here
  std::vector<model::curation_operator> ops;  // the measured costs, as the model takes them
  model::curation_cluster cluster;
};

namespace detail {
inline double thread_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
// The median of `reps` timings of f, each of it run until at least 2 ms have passed, per run.
template <class F>
double per_run(F&& f, int reps = 7) {
  std::vector<double> t;
  f();  // warm: pages faulted, caches filled
  for (int r = 0; r < reps; ++r) {
    std::size_t n = 0;
    const double t0 = thread_seconds();
    double now = t0;
    while (now - t0 < 2e-3) {
      f();
      ++n;
      now = thread_seconds();
    }
    t.push_back((now - t0) / static_cast<double>(n));
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[static_cast<std::size_t>(reps / 2)];
}
// Runs `load` on another thread while `f` runs: in the pipeline the CPU worker and the devices compute at
// once, sharing the memory system, and a kernel timed on an idle machine runs faster than it will there.
template <class Load, class F>
auto beside(Load load, F&& f) {
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop.load(std::memory_order_relaxed)) load();
  });
  auto out = f();
  stop = true;
  t.join();
  return out;
}
// CPU-seconds of one run of a model's kernel on `devices` threads at once, each with its own copy (from
// `load`) and each computing at `duty`, over 0.3 s.
template <class Load>
double time_as_devices(std::size_t devices, double duty, Load load) {
  std::vector<double> per(devices);
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < devices; ++d)
    threads.emplace_back([&, d] {
      auto copy = load();
      pipeline::sample s;
      s.features.assign(64, 0.5f);
      (void)copy->run(s);
      double cpu = 0;
      std::size_t n = 0;
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
      while (std::chrono::steady_clock::now() < end || n == 0) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_seconds();
        (void)copy->run(s);
        const double c = thread_seconds() - c0;
        cpu += c;
        ++n;
        std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(c / duty)));
      }
      per[d] = cpu / static_cast<double>(n);
    });
  for (auto& t : threads) t.join();
  double sum = 0;
  for (double p : per) sum += p;
  return sum / static_cast<double>(devices);
}
}  // namespace detail

inline scaled_curation scale_curation(const plan::system& s, const plan::data_curation_workload& w, unsigned cores) {
  scaled_curation x;
  const auto ops = plan::curation_operators(s, w);
  x.devices = w.device_count(s);
  // One core is left to the CPU worker and the scheduler; the devices share the rest.
  x.duty = std::min(1.0, std::max(1.0, static_cast<double>(cores) - 1.0) / static_cast<double>(x.devices));
  const bytes capacity = s.tiers.at(0).capacity;
  x.memory_scale = 32e6 / capacity.value();  // a device's memory becomes 32 MB here
  x.device_memory = capacity * x.memory_scale;

  // The models: weights sized from their memory, one search timed.
  double first_share = 0;
  std::vector<double> share, seconds;
  for (const auto& o : ops)
    if (o.gpu) {
      if (first_share == 0) first_share = o.share;
      share.push_back(o.share / first_share);
      seconds.push_back(o.seconds_per_sample);
    }
  const std::size_t row_bytes = x.dimension * sizeof(float) + sizeof(std::uint64_t);
  std::vector<std::string> names;
  std::vector<bytes> memory;
  for (const auto& o : ops)
    if (o.gpu) names.push_back(o.name), memory.push_back(o.memory);
  pipeline::sample probe;
  probe.features.assign(x.dimension, 0.5f);
  for (std::size_t j = 0; j < names.size(); ++j)
    x.rows.push_back(
        std::max<std::size_t>(16, static_cast<std::size_t>(memory[j].value() * x.memory_scale) / row_bytes));
  // Each kernel is timed as the run will run it: on every device at once, each its own copy, each at its
  // duty. Timed alone and flat out, a search here ran ~1.7x faster than in a run (caches and TLB cold
  // after each sleep, and the devices' copies sharing the cores').
  for (std::size_t j = 0; j < names.size(); ++j)
    x.search_seconds.push_back(detail::time_as_devices(
        x.devices, x.duty, [&] { return pipeline::index_model(names[j], x.rows[j], x.dimension, 1).load(); }));
  const std::size_t largest = static_cast<std::size_t>(std::max_element(x.rows.begin(), x.rows.end()) - x.rows.begin());
  pipeline::sample other = probe;
  auto other_copy = pipeline::index_model(names[largest], x.rows[largest], x.dimension, 1).load();
  const auto busy_device = [&] { (void)other_copy->run(other); };
  // Device-seconds here are the plan's times k / duty: k makes every model at least one search and the
  // lightest at least 40 us of compute, above the scheduler's own overhead.
  double k = 40e-6 / *std::min_element(seconds.begin(), seconds.end());
  for (std::size_t j = 0; j < seconds.size(); ++j) k = std::max(k, x.search_seconds[j] / seconds[j]);
  for (std::size_t j = 0; j < names.size(); ++j) {
    const double keep = j + 1 < names.size() ? share[j + 1] / share[j] : 1.0;
    const auto passes =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(seconds[j] * k / x.search_seconds[j])));
    x.passes.push_back(passes);
    x.models.push_back(pipeline::index_model(names[j], x.rows[j], x.dimension, passes, std::min(1.0, keep)));
  }
  // The CPU operators: the plan's CPU time per sample over its workers, at the same scale, on one worker.
  double cpu = 0;
  for (const auto& o : ops)
    if (!o.gpu) cpu += o.share * o.seconds_per_sample;
  const double target = cpu / static_cast<double>(w.cpu_workers) * k / x.duty;
  const std::size_t unit = x.dimension * 64;
  const auto time_clip = [&](std::size_t floats) {
    const auto source = pipeline::encoded_clip_source(floats, 1);
    const auto decode = pipeline::decode_operator();
    const auto split = pipeline::split_operator(x.dimension);
    return detail::beside(busy_device, [&] {
      return detail::per_run([&] {
        auto clip = source(0);
        decode.run(clip);
        split.run(clip);
      });
    });
  };
  const double per_unit = time_clip(unit * 16) / 16;
  x.clip_floats = unit * std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(target / per_unit)));
  x.cpu_seconds = time_clip(x.clip_floats);

  // What the model is given: the costs measured here.
  x.ops.push_back({"decode + split", false, x.cpu_seconds, bytes{}, 1.0});
  for (std::size_t j = 0; j < names.size(); ++j)
    x.ops.push_back({names[j], true, static_cast<double>(x.passes[j]) * x.search_seconds[j] / x.duty,
                     x.models[j].footprint, share[j]});
  // A device here runs one kernel at a time and switches models for free: sharing efficiency 1.
  x.cluster = {1, x.devices, x.device_memory, 1.0};
  return x;
}

//! Runs the scaled pipeline with a plan's placement.
inline pipeline::run_stats run_scaled(const scaled_curation& x, const model::device_models& holds,
                                      std::size_t samples) {
  std::vector<pipeline::device_config> devices;
  for (std::size_t d = 0; d < holds.size(); ++d)
    devices.push_back({"device " + std::to_string(d), x.device_memory, holds[d], x.duty});
  pipeline::executor run({pipeline::decode_operator(), pipeline::split_operator(x.dimension)}, x.models, devices,
                         {.cpu_workers = 1, .queue_capacity = std::max<std::size_t>(8, 2 * holds.size())});
  return run.run(samples, pipeline::encoded_clip_source(x.clip_floats));
}

}  // namespace trinity::workloads
