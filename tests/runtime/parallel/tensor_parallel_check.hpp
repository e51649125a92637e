// One body for every backend (threads here, MPI in tests/mpi): a column-parallel layer, tanh, then a
// row-parallel layer, on t-way tensor-parallel groups of a world of W ranks (tensor innermost, so group g
// is ranks g·t .. g·t + t − 1), each of the W/t data-parallel replicas taking its own tokens, the weight
// gradients then summed over the data-parallel group. Checked against the unsharded pair computed in double
// over every token, which is what DDP computes:
//  - outputs and dx within 1e-5 of (1 + the sum of |terms|): fp32 sums over at most 16 terms in another order
//    stay near 16·2⁻²⁴ of it, and a wrong shard or a missing sum is off by the terms themselves;
//  - each rank's weight and bias gradients are its rows (column layer) or columns (row layer) of DDP's;
//  - bytes each rank sent in its tensor-parallel group: exactly 2·(t − 1)/t of the activation entering the
//    row layer's all-reduce and of dx's, with or without sequence parallelism (model/parallel_training.hpp's
//    all_reduce_bytes, at 4 bytes an element).
#pragma once

#include <trinity/comm/collectives.hpp>
#include <trinity/comm/group.hpp>
#include <trinity/parallel/tensor_parallel.hpp>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace tp_check {

inline constexpr std::size_t rows = 8, in = 12, hidden = 16, out = 12;

inline float value(std::uint64_t seed, std::size_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ULL << 24) * 2.0 - 1.0);
}
inline std::vector<float> values(std::uint64_t seed, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(seed, i);
  return v;
}

// The unsharded pair over every token of every replica, in double: h = tanh(x·W1ᵀ + b1), y = h·W2ᵀ + b2, and
// the gradients of Σ y·dy.
struct reference {
  std::vector<double> y, dx, dw1, db1, dw2, db2, y_abs, dx_abs;
  reference(int replicas) {
    const auto w1 = values(1, hidden * in), b1 = values(2, hidden), w2 = values(3, out * hidden), b2 = values(4, out);
    const std::size_t R = rows * static_cast<std::size_t>(replicas);
    const auto x = values(5, R * in), dy = values(6, R * out);
    std::vector<double> h(R * hidden), h_abs(R * hidden);
    y.assign(R * out, 0);
    y_abs.assign(R * out, 0);
    dx.assign(R * in, 0);
    dx_abs.assign(R * in, 0);
    dw1.assign(hidden * in, 0);
    db1.assign(hidden, 0);
    dw2.assign(out * hidden, 0);
    db2.assign(out, 0);
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t o = 0; o < hidden; ++o) {
        double z = b1[o], za = std::abs(b1[o]);
        for (std::size_t j = 0; j < in; ++j) {
          z += double(x[r * in + j]) * w1[o * in + j];
          za += std::abs(double(x[r * in + j]) * w1[o * in + j]);
        }
        h[r * hidden + o] = std::tanh(z);
        h_abs[r * hidden + o] = za;
      }
      for (std::size_t o = 0; o < out; ++o) {
        double z = b2[o], za = std::abs(b2[o]);
        for (std::size_t j = 0; j < hidden; ++j) {
          z += h[r * hidden + j] * w2[o * hidden + j];
          za += std::abs(h[r * hidden + j] * w2[o * hidden + j]) + h_abs[r * hidden + j];
        }
        y[r * out + o] = z;
        y_abs[r * out + o] = za;
      }
      std::vector<double> dh(hidden);
      for (std::size_t j = 0; j < hidden; ++j) {
        double g = 0;
        for (std::size_t o = 0; o < out; ++o) g += double(dy[r * out + o]) * w2[o * hidden + j];
        dh[j] = g * (1 - h[r * hidden + j] * h[r * hidden + j]);
      }
      for (std::size_t o = 0; o < out; ++o) {
        db2[o] += dy[r * out + o];
        for (std::size_t j = 0; j < hidden; ++j) dw2[o * hidden + j] += double(dy[r * out + o]) * h[r * hidden + j];
      }
      for (std::size_t o = 0; o < hidden; ++o) {
        db1[o] += dh[o];
        for (std::size_t j = 0; j < in; ++j) {
          dw1[o * in + j] += dh[o] * x[r * in + j];
          dx[r * in + j] += dh[o] * w1[o * in + j];
          dx_abs[r * in + j] += std::abs(dh[o] * w1[o * in + j]) * out;
        }
      }
    }
  }
};

inline bool near(double got, double want, double scale) { return std::abs(got - want) <= 1e-5 * (1 + scale); }

