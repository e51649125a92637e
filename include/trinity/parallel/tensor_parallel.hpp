#pragma once
//! \file
//! Tensor parallelism's two linear layers (Megatron-LM, Shoeybi et al. 2019),
//! over any Communicator that holds one tensor-parallel group (comm/group.hpp
//! cuts one out of a larger world). Activations are fp32, row-major, one row
//! per token; W is out × in, y = x·Wᵀ + b.
//!  - column_parallel_linear: each of the t ranks holds out/t rows of W (and
//!    of b); the forward needs the whole x and no message, the backward
//!    all-reduces dx, whose partial sums each rank holds.
//!  - row_parallel_linear: each rank holds in/t columns of W and takes its
//!    in/t columns of x (what a column-parallel layer before it produced); the
//!    forward all-reduces y's partial sums, then adds b (replicated); the
//!    backward needs no message.
//! With sequence parallelism the tokens outside the pair are split t ways:
//! the column layer all-gathers x first (and reduce-scatters dx), the row
//! layer reduce-scatters y (and all-gathers dy), the same bytes as the
//! all-reduce they replace (Korthikanti et al. 2022); the row layer's b,
//! replicated, takes its gradient from the gathered dy, every token's.
//! A pair (column, then an elementwise function, then row) sends two
//! activations' all-reduce per pass, as model/parallel_training.hpp prices.
//!
//!   parallel::column_parallel_linear up(in, hidden, tp.size(), tp.rank());
//!   up.load(full_w1, full_b1);                       // this rank's rows
//!   up.forward(tp, x, h, rows);  ...  up.backward(tp, dh, dx, rows);

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <trinity/comm/collectives.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::parallel {

namespace detail {

// y[m×n] = x[m×k]·wᵀ (w n×k), plus b[n] when given.
inline void x_wt(std::span<const float> x, std::span<const float> w, const float* b, std::span<float> y, std::size_t m,
                 std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t o = 0; o < n; ++o) {
      float acc = b ? b[o] : 0.0f;
      const float* a = x.data() + i * k;
      const float* row = w.data() + o * k;
      for (std::size_t j = 0; j < k; ++j) acc += a[j] * row[j];
      y[i * n + o] = acc;
    }
}
// dx[m×k] = dy[m×n]·w (w n×k).
inline void dy_w(std::span<const float> dy, std::span<const float> w, std::span<float> dx, std::size_t m, std::size_t k,
                 std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      float acc = 0.0f;
      for (std::size_t o = 0; o < n; ++o) acc += dy[i * n + o] * w[o * k + j];
      dx[i * k + j] = acc;
    }
}
// dw[n×k] += dyᵀ·x, db[n] += Σ_i dy.
inline void accumulate_grads(std::span<const float> dy, std::span<const float> x, std::span<float> dw, std::span<float> db,
                             std::size_t m, std::size_t k, std::size_t n) {
  for (std::size_t o = 0; o < n; ++o) {
    float bsum = 0.0f;
    for (std::size_t i = 0; i < m; ++i) bsum += dy[i * n + o];
    db[o] += bsum;
    for (std::size_t j = 0; j < k; ++j) {
      float acc = 0.0f;
      for (std::size_t i = 0; i < m; ++i) acc += dy[i * n + o] * x[i * k + j];
      dw[o * k + j] += acc;
    }
  }
}

inline std::size_t split(std::size_t n, int t, const char* what) {
  trinity::detail::require(t >= 1, "tensor_parallel", "must be at least 1");
  trinity::detail::require(n % static_cast<std::size_t>(t) == 0, what,
                           std::to_string(n) + " does not split into " + std::to_string(t) +
                               " equal parts. Fix: a tensor-parallel degree that divides it");
  return n / static_cast<std::size_t>(t);
}

inline void need(std::size_t have, std::size_t want, const char* what) {
  trinity::detail::require(have == want, what, "holds " + std::to_string(have) + " values; this layer needs " + std::to_string(want));
}

}  // namespace detail

