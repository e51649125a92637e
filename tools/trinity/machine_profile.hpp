#pragma once
// What `trinity calibrate` measures of the machine beside its codecs, so that `trinity verify` can predict
// a step's time on it: the rate of the CPU backend's dense layers (trinity-train's forward and backward,
// counted as the planner counts them, 6 FLOPs per parameter per sample) and the α-β of a message between
// two ranks as threads (comm::thread_world's rendezvous and copy).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <trinity/comm/thread_world.hpp>
#include <trinity/io/profile.hpp>
#include <trinity/shard/ledger.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cli {

using io::machine_profile;

namespace detail {

// The fastest of a few runs of f, each at least `least` long: a busy machine only makes runs slower.
template <class F>
double fastest_per_call(F f, double least = 0.05, int runs = 5) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    long calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < least);
    best = std::min(best, elapsed / static_cast<double>(calls));
  }
  return best;
}

inline flops_per_second measure_dense() {
  // trinity-train's default shape (32 inputs, 3 hidden layers of 256, 8 outputs) and 64 samples.
  const train::mlp_shape shape{{32, 256, 256, 256, 8}};
  const std::size_t samples = 64;
  shard::memory_ledger ledger;
  train::mlp_pass pass(shape, samples, ledger);
  const auto p = train::initial_parameters(shape, 1);
  std::vector<float> g(p.size());
  for (std::size_t i = 0; i < pass.input().size(); ++i) pass.input()[i] = static_cast<float>(i % 7) * 0.1f;
  const auto layer_params = [&](std::size_t l) {
    std::size_t at = 0;
    for (std::size_t k = 0; k < l; ++k) at += shape.layer_size(k);
    return std::span<const float>(p).subspan(at, shape.layer_size(l));
  };
  const auto layer_grads = [&](std::size_t l) {
    std::size_t at = 0;
    for (std::size_t k = 0; k < l; ++k) at += shape.layer_size(k);
    return std::span<float>(g).subspan(at, shape.layer_size(l));
  };
  const double per_call = fastest_per_call([&] {
    for (std::size_t l = 0; l < shape.layers(); ++l) pass.forward(l, layer_params(l));
    std::vector<float> delta(pass.output().begin(), pass.output().end());
    for (std::size_t l = shape.layers(); l-- > 0;) pass.backward(l, layer_params(l), layer_grads(l), delta);
  });
  return flops{6.0 * static_cast<double>(shape.parameters()) * static_cast<double>(samples)} / seconds{per_call};
}

// Two ranks exchanging m bytes at once, as a ring step does; the time per exchange.
inline double exchange_seconds(std::size_t m, int rounds) {
  comm::thread_world world(2);
  double per = 0;
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    std::vector<std::byte> out(m, std::byte{1}), in(m);
    const int peer = 1 - c.rank();
    for (int i = 0; i < rounds / 10 + 1; ++i) c.sendrecv(out, peer, in, peer);  // warm up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) c.sendrecv(out, peer, in, peer);
    if (c.rank() == 0) per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / rounds;
  });
  return per;
}

}  // namespace detail

inline machine_profile measure_machine() {
  machine_profile m;
  m.cores = std::max(1u, std::thread::hardware_concurrency());
  m.dense = detail::measure_dense();
  double small = 1e300, large = 1e300;
  const std::size_t big = std::size_t{1} << 20;
  for (int r = 0; r < 5; ++r) {
    small = std::min(small, detail::exchange_seconds(8, 2000));
    large = std::min(large, detail::exchange_seconds(big, 50));
  }
  m.latency = seconds{small};
  m.bandwidth = bytes_per_second{static_cast<double>(big) / std::max(large - small, 1e-9)};
  return m;
}

inline nlohmann::json machine_json(const machine_profile& m) {
  return {{"dense_flops_per_second", m.dense.value()},
          {"thread_link", {{"latency_s", m.latency.value()}, {"bandwidth_Bps", m.bandwidth.value()}}},
          {"cores", m.cores}};
}

}  // namespace trinity::cli
