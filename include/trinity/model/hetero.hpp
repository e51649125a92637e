#pragma once
//! \file
//! Heterogeneous producer/consumer training (paper §4.2): a low-end cluster
//! produces samples (a video's VAE encoding), a high-end cluster consumes them
//! (DiT training), joined by a message queue over an inter-cluster link. The
//! link carries N parallel streams, each capped (a sending thread's limit);
//! what reaches the consumers is the least of what the producers make, what
//! the streams and the link carry, and what the consumers take:
//!   carried  = min(link, N · cap)                      bytes/s
//!   supply   = min(P · produce, carried / sample)      samples/s
//!   util     = min(1, supply / (C · consume))           the consumers' busy share
//! and the bubble is 1 − util. Three answers the paper reports:
//!  - how many producers replace one consumer-class device: moving the
//!    encoding off the consumers frees T/e_high of them for T/e_low producers,
//!    so e_high / e_low producers per consumer device freed (rounded up);
//!  - how many streams break a thread's cap: ceil(link / cap);
//!  - how many consumer nodes a link supports: floor(carried / (a node's
//!    demand · sample)).
//! Over a sequence of phases whose samples differ (clips of other lengths or
//! rates: the data distribution shifts), the consumers idle wherever a phase's
//! supply falls short: bubble = Σ idle / Σ wall.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! The inter-cluster link and the streams over it.
struct stream_link {
  bytes_per_second bandwidth{};   //!< the link, one way
  std::size_t streams = 1;        //!< parallel streams (sending threads or processes)
  bytes_per_second stream_cap{};  //!< one stream's most (0: uncapped)
};

inline void validate(const stream_link& l) {
  trinity::detail::require(l.bandwidth.value() > 0 && std::isfinite(l.bandwidth.value()), "link.bandwidth",
                           "must be positive and finite");
  trinity::detail::require(l.streams >= 1, "link.streams", "must be at least 1");
  trinity::detail::require(l.stream_cap.value() >= 0 && std::isfinite(l.stream_cap.value()), "link.stream_cap",
                           "must be 0 (uncapped) or positive");
}

//! What the streams carry: min(link, N · cap).
inline bytes_per_second carried(const stream_link& l) {
  validate(l);
  if (l.stream_cap.value() == 0) return l.bandwidth;
  return std::min(l.bandwidth, static_cast<double>(l.streams) * l.stream_cap);
}

//! The fewest streams whose caps together reach the link: ceil(link / cap); 1 when uncapped.
inline std::size_t streams_to_fill(bytes_per_second link, bytes_per_second cap) {
  trinity::detail::require(link.value() > 0, "link.bandwidth", "must be positive");
  if (cap.value() <= 0) return 1;
  return static_cast<std::size_t>(std::ceil(link / cap - 1e-12));
}

//! One phase of training: its samples, how fast a producer makes them and a consumer takes them.
struct sample_phase {
  double samples = 1;             //!< samples in the phase (a share, for a steady state)
  bytes sample{};                 //!< bytes of one produced sample (a latent) on the link
  double produce_per_second = 0;  //!< one producer device's rate
  double consume_per_second = 0;  //!< one consumer device's rate
};

inline void validate(const sample_phase& p) {
  trinity::detail::require(p.samples > 0, "phase.samples", "must be positive");
  trinity::detail::require(p.sample.value() > 0, "phase.sample", "must be a positive size");
  trinity::detail::require(p.produce_per_second > 0, "phase.produce_per_second", "must be positive");
  trinity::detail::require(p.consume_per_second > 0, "phase.consume_per_second", "must be positive");
}

//! Samples per second that reach the consumers: min(P · produce, carried / sample).
inline double supply(std::size_t producers, const sample_phase& p, const stream_link& l) {
  validate(p);
  return std::min(static_cast<double>(producers) * p.produce_per_second, (carried(l) / p.sample).value());
}

//! The consumers' busy share in a steady phase: min(1, supply / (C · consume)).
inline double consumer_utilization(std::size_t producers, std::size_t consumers, const sample_phase& p,
                                   const stream_link& l) {
  trinity::detail::require(consumers >= 1, "consumers", "must be at least 1");
  return std::min(1.0, supply(producers, p, l) / (static_cast<double>(consumers) * p.consume_per_second));
}