//! Which tokens a rank holds outside the pair: all of them, or with sequence parallelism its 1/t of them.
enum class tokens { all, sequence_parallel };

//! W split by its rows (outputs): this rank's out/t of them, and of b.
class column_parallel_linear {
 public:
  column_parallel_linear(std::size_t in, std::size_t out, int t, int rank)
      : in_(in), out_(detail::split(out, t, "out")), t_(t), rank_(rank), w_(out_ * in), b_(out_), dw_(out_ * in), db_(out_) {
    trinity::detail::require(rank >= 0 && rank < t, "rank", "must be in [0, tensor_parallel)");
  }

  //! Takes this rank's rows of the whole layer's W (out × in) and b.
  void load(std::span<const float> w, std::span<const float> b) {
    detail::need(w.size(), out_ * static_cast<std::size_t>(t_) * in_, "w");
    detail::need(b.size(), out_ * static_cast<std::size_t>(t_), "b");
    const std::size_t first = static_cast<std::size_t>(rank_) * out_;
    std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(first * in_), out_ * in_, w_.begin());
    std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(first), out_, b_.begin());
  }

  //! y (rows × out/t) = x·Wᵀ + b, where x is rows × in, or with sequence parallelism this rank's rows/t of them
  //! (all-gathered first). The whole x is kept for the backward.
  template <Communicator C>
  void forward(C& tp, std::span<const float> x, std::span<float> y, std::size_t rows, tokens held = tokens::all) {
    const std::size_t local = held == tokens::all ? rows : detail::split(rows, t_, "rows");
    detail::need(x.size(), local * in_, "x");
    detail::need(y.size(), rows * out_, "y");
    x_.resize(rows * in_);
    if (held == tokens::all) std::copy(x.begin(), x.end(), x_.begin());
    else comm::all_gather(tp, x, std::span<float>(x_), comm::algorithm::ring);
    detail::x_wt(x_, w_, b_.data(), y, rows, in_, out_);
  }

  //! Accumulates dW and db from dy (rows × out/t); dx (rows × in, or this rank's rows/t with sequence
  //! parallelism) is the sum over the group.
  template <Communicator C>
  void backward(C& tp, std::span<const float> dy, std::span<float> dx, std::size_t rows, tokens held = tokens::all) {
    detail::need(dy.size(), rows * out_, "dy");
    detail::need(x_.size(), rows * in_, "forward");
    detail::accumulate_grads(dy, x_, dw_, db_, rows, in_, out_);
    std::vector<float> partial(rows * in_);
    detail::dy_w(dy, w_, partial, rows, in_, out_);
    if (held == tokens::all) {
      detail::need(dx.size(), rows * in_, "dx");
      comm::all_reduce(tp, std::span<const float>(partial), dx, comm::reduce_op::sum, comm::algorithm::ring);
    } else {
      detail::need(dx.size(), detail::split(rows, t_, "rows") * in_, "dx");
      comm::reduce_scatter(tp, std::span<const float>(partial), dx, comm::reduce_op::sum, comm::algorithm::ring);
    }
  }

  [[nodiscard]] std::span<float> weight() noexcept { return w_; }
  [[nodiscard]] std::span<float> bias() noexcept { return b_; }
  [[nodiscard]] std::span<float> weight_grad() noexcept { return dw_; }
  [[nodiscard]] std::span<float> bias_grad() noexcept { return db_; }
  [[nodiscard]] std::size_t local_out() const noexcept { return out_; }

 private:
  std::size_t in_, out_;
  int t_, rank_;
  std::vector<float> w_, b_, dw_, db_, x_;
};

//! W split by its columns (inputs): this rank's in/t of them; b whole on every rank.
class row_parallel_linear {
 public:
  row_parallel_linear(std::size_t in, std::size_t out, int t, int rank)
      : in_(detail::split(in, t, "in")), out_(out), t_(t), rank_(rank), w_(out * in_), b_(out), dw_(out * in_), db_(out) {
    trinity::detail::require(rank >= 0 && rank < t, "rank", "must be in [0, tensor_parallel)");
  }

