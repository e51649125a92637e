// The expert-parallel layer's check, run on every backend: threads and the simulated fabric here, MPI under
// mpirun. Each rank's tokens through the layer against the same layer computed on one rank, bit for bit, and each
// rank's bytes against expert_dispatch_bytes (every rank's routing is a function of its rank, so each rank
// recomputes the others' to count what it should send).
#pragma once

#include <trinity/parallel/expert_parallel.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace moe_check {

inline const trinity::parallel::moe_shape shape{6, 10, 60, 2, 1.25};  // 60 experts: any group of 1 to 6 ranks
inline constexpr std::size_t tokens = 7;

inline trinity::parallel::expert_weights weights_of(std::size_t e) {
  const auto& s = shape;
  trinity::parallel::expert_weights w{std::vector<float>(s.ffn_hidden * s.hidden),
                                      std::vector<float>(s.hidden * s.ffn_hidden)};
  for (std::size_t i = 0; i < w.w1.size(); ++i)
    w.w1[i] = static_cast<float>(std::sin(static_cast<double>(e * 131 + i) * 0.37) * 0.3);
  for (std::size_t i = 0; i < w.w2.size(); ++i)
    w.w2[i] = static_cast<float>(std::cos(static_cast<double>(e * 71 + i) * 0.53) * 0.3);
  return w;
}

// A rank's tokens (salt 0) and router logits (salt 1): different on every rank.
inline std::vector<float> values(std::size_t count, int rank, double salt) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.71 + rank * 2.3 + salt));
  return v;
}

inline trinity::parallel::routing routing_of(int rank) {
  return trinity::parallel::route_top_k(values(tokens * shape.experts, rank, 1.0), tokens, shape);
}

template <class C>
std::vector<std::string> run(C& c) {
  namespace par = trinity::parallel;
  const auto& s = shape;
  const int n = c.size();
  const auto un = static_cast<std::size_t>(n), r = static_cast<std::size_t>(c.rank());
  std::vector<std::string> bad;
  std::vector<par::expert_weights> all;
  for (std::size_t e = 0; e < s.experts; ++e) all.push_back(weights_of(e));
  const std::size_t per = s.experts / un;
  const std::vector<par::expert_weights> local(all.begin() + static_cast<std::ptrdiff_t>(r * per),
                                               all.begin() + static_cast<std::ptrdiff_t>((r + 1) * per));
  const auto x = values(tokens * s.hidden, c.rank(), 0.0);
  const auto route = routing_of(c.rank());
  std::vector<float> got(x.size());
  const auto before = c.bytes_sent();
  par::moe_forward(c, s, std::span<const par::expert_weights>(local), std::span<const float>(x), route,
                   std::span<float>(got));
  const auto sent = c.bytes_sent() - before;
  // The one-rank layer: every kept choice through its expert, summed by weight in the order chosen.
  std::vector<float> want(x.size(), 0.0f), out(s.hidden);
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t j = 0; j < s.top_k; ++j) {
      const std::size_t a = t * s.top_k + j;
      if (!route.kept[a]) continue;
      par::expert_ffn(s, all[route.expert[a]], std::span<const float>(x).subspan(t * s.hidden, s.hidden), out);
      for (std::size_t i = 0; i < s.hidden; ++i) want[t * s.hidden + i] += route.weight[a] * out[i];
    }
  if (got != want) bad.push_back("rank " + std::to_string(r) + ": its tokens differ from the one-rank layer's");
  // Rows this rank routes off itself, and rows the others route to its experts (whose results it returns).
  std::size_t off = 0, returned = 0;
  for (int q = 0; q < n; ++q) {
    const auto other = routing_of(q);
    for (std::size_t a = 0; a < other.expert.size(); ++a) {
      if (!other.kept[a]) continue;
      const auto owner = static_cast<std::size_t>(par::expert_rank(other.expert[a], s.experts, n));
      if (static_cast<std::size_t>(q) == r && owner != r) ++off;
      if (static_cast<std::size_t>(q) != r && owner == r) ++returned;
    }
  }
  const auto expected = par::expert_dispatch_bytes(off, returned, s.hidden, s.experts, un);
  if (sent != expected)
    bad.push_back("rank " + std::to_string(r) + ": sent " + std::to_string(sent) + " bytes, not " +
                  std::to_string(expected));
  return bad;
}

}  // namespace moe_check
