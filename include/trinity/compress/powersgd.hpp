#pragma once
//! \file
//! powersgd<Rank>: PowerSGD (Vogels et al., NeurIPS 2019), one power-iteration
//! step per call. The tensor is viewed as a rows × cols matrix M (cols =
//! ⌈√n⌉, the tail padded with zeros), M += the error left last time, then
//! P = M·Q, P orthonormalized (Gram-Schmidt, each column divided by its norm
//! plus epsilon, so a zero column stays zero instead of dividing by zero),
//! Q = Mᵀ·P, and the receiver rebuilds P·Qᵀ. Q is kept for the next call
//! (warm start) and M − P·Qᵀ is fed back (error feedback built in).
//! P·Pᵀ is a projection, so ||M − P·Qᵀ|| <= ||M||: a contraction, bound 1.
//!
//! Its frames are not summable: P·Qᵀ is bilinear. Data-parallel PowerSGD
//! all-reduces P and Q in two phases with a shared Q, which the collectives
//! do with this class's pieces rather than through its frames.
//!
//! Wire: params = {rank, rows, cols, 0}; body: P (rows × rank, row-major f32),
//! then Q (cols × rank). Decoding costs O(count · rank); rank is at most 64.

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/bytes.hpp>
#include <trinity/compress/detail/decode_fwd.hpp>
#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/wire.hpp>
#include <trinity/opt_in.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

namespace detail {
inline constexpr std::uint32_t max_rank = 64;

struct matrix_shape {
  std::size_t rows = 0, cols = 0;
};

inline matrix_shape shape_for(std::size_t n) {
  if (n == 0) return {};
  auto cols = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  return {(n + cols - 1) / cols, cols};
}

//! y[j] += a * x[j] for a row: contiguous, so it vectorizes.
inline void axpy(float a, const float* x, float* y, std::size_t len) noexcept {
  for (std::size_t j = 0; j < len; ++j) y[j] += a * x[j];
}

//! Dot product with eight running sums, so it vectorizes without fast-math.
inline float dot(const float* a, const float* b, std::size_t len) noexcept {
  float acc[8] = {};
  std::size_t j = 0;
  for (; j + 8 <= len; j += 8)
    for (std::size_t l = 0; l < 8; ++l) acc[l] += a[j + l] * b[j + l];
  for (; j < len; ++j) acc[0] += a[j] * b[j];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

//! out[i·cols + j] = Σ_c p[i·r + c]·qt[c·cols + j], the first n elements.
inline void rebuild(std::span<const float> p, std::span<const float> qt, std::size_t r, matrix_shape s,
                    std::span<float> out) {
  for (std::size_t i = 0; i < s.rows; ++i) {
    const std::size_t lo = i * s.cols;
    const std::size_t len = std::min(s.cols, out.size() - lo);
    float* row = out.data() + lo;
    std::fill(row, row + len, 0.0f);
    for (std::size_t c = 0; c < r; ++c) axpy(p[i * r + c], qt.data() + c * s.cols, row, len);
  }
}
}  // namespace detail

template <std::uint32_t Rank = 4>
class powersgd {
  static_assert(Rank >= 1 && Rank <= detail::max_rank,
                "trinity: powersgd<Rank> takes a rank from 1 to 64 (1-4 is usual)");

 public:
  using compressor_concept = compressor_tag;
  // 512: a 64 MiB tensor (4,096 × 4,096) at rank 4 sends 2 · 4,096 · 4 floats.
  static constexpr compressor_traits traits{.name = "powersgd",
                                            .wire_codec = codec::low_rank,
                                            .role = role::values,
                                            .error = {error_kind::contraction, 1.0},
                                            .stateful = true,
                                            .own_error_feedback = true,
                                            .needs_dense = true,
                                            .expected_ratio = 512.0};