  //! Takes this rank's columns of the whole layer's W (out × in), and b.
  void load(std::span<const float> w, std::span<const float> b) {
    const std::size_t in = in_ * static_cast<std::size_t>(t_);
    detail::need(w.size(), out_ * in, "w");
    detail::need(b.size(), out_, "b");
    for (std::size_t o = 0; o < out_; ++o)
      std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(o * in + static_cast<std::size_t>(rank_) * in_), in_,
                  w_.begin() + static_cast<std::ptrdiff_t>(o * in_));
    std::copy(b.begin(), b.end(), b_.begin());
  }

  //! y = Σ_group x_local·W_localᵀ + b, where x_local is rows × in/t: y is rows × out, or with sequence
  //! parallelism this rank's rows/t of them (reduce-scattered).
  template <Communicator C>
  void forward(C& tp, std::span<const float> x, std::span<float> y, std::size_t rows, tokens held = tokens::all) {
    detail::need(x.size(), rows * in_, "x");
    x_.assign(x.begin(), x.end());
    std::vector<float> partial(rows * out_);
    detail::x_wt(x, w_, nullptr, partial, rows, in_, out_);
    std::size_t mine = rows;
    if (held == tokens::all) {
      detail::need(y.size(), rows * out_, "y");
      comm::all_reduce(tp, std::span<const float>(partial), y, comm::reduce_op::sum, comm::algorithm::ring);
    } else {
      mine = detail::split(rows, t_, "rows");
      detail::need(y.size(), mine * out_, "y");
      comm::reduce_scatter(tp, std::span<const float>(partial), y, comm::reduce_op::sum, comm::algorithm::ring);
    }
    for (std::size_t i = 0; i < mine; ++i)
      for (std::size_t o = 0; o < out_; ++o) y[i * out_ + o] += b_[o];
  }

  //! Accumulates dW and db; dx (rows × in/t) needs no message. dy is rows × out, or with sequence parallelism
  //! this rank's rows/t (all-gathered first; b's gradient then all-reduced, b being replicated).
  template <Communicator C>
  void backward(C& tp, std::span<const float> dy, std::span<float> dx, std::size_t rows, tokens held = tokens::all) {
    detail::need(dx.size(), rows * in_, "dx");
    detail::need(x_.size(), rows * in_, "forward");
    std::vector<float> whole;
    std::span<const float> g = dy;
    if (held == tokens::all) {
      detail::need(dy.size(), rows * out_, "dy");
      detail::accumulate_grads(dy, x_, dw_, db_, rows, in_, out_);
    } else {
      const std::size_t mine = detail::split(rows, t_, "rows");
      detail::need(dy.size(), mine * out_, "dy");
      whole.resize(rows * out_);
      comm::all_gather(tp, dy, std::span<float>(whole), comm::algorithm::ring);
      g = whole;
      std::vector<float> db(out_, 0.0f);
      detail::accumulate_grads(g, x_, dw_, db, rows, in_, out_);
      // Every rank holds every token's dy now, so db is already the group's sum: no message needed.
      for (std::size_t o = 0; o < out_; ++o) db_[o] += db[o];
    }
    detail::dy_w(g, w_, dx, rows, in_, out_);
  }

  [[nodiscard]] std::span<float> weight() noexcept { return w_; }
  [[nodiscard]] std::span<float> bias() noexcept { return b_; }
  [[nodiscard]] std::span<float> weight_grad() noexcept { return dw_; }
  [[nodiscard]] std::span<float> bias_grad() noexcept { return db_; }
  [[nodiscard]] std::size_t local_in() const noexcept { return in_; }

 private:
  std::size_t in_, out_;
  int t_, rank_;
  std::vector<float> w_, b_, dw_, db_, x_;
};

}  // namespace trinity::parallel
