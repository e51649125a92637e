#pragma once
//! \file
//! Measures a compressor into the model's terms (model::compressor_cost):
//! ratio, encode and decode rates, and relative error, on the caller's data
//! and this machine. What `trinity calibrate` writes into a profile and what
//! the chooser then trusts.
//!
//! Stateful codecs are measured in their steady state: each is warmed up on
//! one tensor, then timed on tensors that alternate, so a warm start or a
//! delta reference is in place but does not see the same data twice.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/decode.hpp>
#include <trinity/model/compression.hpp>

namespace trinity::compress {

struct calibration_options {
  int repeats = 3;  //!< timed calls; the fastest counts (the others saw interference)
};

//! `count` tensors of `n` normally distributed floats (σ = 1), from `seed`:
//! what gradients look like to a codec, and the data the benchmarks use.
[[nodiscard]] inline std::vector<std::vector<float>> normal_tensors(std::size_t count, std::size_t n,
                                                                    unsigned seed = 1) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d;
  std::vector<std::vector<float>> out(count, std::vector<float>(n));
  for (auto& t : out)
    for (auto& x : t) x = d(g);
  return out;
}

//! `samples` are two or more tensors of one size, used in turn.
[[nodiscard]] inline model::compressor_cost measure(const any_compressor& prototype,
                                                    std::span<const std::vector<float>> samples,
                                                    const calibration_options& options = {}) {
  trinity::detail::require(samples.size() >= 2, "samples", "give two or more tensors, so stateful codecs see new data");
  trinity::detail::require(options.repeats >= 1, "repeats", "must be at least 1");
  using clock = std::chrono::steady_clock;
  any_compressor c = prototype.fresh();
  frame_buffer frame;
  c.encode(samples[0], frame);  // warm-up: first-call state, page faults, the frame's capacity
  double best_encode = INFINITY, best_decode = INFINITY, err = 0, norm = 0;
  std::size_t wire = 0;
  decoder rx{{.max_bytes = std::size_t{1} << 34}};
  (void)rx.decode(frame.bytes());
  std::vector<float> out(samples[0].size());
  for (int r = 0; r < options.repeats; ++r) {
    const auto& x = samples[1 + static_cast<std::size_t>(r) % (samples.size() - 1)];
    frame.clear();
    const auto t0 = clock::now();
    c.encode(x, frame);
    const auto t1 = clock::now();
    rx.decode_into(frame.bytes(), out);
    const auto t2 = clock::now();
    best_encode = std::min(best_encode, std::chrono::duration<double>(t1 - t0).count());
    best_decode = std::min(best_decode, std::chrono::duration<double>(t2 - t1).count());
    if (r == 0) {
      wire = frame.size() - header_size;
      for (std::size_t i = 0; i < x.size(); ++i) {
        err += (static_cast<double>(x[i]) - out[i]) * (static_cast<double>(x[i]) - out[i]);
        norm += static_cast<double>(x[i]) * x[i];
      }
    }
  }
  const double input = static_cast<double>(samples[0].size() * sizeof(float));
  // A timer tick is the floor: a codec never measures as infinitely fast.
  const double tick = 1e-9;
  return {c.name(),
          input / static_cast<double>(std::max<std::size_t>(wire, 1)),
          bytes_per_second{input / std::max(best_encode, tick)},
          bytes_per_second{input / std::max(best_decode, tick)},
          norm > 0 ? std::sqrt(err / norm) : 0.0,
          c.traits().error.lossless(),
          all_reduce_gathers(c.traits())};
}

}  // namespace trinity::compress
