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
//!
//! The classes keep one pass's input. Where weights live elsewhere (a ZeRO
//! shard, shard::data_parallel) and several micro-batches are in flight (a
//! pipeline), the same passes run on the caller's spans: column_forward keeps
//! the gathered input in a buffer the caller holds until column_backward, and
//! row_backward takes the input row_forward saw.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
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
// dw[n×k] += dyᵀ·x, db[n] += Σ_i dy (none for a layer without b).
inline void accumulate_grads(std::span<const float> dy, std::span<const float> x, std::span<float> dw,
                             std::span<float> db, std::size_t m, std::size_t k, std::size_t n) {
  for (std::size_t o = 0; o < n; ++o) {
    if (!db.empty()) {
      float bsum = 0.0f;
      for (std::size_t i = 0; i < m; ++i) bsum += dy[i * n + o];
      db[o] += bsum;
    }
    for (std::size_t j = 0; j < k; ++j) {
      float acc = 0.0f;
      for (std::size_t i = 0; i < m; ++i) acc += dy[i * n + o] * x[i * k + j];
      dw[o * k + j] += acc;
    }
  }
}

inline std::size_t split(std::size_t n, int t, const char* what) {
  trinity::detail::require(t >= 1, "tensor_parallel", "must be at least 1");
  // Under sequence parallelism the rows are the tokens: the fix is as often the token count as the degree.
  const std::string fix = std::string_view(what) == "rows"
                              ? "Fix: a tensor-parallel degree that divides it, or a token count (rows: micro-batch "
                                "x sequence) that " +
                                    std::to_string(t) + " divides"
                              : "Fix: a tensor-parallel degree that divides it";
  trinity::detail::require(n % static_cast<std::size_t>(t) == 0, what,
                           std::to_string(n) + " does not split into " + std::to_string(t) + " equal parts. " + fix);
  return n / static_cast<std::size_t>(t);
}

inline void need(std::size_t have, std::size_t want, const char* what) {
  trinity::detail::require(have == want, what,
                           "holds " + std::to_string(have) + " values; this layer needs " + std::to_string(want));
}

}  // namespace detail

//! Which tokens a rank holds outside the pair: all of them, or with sequence parallelism its 1/t of them.
enum class tokens { all, sequence_parallel };

//! One rank's part of a linear layer, in the caller's memory: W (out × in, row-major, this rank's out and in)
//! and b (out values, or none: a layer without bias, as Megatron-Core's --disable-bias-linear trains a mixture's
//! experts).
struct linear_part {
  std::span<const float> w, b;
};
//! Where its gradients accumulate: the same shapes.
struct linear_grads {
  std::span<float> w, b;
};

namespace detail {
// Where a backward pass adds its gradients: shaped as the weights.
inline void need_grads(linear_part l, linear_grads g) {
  need(g.w.size(), l.w.size(), "dw");
  need(g.b.size(), l.b.size(), "db");
}
inline std::size_t outputs_of(linear_part l, std::size_t in) {
  if (l.b.empty()) {
    trinity::detail::require(in > 0 && !l.w.empty() && l.w.size() % in == 0, "w",
                             "holds " + std::to_string(l.w.size()) + " values; a layer without b of " +
                                 std::to_string(in) + " inputs holds a whole number of rows of them");
    return l.w.size() / in;
  }
  trinity::detail::require(in > 0 && l.w.size() == l.b.size() * in, "w",
                           "holds " + std::to_string(l.w.size()) + " values; a layer of " + std::to_string(l.b.size()) +
                               " outputs and " + std::to_string(in) + " inputs holds their product");
  return l.b.size();
}
// b's values, or none for x_wt.
inline const float* bias_of(linear_part l) { return l.b.empty() ? nullptr : l.b.data(); }
}  // namespace detail

//! The column layer's forward: y (rows × out/t) = x·Wᵀ + b. x is rows × in, or with sequence parallelism this
//! rank's rows/t (all-gathered first); `whole` receives the whole x, which column_backward needs.
template <Communicator C>
void column_forward(C& tp, linear_part l, std::span<const float> x, std::vector<float>& whole, std::span<float> y,
                    std::size_t rows, std::size_t in, tokens held = tokens::all) {
  const std::size_t out = detail::outputs_of(l, in);
  const std::size_t local = held == tokens::all ? rows : detail::split(rows, tp.size(), "rows");
  detail::need(x.size(), local * in, "x");
  detail::need(y.size(), rows * out, "y");
  whole.resize(rows * in);
  if (held == tokens::all)
    std::copy(x.begin(), x.end(), whole.begin());
  else
    comm::all_gather(tp, x, std::span<float>(whole), comm::algorithm::ring);
  detail::x_wt(whole, l.w, detail::bias_of(l), y, rows, in, out);
}