  //! epsilon: added to each column norm in the orthogonalization (PyTorch's hook uses 1e-8 too).
  explicit powersgd(double epsilon = 1e-8, std::uint32_t seed = 0x5eed) : epsilon_(epsilon), seed_(seed) {
    trinity::detail::require(epsilon >= 0.0 && std::isfinite(epsilon), "epsilon", "must be finite and non-negative");
  }

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    detail::require_residual_size(in.size(), residual.size());
    detail::require_finite(traits.name, in);
    const std::size_t n = in.size();
    const detail::matrix_shape s = detail::shape_for(n);
    if (error_.size() != n || s.cols != shape_.cols) start(s, n);
    const std::size_t r = Rank;
    // M = input + error, padded to rows × cols.
    m_.assign(s.rows * s.cols, 0.0f);
    for (std::size_t i = 0; i < n; ++i) m_[i] = in[i] + error_[i];
    // P = M·Q, with Q held transposed (qt_[c·cols + j]) so each dot is contiguous.
    p_.assign(s.rows * r, 0.0f);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t c = 0; c < r; ++c)
        p_[i * r + c] = detail::dot(m_.data() + i * s.cols, qt_.data() + c * s.cols, s.cols);
    orthonormalize(s.rows);
    // Q = Mᵀ·P, accumulated row by row of M.
    std::fill(qt_.begin(), qt_.end(), 0.0f);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t c = 0; c < r; ++c)
        detail::axpy(p_[i * r + c], m_.data() + i * s.cols, qt_.data() + c * s.cols, s.cols);

    for (const float v : p_)
      if (detail::non_finite_bits(std::bit_cast<std::uint32_t>(v))) detail::refuse_overflow(traits.name, "factor P");
    for (const float v : qt_)
      if (detail::non_finite_bits(std::bit_cast<std::uint32_t>(v))) detail::refuse_overflow(traits.name, "factor Q");
    // What the receiver will rebuild, checked before anything is sent or carried.
    approx_.resize(n);
    detail::rebuild(p_, qt_, r, s, approx_);
    for (const float v : approx_)
      if (detail::non_finite_bits(std::bit_cast<std::uint32_t>(v)))
        detail::refuse_overflow(traits.name, "product P·Qᵀ");

    const std::size_t at =
        detail::begin_frame(out, codec::low_rank, element::f32, n,
                            {Rank, static_cast<std::uint32_t>(s.rows), static_cast<std::uint32_t>(s.cols), 0});
    std::byte* body = out.grow((s.rows + s.cols) * r * 4);
    if (!p_.empty()) std::memcpy(body, p_.data(), p_.size() * 4);
    for (std::size_t j = 0; j < s.cols; ++j)
      for (std::size_t c = 0; c < r; ++c)
        detail::store<float>(body + (s.rows * r + j * r + c) * 4, qt_[c * s.cols + j]);
    detail::finish_frame(out, at);

    // Error feedback: what P·Qᵀ misses goes into the next call.
    for (std::size_t i = 0; i < n; ++i) error_[i] = m_[i] - approx_[i];
    if (!residual.empty()) std::copy(error_.begin(), error_.end(), residual.begin());
  }

  //! The error carried into the next call.
  [[nodiscard]] std::span<const float> carried_error() const noexcept { return error_; }

 private:
  void start(detail::matrix_shape s, std::size_t n) {
    if (s.rows > UINT32_MAX || s.cols > UINT32_MAX)
      throw invalid_input("input", "too large for 32-bit matrix dimensions");
    shape_ = s;
    error_.assign(n, 0.0f);
    qt_.resize(Rank * s.cols);
    // A fixed random start (Box-Muller on hashed counters), as PowerSGD seeds Q.
    for (std::size_t i = 0; i < qt_.size(); ++i) {
      const double u1 = (detail::mix32(seed_ + 2 * static_cast<std::uint32_t>(i)) + 1.0) * 0x1p-32;
      const double u2 = detail::mix32(seed_ + 2 * static_cast<std::uint32_t>(i) + 1) * 0x1p-32;
      qt_[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
  }

  // Gram-Schmidt, each projection done twice ("twice is enough": one pass loses
  // orthogonality when columns are nearly dependent). A column left with less
  // than 1e-5 of its norm is dependent on the ones before it: it is zeroed,
  // because normalizing rounding noise would give a unit vector that is not
  // orthogonal, and P·Pᵀ would stop being a projection.
  void orthonormalize(std::size_t rows) {
    const std::size_t r = Rank;
    auto column_norm = [&](std::size_t c) {
      double sq = 0;
      for (std::size_t i = 0; i < rows; ++i) sq += static_cast<double>(p_[i * r + c]) * p_[i * r + c];
      return std::sqrt(sq);
    };
    for (std::size_t c = 0; c < r; ++c) {
      const double before = column_norm(c);
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t d = 0; d < c; ++d) {
          double proj = 0;
          for (std::size_t i = 0; i < rows; ++i) proj += static_cast<double>(p_[i * r + c]) * p_[i * r + d];
          for (std::size_t i = 0; i < rows; ++i) p_[i * r + c] -= static_cast<float>(proj) * p_[i * r + d];
        }
      const double after = column_norm(c);
      const float inv = after <= 1e-5 * before ? 0.0f : static_cast<float>(1.0 / (after + epsilon_));
      for (std::size_t i = 0; i < rows; ++i) p_[i * r + c] *= inv;
    }
  }

  double epsilon_;
  std::uint32_t seed_;
  detail::matrix_shape shape_;
  std::vector<float> error_, m_, p_, qt_, approx_;
};

