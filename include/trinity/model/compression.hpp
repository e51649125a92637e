#pragma once
//! \file
//! Compress or send? The cost model of the compute -> bandwidth trade for one
//! message (paper §3): a codec spends encode and decode time to shrink the
//! bytes on the link, and pays only when
//!
//!   S / r_enc + α + (S / ratio + h) / B + S / r_dec  <  α + (S + h) / B
//!
//! for a message of S bytes, a link of bandwidth B and latency α, a codec of
//! ratio `ratio` and encode and decode rates r_enc and r_dec (bytes of input
//! per second), h the frame header. A 2022 study found compression sped
//! training up in 6 of 200+ settings (../shared/FACTS.md, "Public anchors"):
//! on a fast link r_enc rarely beats B·ratio/(ratio − 1). The chooser prices
//! every candidate, drops those beyond the compute or error budget, and keeps
//! the fastest, which is the identity codec when nothing pays.
//!
//! The costs are measured, not assumed: `trinity calibrate` fills them in on
//! the machine (compress/calibrate.hpp). This header sees no codec.

#include <cstddef>
#include <limits>
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
  double ratio = 1.0;                 //!< input bytes / bytes on the wire
  bytes_per_second encode_rate{};     //!< input bytes encoded per second
  bytes_per_second decode_rate{};     //!< input bytes decoded per second
  double relative_error = 0.0;        //!< ||x - y||_2 / ||x||_2 on the calibration data
  bool lossless = true;
  //! Its frames cannot be summed hop by hop (top-k, DGC, PowerSGD), so an all-reduce all-gathers every
  //! rank's frame: (n − 1)·S/ratio sent per rank instead of a ring's 2(n − 1)/n·S/ratio (comm/compressed.hpp).
  bool gathered = false;
};

//! Checks a cost read from a profile; throws invalid_input naming the field.
inline void validate(const compressor_cost& c) {
  trinity::detail::require(!c.name.empty(), "name", "a compressor cost needs the compressor's name");
  trinity::detail::require(c.ratio > 0 && trinity::detail::is_finite(c.ratio), c.name + ".ratio", "must be positive and finite");
  trinity::detail::require(c.encode_rate > bytes_per_second{}, c.name + ".encode_rate", "must be positive");
  trinity::detail::require(c.decode_rate > bytes_per_second{}, c.name + ".decode_rate", "must be positive");
  trinity::detail::require(c.relative_error >= 0 && trinity::detail::is_finite(c.relative_error), c.name + ".relative_error",
                  "must be finite and non-negative");
}

struct link_model {
  bytes_per_second bandwidth;
  seconds latency{};
};

struct exchange_budget {
  //! The most encode + decode time the exchange may spend.
  seconds compute{std::numeric_limits<double>::infinity()};
  //! The largest relative L2 error the receiver accepts; 0 admits lossless codecs only.
  double error = std::numeric_limits<double>::infinity();
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

struct candidate_verdict {
  std::size_t index;
  exchange_time time;
  //! Empty when admitted; otherwise the budget that excluded it.
  std::string rejected;
};

struct exchange_choice {
  std::size_t index;  //!< into the candidates
  exchange_time time;
  std::vector<candidate_verdict> verdicts;  //!< every candidate, in the order given
  std::string why;
};

//! The fastest admissible candidate for a message over a link. One candidate
//! must be lossless with ratio 1 (identity): sending uncompressed is always
//! an option, and the answer when nothing else pays.
[[nodiscard]] inline exchange_choice choose(std::span<const compressor_cost> candidates, bytes message,
                                            const link_model& link, const exchange_budget& budget = {}) {
  trinity::detail::require(message >= bytes{} && trinity::detail::is_finite(message.value()), "message", "must be a finite size");
  trinity::detail::require(link.bandwidth > bytes_per_second{}, "link.bandwidth", "must be positive");
  trinity::detail::require(link.latency >= seconds{}, "link.latency", "must not be negative");
  std::size_t uncompressed = candidates.size();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    validate(candidates[i]);
    if (candidates[i].lossless && candidates[i].ratio <= 1.0 && uncompressed == candidates.size()) uncompressed = i;
  }
  trinity::detail::require(uncompressed < candidates.size(), "candidates",
                  "need an uncompressed option (lossless, ratio 1: identity), the baseline every codec must beat");
  exchange_choice out{uncompressed, predict(candidates[uncompressed], message, link), {}, {}};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    candidate_verdict v{i, predict(c, message, link), {}};
    if (c.relative_error > budget.error)
      v.rejected = "error " + std::to_string(c.relative_error) + " over the budget " + std::to_string(budget.error);
    else if (v.time.encode + v.time.decode > budget.compute && i != uncompressed)
      v.rejected = "encode + decode " + to_string(v.time.encode + v.time.decode) + " over the compute budget " +
                   to_string(budget.compute);
    else if (v.time.total() < out.time.total()) {
      out.index = i;
      out.time = v.time;
    }
    out.verdicts.push_back(std::move(v));
  }
  const auto& base = out.verdicts[uncompressed].time;
  const auto& pick = candidates[out.index];
  if (out.index == uncompressed)
    out.why = "no codec pays: sending " + to_string(message) + " uncompressed takes " + to_string(base.total()) +
              ", and every admissible codec's encode + decode costs more than the transfer it saves";
  else
    out.why = pick.name + " saves " + to_string(base.transfer - out.time.transfer) + " of transfer for " +
              to_string(out.time.encode + out.time.decode) + " of encode + decode: " + to_string(out.time.total()) +
              " against " + to_string(base.total()) + " uncompressed";
  return out;
}

}  // namespace trinity::model