//! The column layer's backward: adds dW and db from dy (rows × out/t) and the whole x column_forward kept; dx
//! (rows × in, or this rank's rows/t with sequence parallelism) is the sum over the group.
template <Communicator C>
void column_backward(C& tp, linear_part l, std::span<const float> whole, std::span<const float> dy, linear_grads g,
                     std::span<float> dx, std::size_t rows, std::size_t in, tokens held = tokens::all) {
  const std::size_t out = detail::outputs_of(l, in);
  detail::need(dy.size(), rows * out, "dy");
  detail::need(whole.size(), rows * in, "forward");
  detail::need_grads(l, g);
  detail::accumulate_grads(dy, whole, g.w, g.b, rows, in, out);
  std::vector<float> partial(rows * in);
  detail::dy_w(dy, l.w, partial, rows, in, out);
  if (held == tokens::all) {
    detail::need(dx.size(), rows * in, "dx");
    comm::all_reduce(tp, std::span<const float>(partial), dx, comm::reduce_op::sum, comm::algorithm::ring);
  } else {
    detail::need(dx.size(), detail::split(rows, tp.size(), "rows") * in, "dx");
    comm::reduce_scatter(tp, std::span<const float>(partial), dx, comm::reduce_op::sum, comm::algorithm::ring);
  }
}

//! The row layer's forward: y = Σ_group x·Wᵀ + b, x being rows × in/t (this rank's columns); y is rows × out, or
//! with sequence parallelism this rank's rows/t of them (reduce-scattered).
template <Communicator C>
void row_forward(C& tp, linear_part l, std::span<const float> x, std::span<float> y, std::size_t rows, std::size_t in,
                 tokens held = tokens::all) {
  const std::size_t out = detail::outputs_of(l, in);
  detail::need(x.size(), rows * in, "x");
  std::vector<float> partial(rows * out);
  detail::x_wt(x, l.w, nullptr, partial, rows, in, out);
  std::size_t mine = rows;
  if (held == tokens::all) {
    detail::need(y.size(), rows * out, "y");
    comm::all_reduce(tp, std::span<const float>(partial), y, comm::reduce_op::sum, comm::algorithm::ring);
  } else {
    mine = detail::split(rows, tp.size(), "rows");
    detail::need(y.size(), mine * out, "y");
    comm::reduce_scatter(tp, std::span<const float>(partial), y, comm::reduce_op::sum, comm::algorithm::ring);
  }
  if (!l.b.empty())
    for (std::size_t i = 0; i < mine; ++i)
      for (std::size_t o = 0; o < out; ++o) y[i * out + o] += l.b[o];
}

//! The row layer's backward: adds dW and db given the x row_forward took; dx (rows × in/t) needs no message. dy
//! is rows × out, or with sequence parallelism this rank's rows/t (all-gathered first, so that b, replicated,
//! takes every token's gradient on every rank and needs no all-reduce).
template <Communicator C>
void row_backward(C& tp, linear_part l, std::span<const float> x, std::span<const float> dy, linear_grads g,
                  std::span<float> dx, std::size_t rows, std::size_t in, tokens held = tokens::all) {
  const std::size_t out = detail::outputs_of(l, in);
  detail::need(x.size(), rows * in, "forward");
  detail::need(dx.size(), rows * in, "dx");
  detail::need_grads(l, g);
  std::vector<float> whole;
  std::span<const float> dy_all = dy;
  if (held == tokens::all) {
    detail::need(dy.size(), rows * out, "dy");
  } else {
    detail::need(dy.size(), detail::split(rows, tp.size(), "rows") * out, "dy");
    whole.resize(rows * out);
    comm::all_gather(tp, dy, std::span<float>(whole), comm::algorithm::ring);
    dy_all = whole;
  }
  detail::accumulate_grads(dy_all, x, g.w, g.b, rows, in, out);
  detail::dy_w(dy_all, l.w, dx, rows, in, out);
}

//! W split by its rows (outputs): this rank's out/t of them, and of b.
class column_parallel_linear {
 public:
  column_parallel_linear(std::size_t in, std::size_t out, int t, int rank)
      : in_(in),
        out_(detail::split(out, t, "out")),
        t_(t),
        rank_(rank),
        w_(out_ * in),
        b_(out_),
        dw_(out_ * in),
        db_(out_) {
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
    column_forward(tp, linear_part{w_, b_}, x, x_, y, rows, in_, held);
  }

  //! Accumulates dW and db from dy (rows × out/t); dx (rows × in, or this rank's rows/t with sequence
  //! parallelism) is the sum over the group.
  template <Communicator C>
  void backward(C& tp, std::span<const float> dy, std::span<float> dx, std::size_t rows, tokens held = tokens::all) {
    column_backward(tp, linear_part{w_, b_}, x_, dy, linear_grads{dw_, db_}, dx, rows, in_, held);
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
      : in_(detail::split(in, t, "in")),
        out_(out),
        t_(t),
        rank_(rank),
        w_(out * in_),
        b_(out),
        dw_(out * in_),
        db_(out) {
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
    x_.assign(x.begin(), x.end());
    row_forward(tp, linear_part{w_, b_}, x, y, rows, in_, held);
  }

  //! Accumulates dW and db; dx (rows × in/t) needs no message. dy is rows × out, or with sequence parallelism
  //! this rank's rows/t (all-gathered first).
  template <Communicator C>
  void backward(C& tp, std::span<const float> dy, std::span<float> dx, std::size_t rows, tokens held = tokens::all) {
    row_backward(tp, linear_part{w_, b_}, x_, dy, linear_grads{dw_, db_}, dx, rows, in_, held);
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