namespace detail {
inline void decode_low_rank_body(const frame_view& f, std::span<float> out, element want, decode_context& ctx) {
  if (want != element::f32 || f.header.element != element::f32)
    fail("header.element", "a low_rank frame decodes to f32");
  const std::uint64_t r = f.header.params[0], rows = f.header.params[1], cols = f.header.params[2];
  if (f.header.params[3]) fail("low_rank.params", "params[3] must be 0");
  if (r < 1 || r > max_rank) fail("low_rank.rank", std::to_string(r) + " is not from 1 to 64");
  const std::uint64_t n = out.size();
  if (n == 0 ? (rows || cols)
             : (rows == 0 || cols == 0 || checked_mul(rows, cols, "low_rank.rows") < n || (rows - 1) * cols >= n))
    fail("low_rank.rows", std::to_string(rows) + " × " + std::to_string(cols) + " is not the padded shape of " +
                              std::to_string(n) + " elements (the last row holds the tail)");
  const std::uint64_t factors = checked_mul(rows + cols, r, "low_rank.rows");
  require_body_size(f, checked_mul(factors, 4, "low_rank.rows"), "low_rank");
  ctx.charge(factors, 4, "low_rank.rows");
  std::vector<float> p(static_cast<std::size_t>(rows * r)), qt(static_cast<std::size_t>(cols * r));
  const std::byte* body = f.body.data();
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = load<float>(body + 4 * i);
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t c = 0; c < r; ++c) qt[c * cols + j] = load<float>(body + 4 * (rows * r + j * r + c));
  for (const float v : p)
    if (non_finite_bits(std::bit_cast<std::uint32_t>(v))) fail("low_rank.P", "holds a NaN or infinity");
  for (const float v : qt)
    if (non_finite_bits(std::bit_cast<std::uint32_t>(v))) fail("low_rank.Q", "holds a NaN or infinity");
  rebuild(p, qt, static_cast<std::size_t>(r), {static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)}, out);
}
}  // namespace detail

namespace detail {
//! low_rank frames decode wherever this header is included (compress/frame_decoders.hpp).
inline constexpr frame_decoder low_rank_frames{"low_rank", &decode_with<&decode_low_rank_body>};
inline const bool low_rank_frames_registered = register_frame_decoder(codec::low_rank, low_rank_frames);
}  // namespace detail

}  // namespace trinity::compress
