#pragma once
//! \file
//! The compute -> bandwidth frontier of the paper (§3.1.2): for one quality
//! target Q0, the least bandwidth B*(Q0, C) a decoder of compute C needs. It
//! "decreases monotonically" as C grows; trinity draws it through measured
//! (compute, bandwidth) points and interpolates linearly in log-log, where
//! codec curves are close to straight. It is not extrapolated: outside the
//! measured range the answer is an error naming the range.
//!
//!   constexpr auto f = trinity::model::paper_video_frontier();
//!   f.bandwidth_at(1.4e10_FLOP)   // 0.075 bpp
//!
//! Example: examples/worked_examples.cpp

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <trinity/opt_in.hpp>
#include <trinity/detail/cmath.hpp>
#include <trinity/error.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

namespace detail {
template <class Q>
std::string range_problem(Q value, Q lo, Q hi) {
  return to_string(value) + " is outside the measured range [" + to_string(lo) + ", " + to_string(hi) +
         "]; the frontier is not extrapolated, measure a point there";
}

// Written as !(inside) so that NaN, which compares false with everything, is refused too.
template <class Q>
constexpr void require_in_range(std::string_view field, Q value, Q lo, Q hi) {
  if (value >= lo && value <= hi) return;
  if (std::is_constant_evaluated())
    throw invalid_input(std::string(field), "outside the measured range of the frontier");
  throw invalid_input(std::string(field), range_problem(value, lo, hi));
}
}  // namespace detail

template <Quantity Compute = flops, Quantity Bandwidth = bits_per_pixel, std::size_t MaxPoints = 32>
class frontier {
 public:
  struct point {
    Compute compute;
    Bandwidth bandwidth;
  };

  constexpr frontier(std::initializer_list<point> points)
      : frontier(std::span<const point>(points.begin(), points.size())) {}

