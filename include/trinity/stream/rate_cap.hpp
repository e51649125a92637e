#pragma once
//! \file
//! rate_cap: a token bucket that holds one stream to a rate, standing for what
//! one sending thread can push (the paper's 50 MB/s per thread, §4.2).
//!
//! A send of n bytes may start whenever the bucket is not in debt, and takes n
//! tokens, so one message larger than the burst still goes (the bucket goes into
//! debt and the next send waits it off). Over any interval from the start, the
//! bytes let through are at most burst + rate·t + the largest message: the bound
//! the tests check with a clock of their own.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::stream {

class rate_cap {
 public:
  using clock = std::chrono::steady_clock;

  //! Uncapped.
  rate_cap() = default;

  //! rate: bytes per second (0: uncapped); burst: bytes the bucket holds when full (0: 10 ms at the rate,
  //! at least 64 KiB, so a sender that wakes a little late does not fall behind the rate).
  explicit rate_cap(bytes_per_second rate, bytes burst = bytes{0}, clock::time_point now = clock::now())
      : rate_(rate.value()), burst_(burst.value()), last_(now) {
    trinity::detail::require(std::isfinite(rate_) && rate_ >= 0, "stream_cap", "must be 0 (uncapped) or positive");
    trinity::detail::require(std::isfinite(burst_) && burst_ >= 0, "burst", "must be 0 or positive");
    if (burst_ == 0) burst_ = std::max(65536.0, rate_ * 0.010);
    tokens_ = burst_;
  }

  [[nodiscard]] bool capped() const noexcept { return rate_ > 0; }
  [[nodiscard]] double rate() const noexcept { return rate_; }

  //! How long until a send may start (zero: now).
  [[nodiscard]] clock::duration wait(clock::time_point now) {
    if (!capped()) return clock::duration::zero();
    refill(now);
    if (tokens_ >= 0) return clock::duration::zero();
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(-tokens_ / rate_)) +
           clock::duration(1);
  }

  //! Records a send of n bytes; call it only when wait(now) was zero.
  void take(std::size_t n, clock::time_point now) {
    if (!capped()) return;
    refill(now);
    tokens_ -= static_cast<double>(n);
  }

 private:
  void refill(clock::time_point now) {
    if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
      last_ = now;
    }
  }

  double rate_ = 0;
  double burst_ = 0;
  double tokens_ = 0;
  clock::time_point last_{};
};

}  // namespace trinity::stream