//! The consumers' idle share over phases run one after another: Σ idle / Σ wall.
inline double bubble_fraction(std::size_t producers, std::size_t consumers, std::span<const sample_phase> phases,
                              const stream_link& l) {
  trinity::detail::require(!phases.empty(), "phases", "give at least one phase");
  double wall = 0, busy = 0;
  for (const auto& p : phases) {
    const double take = static_cast<double>(consumers) * p.consume_per_second;
    const double rate = std::min(take, supply(producers, p, l));
    wall += p.samples / rate;
    busy += p.samples / take;
  }
  return 1.0 - busy / wall;
}

//! Producers per consumer-class device freed by moving the encoding off the consumers: the two classes'
//! encoding rates, e_high / e_low.
inline double producers_per_consumer_freed(double encode_high, double encode_low) {
  trinity::detail::require(encode_high > 0, "encode_high", "must be positive");
  trinity::detail::require(encode_low > 0, "encode_low", "must be positive");
  return encode_high / encode_low;
}

//! The same in whole devices: ceil(e_high / e_low), the paper's "four low-end GPUs replace one high-end GPU".
inline std::size_t whole_producers_per_consumer_freed(double encode_high, double encode_low) {
  return static_cast<std::size_t>(std::ceil(producers_per_consumer_freed(encode_high, encode_low) - 1e-12));
}

//! The consumer nodes the streams feed at full speed: floor(carried / (a node's samples per second · sample)).
inline std::size_t nodes_supported(const stream_link& l, double node_samples_per_second, bytes sample) {
  trinity::detail::require(node_samples_per_second > 0, "node_samples_per_second", "must be positive");
  trinity::detail::require(sample.value() > 0, "sample", "must be a positive size");
  return static_cast<std::size_t>(std::floor((carried(l) / (node_samples_per_second * sample)).value() + 1e-12));
}

namespace presets {

//! The paper's heterogeneous T2V run (§4.2.2): WAN2.2's VAE encoding on a low-end cluster feeding DiT training
//! on a high-end one. Each input is sourced or named as an assumption.
struct hetero_training {
  stream_link link;
  sample_phase phase;
  std::size_t devices_per_node = 8;
  double encode_high = 0, encode_low = 0;  //!< encoding rates of the two classes (relative)
};

inline hetero_training wan22_t2v() {
  hetero_training h;
  // The inter-cluster link: 10 Gbps (paper §4.2.2). A sending thread's cap: 50 MB/s, measured on the paper's
  // cluster (§4.2.2). One stream, as a single-threaded sender has.
  h.link = {bytes_per_second{10e9 / 8}, 1, bytes_per_second{50e6}};
  // One sample: the latent of an 81-frame 720P clip (1280 x 704, Wan2.2 TI2V-5B's 720P size) through
  // Wan2.2's VAE, which compresses 4x in time and 16 x 16 in space into 48 channels (Wan2.2 model card):
  // (81 - 1) / 4 + 1 = 21 latent frames of 44 x 80 x 48 values, bf16. 81 frames is an assumption (the paper
  // varies the clips from 5 to 129 fps).
  h.phase.sample = bytes{21.0 * 44 * 80 * 48 * 2};
  // Assumptions: a high-end GPU trains the DiT at 1 sample/s, eight to a node; a producer's rate only sets
  // how many producers feed them (the ratio below is what the paper reports).
  h.phase.consume_per_second = 1;
  h.phase.produce_per_second = 1;
  h.devices_per_node = 8;
  // Encoding rates: a video VAE's 3-D convolutions stream activations far larger than their weights, so the
  // encoder is taken as memory-bandwidth bound (an assumption) and the classes' rates are their bandwidths:
  // H100 SXM 3.35 TB/s (NVIDIA H100 data sheet), L40S 864 GB/s (NVIDIA L40S data sheet).
  h.encode_high = 3.35e12;
  h.encode_low = 864e9;
  return h;
}

}  // namespace presets

}  // namespace trinity::model