//! Runs on every rank of `world`; returns what went wrong on this rank (empty: nothing).
template <class C>
std::vector<std::string> run(C& world, int t, trinity::parallel::tokens held) {
  using namespace trinity;
  std::vector<std::string> bad;
  const int W = world.size(), me = world.rank();
  const int replicas = W / t, tr = me % t, replica = me / t;
  std::vector<int> tp_members(static_cast<std::size_t>(t)), dp_members(static_cast<std::size_t>(replicas));
  std::iota(tp_members.begin(), tp_members.end(), replica * t);
  for (int d = 0; d < replicas; ++d) dp_members[static_cast<std::size_t>(d)] = d * t + tr;
  comm::group tp(world, tp_members), dp(world, dp_members);
  const reference ref(replicas);

  parallel::column_parallel_linear up(in, hidden, t, tr);
  parallel::row_parallel_linear down(hidden, out, t, tr);
  up.load(values(1, hidden * in), values(2, hidden));
  down.load(values(3, out * hidden), values(4, out));

  const bool sp = held == parallel::tokens::sequence_parallel;
  const std::size_t mine = sp ? rows / static_cast<std::size_t>(t) : rows;  // tokens this rank holds outside the pair
  const std::size_t first = static_cast<std::size_t>(replica) * rows + (sp ? static_cast<std::size_t>(tr) * mine : 0);
  const auto x_all = values(5, rows * static_cast<std::size_t>(replicas) * in);
  const auto dy_all = values(6, rows * static_cast<std::size_t>(replicas) * out);
  const std::vector<float> x(x_all.begin() + static_cast<std::ptrdiff_t>(first * in),
                             x_all.begin() + static_cast<std::ptrdiff_t>((first + mine) * in));
  const std::vector<float> dy(dy_all.begin() + static_cast<std::ptrdiff_t>(first * out),
                              dy_all.begin() + static_cast<std::ptrdiff_t>((first + mine) * out));

  std::vector<float> h(rows * up.local_out()), y(mine * out), dh(rows * up.local_out()), dx(mine * in);
  up.forward(tp, x, h, rows, held);
  std::vector<float> a(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) a[i] = std::tanh(h[i]);
  down.forward(tp, a, y, rows, held);
  down.backward(tp, dy, dh, rows, held);
  for (std::size_t i = 0; i < dh.size(); ++i) dh[i] *= 1 - a[i] * a[i];
  up.backward(tp, dh, dx, rows, held);
  const std::uint64_t tp_bytes = tp.bytes_sent();

  for (std::size_t r = 0; r < mine; ++r) {
    for (std::size_t o = 0; o < out; ++o)
      if (!near(y[r * out + o], ref.y[(first + r) * out + o], ref.y_abs[(first + r) * out + o]))
        bad.push_back("y[" + std::to_string(first + r) + "][" + std::to_string(o) + "]");
    for (std::size_t j = 0; j < in; ++j)
      if (!near(dx[r * in + j], ref.dx[(first + r) * in + j], ref.dx_abs[(first + r) * in + j]))
        bad.push_back("dx[" + std::to_string(first + r) + "][" + std::to_string(j) + "]");
  }

  // Data parallelism over the replicas: the shards' gradients summed, as DDP sums whole ones.
  for (auto g : {up.weight_grad(), up.bias_grad(), down.weight_grad(), down.bias_grad()})
    comm::all_reduce(dp, g, comm::reduce_op::sum, comm::algorithm::ring);
  const std::size_t h0 = static_cast<std::size_t>(tr) * up.local_out();
  for (std::size_t o = 0; o < up.local_out(); ++o) {
    if (!near(up.bias_grad()[o], ref.db1[h0 + o], 64.0 * replicas))
      bad.push_back("db1[" + std::to_string(h0 + o) + "]");
    for (std::size_t j = 0; j < in; ++j)
      if (!near(up.weight_grad()[o * in + j], ref.dw1[(h0 + o) * in + j], 64.0 * replicas))
        bad.push_back("dw1[" + std::to_string(h0 + o) + "][" + std::to_string(j) + "]");
  }
  for (std::size_t o = 0; o < out; ++o) {
    if (!near(down.bias_grad()[o], ref.db2[o], 64.0 * replicas)) bad.push_back("db2[" + std::to_string(o) + "]");
    for (std::size_t j = 0; j < down.local_in(); ++j)
      if (!near(down.weight_grad()[o * down.local_in() + j], ref.dw2[o * hidden + h0 + j], 64.0 * replicas))
        bad.push_back("dw2[" + std::to_string(o) + "][" + std::to_string(h0 + j) + "]");
  }

  // Two activations' all-reduce (y's rows × out and dx's rows × in, 4 bytes each), as 2·(t − 1)/t of them.
  const std::uint64_t want =
      t == 1 ? 0 : 2 * static_cast<std::uint64_t>(t - 1) * (rows * out + rows * in) * 4 / static_cast<std::uint64_t>(t);
  if (tp_bytes != want)
    bad.push_back("tensor-parallel bytes " + std::to_string(tp_bytes) + ", expected " + std::to_string(want));
  return bad;
}

}  // namespace tp_check
