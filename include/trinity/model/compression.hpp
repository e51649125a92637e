#pragma once
//! \file
//! Compress or send? The cost model of the compute -> bandwidth trade for one
//! message (paper §3): a codec spends encode and decode time to shrink the
//! bytes on the link, and pays only when
//!
//!   S / r_enc + α + (S / ratio + h) / B + S / r_dec  <  α + S / B
//!
//! for a message of S bytes, a link of bandwidth B and latency α, a codec of
//! ratio `ratio` and encode and decode rates r_enc and r_dec (bytes of input
//! per second), h the frame header. The right side is sending the raw bytes:
//! no codec, no frame, no copy. A 2022 study found compression sped training
//! up in 6 of 200+ settings (Agarwal et al., "On the Utility of Gradient
//! Compression in Distributed Training Systems", MLSys 2022): on a fast
//! link r_enc rarely beats B·ratio/(ratio − 1). The chooser prices every
//! candidate, drops those beyond the compute or error budget, and keeps the
//! fastest, which is sending the raw bytes when nothing pays.
//!
//! The costs are measured, not assumed: `trinity calibrate` fills them in on
//! the machine (compress/calibrate.hpp). This header sees no codec.

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! One codec as the model sees it.
struct compressor_cost {
  std::string name;
  double ratio = 1.0;              //!< input bytes / bytes on the wire
  bytes_per_second encode_rate{};  //!< input bytes encoded per second
  bytes_per_second decode_rate{};  //!< input bytes decoded per second
  double relative_error = 0.0;     //!< ||x - y||_2 / ||x||_2 on the calibration data
  bool lossless = true;
  //! Its frames cannot be summed hop by hop (top-k, DGC, PowerSGD), so an all-reduce all-gathers every
  //! rank's frame: (n − 1)·S/ratio sent per rank instead of a ring's 2(n − 1)/n·S/ratio (comm/compressed.hpp).
  bool gathered = false;
};

//! Checks a cost read from a profile; throws invalid_input naming the field.
inline void validate(const compressor_cost& c) {
  trinity::detail::require(!c.name.empty(), "name", "a compressor cost needs the compressor's name");
  trinity::detail::require(c.ratio > 0 && trinity::detail::is_finite(c.ratio), c.name + ".ratio",
                           "must be positive and finite");
  trinity::detail::require(c.encode_rate > bytes_per_second{}, c.name + ".encode_rate", "must be positive");
  trinity::detail::require(c.decode_rate > bytes_per_second{}, c.name + ".decode_rate", "must be positive");
  trinity::detail::require(c.relative_error >= 0 && trinity::detail::is_finite(c.relative_error),
                           c.name + ".relative_error", "must be finite and non-negative");
}

struct link_model {
  bytes_per_second bandwidth;
  seconds latency{};
};

//! The relative error a lossy codec may add when nobody says otherwise: the planner's default too
//! (plan::training_workload::error_budget). Top-k and sign with error feedback converge, but their
//! per-message error is far above it; admit them by raising the budget on purpose.
inline constexpr double default_error_budget = 0.01;

struct exchange_budget {
  //! The most encode + decode time the exchange may spend.
  seconds compute{std::numeric_limits<double>::infinity()};
  //! The largest relative L2 error the receiver accepts; 0 admits lossless codecs only.
  double error = default_error_budget;
};

//! Bytes every frame adds (compress/wire.hpp's header).
inline constexpr bytes frame_header{56};

struct exchange_time {
  seconds encode{}, transfer{}, decode{};
  [[nodiscard]] constexpr seconds total() const noexcept { return encode + transfer + decode; }
};

//! Encode, transfer and decode time of one message of `message` bytes.
[[nodiscard]] inline exchange_time predict(const compressor_cost& c, bytes message, const link_model& link) {
  return {message / c.encode_rate, link.latency + (message / c.ratio + frame_header) / link.bandwidth,
          message / c.decode_rate};
}

//! Sending the raw bytes: the link's latency and the message at its bandwidth, nothing else.
[[nodiscard]] inline exchange_time predict_raw(bytes message, const link_model& link) {
  return {seconds{}, link.latency + message / link.bandwidth, seconds{}};
}

struct candidate_verdict {
  std::size_t index;
  exchange_time time;
  //! Empty when admitted; otherwise the budget that excluded it.
  std::string rejected;
};

struct exchange_choice {
  //! Into the candidates; empty when sending the raw bytes is fastest.
  std::optional<std::size_t> index;
  exchange_time time;
  exchange_time raw;                        //!< the baseline every codec must beat
  std::vector<candidate_verdict> verdicts;  //!< every candidate, in the order given
  std::string why;
  [[nodiscard]] bool compressed() const noexcept { return index.has_value(); }
};

//! The fastest admissible way to send a message over a link: a candidate codec, or the raw bytes.
[[nodiscard]] inline exchange_choice choose(std::span<const compressor_cost> candidates, bytes message,
                                            const link_model& link, const exchange_budget& budget = {}) {
  trinity::detail::require(message >= bytes{} && trinity::detail::is_finite(message.value()), "message",
                           "must be a finite size");
  trinity::detail::require(link.bandwidth > bytes_per_second{}, "link.bandwidth", "must be positive");
  trinity::detail::require(link.latency >= seconds{}, "link.latency", "must not be negative");
  trinity::detail::require(budget.error >= 0, "budget.error", "must not be negative");
  for (const auto& c : candidates) validate(c);
  const exchange_time raw = predict_raw(message, link);
  exchange_choice out{std::nullopt, raw, raw, {}, {}};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    candidate_verdict v{i, predict(c, message, link), {}};
    if (c.relative_error > budget.error)
      v.rejected = "error " + units::detail::format_number(c.relative_error) + " over the budget " +
                   units::detail::format_number(budget.error);
    else if (v.time.encode + v.time.decode > budget.compute)
      v.rejected = "encode + decode " + to_string(v.time.encode + v.time.decode) + " over the compute budget " +
                   to_string(budget.compute);
    else if (v.time.total() < out.time.total()) {
      out.index = i;
      out.time = v.time;
    }
    out.verdicts.push_back(std::move(v));
  }
  if (!out.index)
    out.why = "no codec pays: sending " + to_string(message) + " raw takes " + to_string(raw.total()) +
              ", and every admissible codec's encode + decode costs more than the transfer it saves";
  else
    out.why = candidates[*out.index].name + " saves " + to_string(raw.transfer - out.time.transfer) +
              " of transfer for " + to_string(out.time.encode + out.time.decode) +
              " of encode + decode: " + to_string(out.time.total()) + " against " + to_string(raw.total()) + " raw";
  return out;
}

}  // namespace trinity::model