  //! Throws invalid_input naming `points[i].compute` or `points[i].bandwidth`
  //! when the points are not a frontier (too few, not rising in compute,
  //! bandwidth rising, or not positive).
  constexpr explicit frontier(std::span<const point> points) {
    trinity::detail::require(points.size() >= 2, "points", "a frontier needs at least two measured points");
    trinity::detail::require(points.size() <= MaxPoints, "points", "too many points for this frontier's capacity");
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto& p = points[i];
      trinity::detail::require(p.compute > Compute{} && trinity::detail::is_finite(p.compute.value()), "points.compute",
                               "every compute value must be positive and finite");
      trinity::detail::require(p.bandwidth > Bandwidth{} && trinity::detail::is_finite(p.bandwidth.value()),
                               "points.bandwidth", "every bandwidth value must be positive and finite");
      if (i > 0) {
        trinity::detail::require(p.compute > points[i - 1].compute, "points.compute",
                                 "list points by strictly rising compute");
        trinity::detail::require(p.bandwidth <= points[i - 1].bandwidth, "points.bandwidth",
                                 "bandwidth must not rise with compute: B*(Q0, C) falls monotonically as C grows "
                                 "(paper §3.1.2)");
      }
      points_[i] = p;
    }
    size_ = points.size();
  }

  [[nodiscard]] constexpr std::span<const point> points() const noexcept { return {points_.data(), size_}; }
  [[nodiscard]] constexpr Compute min_compute() const noexcept { return points_[0].compute; }
  [[nodiscard]] constexpr Compute max_compute() const noexcept { return points_[size_ - 1].compute; }
  [[nodiscard]] constexpr Bandwidth max_bandwidth() const noexcept { return points_[0].bandwidth; }
  [[nodiscard]] constexpr Bandwidth min_bandwidth() const noexcept { return points_[size_ - 1].bandwidth; }

  //! B*(Q0, C): the least bandwidth at decoder compute c.
  [[nodiscard]] constexpr Bandwidth bandwidth_at(Compute c) const {
    check_compute(c);
    const std::size_t i = segment_for(c);
    const point& a = points_[i];
    const point& b = points_[i + 1];
    // A measured point is returned as measured, not through exp(log(.)).
    if (c == a.compute) return a.bandwidth;
    if (c == b.compute) return b.bandwidth;
    const double t = (lg(c.value()) - lg(a.compute.value())) / (lg(b.compute.value()) - lg(a.compute.value()));
    return Bandwidth{
        trinity::detail::exp(lg(a.bandwidth.value()) + t * (lg(b.bandwidth.value()) - lg(a.bandwidth.value())))};
  }

  //! The inverse: the least compute that reaches bandwidth b.
  [[nodiscard]] constexpr Compute compute_for(Bandwidth b) const {
    detail::require_in_range("bandwidth", b, min_bandwidth(), max_bandwidth());
    for (std::size_t i = 0; i + 1 < size_; ++i) {
      const point& p = points_[i];
      const point& q = points_[i + 1];
      if (b <= p.bandwidth && b >= q.bandwidth) {
        if (b == p.bandwidth) return p.compute;  // also the cheaper end of a flat segment
        if (b == q.bandwidth) return q.compute;
        const double t =
            (lg(b.value()) - lg(p.bandwidth.value())) / (lg(q.bandwidth.value()) - lg(p.bandwidth.value()));
        return Compute{
            trinity::detail::exp(lg(p.compute.value()) + t * (lg(q.compute.value()) - lg(p.compute.value())))};
      }
    }
    return max_compute();
  }

  //! d log B* / d log C at c: the compression each factor of compute buys
  //! (-0.3 means 10x compute -> 2x less bandwidth). Negative or zero.
  [[nodiscard]] constexpr double elasticity(Compute c) const {
    check_compute(c);
    const std::size_t i = segment_for(c);
    const point& a = points_[i];
    const point& b = points_[i + 1];
    return (lg(b.bandwidth.value()) - lg(a.bandwidth.value())) / (lg(b.compute.value()) - lg(a.compute.value()));
  }

  //! How many times less bandwidth `to` needs than `from`.
  [[nodiscard]] constexpr double compression_gain(Compute from, Compute to) const {
    return bandwidth_at(from) / bandwidth_at(to);
  }

 private:
  static constexpr double lg(double v) { return trinity::detail::log(v); }

  constexpr void check_compute(Compute c) const {
    detail::require_in_range("compute", c, min_compute(), max_compute());
  }
  constexpr std::size_t segment_for(Compute c) const noexcept {
    std::size_t i = 0;
    while (i + 2 < size_ && c > points_[i + 1].compute) ++i;
    return i;
  }

  std::array<point, MaxPoints> points_{};
  std::size_t size_ = 0;
};

//! The paper's worked example (§3.1.2): H.264-like 0.15 bpp at 1e9 FLOPs;
//! 0.075 bpp at ~1.4e10 FLOPs; 0.0375 bpp at 1e11 FLOPs ("below 0.0375", taken
//! as the bound): "roughly 100x more computation -> 4x compression".
constexpr frontier<flops, bits_per_pixel> paper_video_frontier() {
  using namespace trinity::literals;
  return {{1e9_FLOP, 0.15_bpp}, {1.4e10_FLOP, 0.075_bpp}, {1e11_FLOP, 0.0375_bpp}};
}

//! Compute -> bandwidth as a TradeoffPolicy: moving the decoder from one
//! compute budget to another on the frontier, priced per frame of `frame`
//! pixels.
template <std::size_t MaxPoints = 32>
struct compute_for_bandwidth {
  using policy_concept = tradeoff_policy_tag;
  using spends = resources::compute;
  using saves = resources::bandwidth;

  frontier<flops, bits_per_pixel, MaxPoints> curve;
  pixels frame;  //!< pixels per unit of work (a 1280x720 frame is 921,600)

  struct input {
    flops baseline;  //!< decoder compute before the trade
    flops chosen;    //!< decoder compute after it
  };

  [[nodiscard]] constexpr priced_trade<spends, saves> price(const input& in) const {
    priced_trade<spends, saves> t{};
    t.before.compute = in.baseline;
    t.before.bandwidth = curve.bandwidth_at(in.baseline) * frame;
    t.after.compute = in.chosen;
    t.after.bandwidth = curve.bandwidth_at(in.chosen) * frame;
    return t;
  }
};

}  // namespace trinity::model
