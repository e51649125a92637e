#pragma once
//! \file
//! SYNTHETIC clustered vectors, what the retrieval bench and `trinity verify` search where no corpus is given:
//! each vector one of `clusters` centres (uniform in [-1, 1]^d) plus uniform noise of ±`spread` in every value.
//! Deterministic: the same arguments give the same vectors, and the centres depend only on their own seed, so
//! queries drawn with another seed come from the same clusters.
//!
//!   auto base = retrieval::clustered_vectors(200'000, 64, 1);   // the bench's corpus
//!   auto queries = retrieval::clustered_vectors(500, 64, 2);     // its queries

#include <cstddef>
#include <cstdint>
#include <vector>

#include <trinity/detail/splitmix.hpp>
#include <trinity/error.hpp>

namespace trinity::retrieval {

struct cluster_shape {
  std::size_t clusters = 256;
  float spread = 0.35f;
  std::uint64_t centre_seed = 7;
};

//! n vectors of `dim` floats, row-major.
inline std::vector<float> clustered_vectors(std::size_t n, std::size_t dim, std::uint64_t seed,
                                            const cluster_shape& shape = {}) {
  trinity::detail::require(dim >= 1 && shape.clusters >= 1, "clustered_vectors",
                           "needs a dimension and at least one cluster");
  const auto uniform = [](std::uint64_t& s) {
    return static_cast<float>(trinity::detail::splitmix_next(s) >> 40) * 0x1p-24f * 2.0f - 1.0f;
  };
  std::uint64_t s = shape.centre_seed;
  std::vector<float> centres(shape.clusters * dim);
  for (auto& c : centres) c = uniform(s);
  std::vector<float> out(n * dim);
  s = seed;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t c = trinity::detail::splitmix_next(s) % shape.clusters;
    for (std::size_t i = 0; i < dim; ++i) out[r * dim + i] = centres[c * dim + i] + shape.spread * uniform(s);
  }
  return out;
}

}  // namespace trinity::retrieval
