// One body for every backend (threads here, MPI in tests/mpi): ring attention on c-rank context-parallel
// groups of a world of W ranks, each of the W/c replicas attending over its own sequence of c·t tokens, rank i
// of a group holding tokens i·t .. i·t + t − 1. Checked against full attention over the whole sequence in
// double (softmax(q·kᵀ/√d)·v and its gradients):
//  - o, dq, dk and dv within 1e-5 of (1 + the sum of |terms|), where a block never folded in, or folded twice,
//    is off by the terms themselves;
//  - bytes each rank sent: K and V (2·heads·t·d floats) c − 1 times forward, and with their gradients c − 1
//    times backward, then the gradients once more: 3(c − 1) + 1 of K and V, the step model's cp_bytes.
#pragma once

#include <trinity/comm/group.hpp>
#include <trinity/parallel/context_parallel.hpp>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace cp_check {

inline constexpr std::size_t heads = 2, tokens = 3, dim = 4;  // per rank

inline float value(std::uint64_t seed, std::size_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL + 3;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ULL << 24) * 2.0 - 1.0);
}
// Tensor `which` (0 q, 1 k, 2 v, 3 dO) of replica d, head h, global token i, element e.
inline float x(std::size_t which, std::size_t d, std::size_t h, std::size_t i, std::size_t e) {
  return value(10 * which + 1000 * d, (h * 4096 + i) * dim + e) * 1.5f;
}

//! Runs on every rank of `world` (W a multiple of c). Returns what went wrong on this rank.
template <class C>
std::vector<std::string> run(C& world, std::size_t c) {
  using namespace trinity;
  std::vector<std::string> bad;
  const std::size_t W = static_cast<std::size_t>(world.size()), me = static_cast<std::size_t>(world.rank());
  const std::size_t cr = me % c, replica = me / c, S = c * tokens;
  std::vector<int> members(c);
  std::iota(members.begin(), members.end(), static_cast<int>(replica * c));
  comm::group cp(world, members);
  (void)W;

  const std::size_t n = heads * tokens * dim;
  std::vector<float> q(n), k(n), v(n), d_o(n), o(n), dq(n), dk(n), dv(n);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < tokens; ++i)
      for (std::size_t e = 0; e < dim; ++e) {
        const std::size_t at = (h * tokens + i) * dim + e, g = cr * tokens + i;
        q[at] = x(0, replica, h, g, e);
        k[at] = x(1, replica, h, g, e);
        v[at] = x(2, replica, h, g, e);
        d_o[at] = x(3, replica, h, g, e);
      }
  parallel::ring_attention attn({heads, tokens, dim});
  attn.forward(cp, q, k, v, o);
  const std::uint64_t forward_bytes = cp.bytes_sent();
  attn.backward(cp, d_o, dq, dk, dv);

  // Full attention over the S tokens in double; this rank's rows of o, dq, dk, dv.
  const double scale = 1.0 / std::sqrt(double(dim));
  for (std::size_t h = 0; h < heads; ++h) {
    std::vector<std::vector<double>> P(S, std::vector<double>(S)), dS(S, std::vector<double>(S));
    std::vector<std::vector<double>> O(S, std::vector<double>(dim, 0.0)), Oa(S, std::vector<double>(dim, 0.0));
    for (std::size_t i = 0; i < S; ++i) {
      double top = -1e300;
      for (std::size_t j = 0; j < S; ++j) {
        double s = 0;
        for (std::size_t e = 0; e < dim; ++e) s += double(x(0, replica, h, i, e)) * x(1, replica, h, j, e);
        P[i][j] = s * scale;
        top = std::max(top, P[i][j]);
      }
      double sum = 0;
      for (std::size_t j = 0; j < S; ++j) sum += (P[i][j] = std::exp(P[i][j] - top));
      for (std::size_t j = 0; j < S; ++j) {
        P[i][j] /= sum;
        for (std::size_t e = 0; e < dim; ++e) {
          O[i][e] += P[i][j] * x(2, replica, h, j, e);
          Oa[i][e] += std::abs(P[i][j] * x(2, replica, h, j, e));
        }
      }
      double D = 0;
      for (std::size_t e = 0; e < dim; ++e) D += double(x(3, replica, h, i, e)) * O[i][e];
      for (std::size_t j = 0; j < S; ++j) {
        double dp = 0;
        for (std::size_t e = 0; e < dim; ++e) dp += double(x(3, replica, h, i, e)) * x(2, replica, h, j, e);
        dS[i][j] = P[i][j] * (dp - D) * scale;
      }
    }
    for (std::size_t li = 0; li < tokens; ++li) {
      const std::size_t i = cr * tokens + li;
      for (std::size_t e = 0; e < dim; ++e) {
        double gq = 0, gk = 0, gv = 0, mag = 1;
        for (std::size_t j = 0; j < S; ++j) {
          gq += dS[i][j] * x(1, replica, h, j, e);
          gk += dS[j][i] * x(0, replica, h, j, e);
          gv += P[j][i] * x(3, replica, h, j, e);
          mag += std::abs(dS[i][j] * 2) + std::abs(dS[j][i] * 2) + std::abs(P[j][i] * 2);
        }
        const std::size_t at = (h * tokens + li) * dim + e;
        const auto check = [&](const char* what, double got, double want, double m) {
          if (std::abs(got - want) > 1e-5 * (1 + m))
            bad.push_back(std::string(what) + "[" + std::to_string(h) + "][" + std::to_string(i) + "][" +
                          std::to_string(e) + "] " + std::to_string(got) + " vs " + std::to_string(want));
        };
        check("o", o[at], O[i][e], Oa[i][e] * 4);
        check("dq", dq[at], gq, mag * 4);
        check("dk", dk[at], gk, mag * 4);
        check("dv", dv[at], gv, mag * 4);
      }
    }
  }

  const std::uint64_t kv = 2 * n * sizeof(float);
  if (forward_bytes != (c - 1) * kv) bad.push_back("forward sent " + std::to_string(forward_bytes));
  const std::uint64_t want = c == 1 ? 0 : (3 * (c - 1) + 1) * kv;
  if (cp.bytes_sent() != want)
    bad.push_back("sent " + std::to_string(cp.bytes_sent()) + " bytes, expected " + std::to_string(want));
  return bad;
}

}  // namespace cp_check
