#pragma once
//! \file
//! How an index scores a key against a query: the plain inner product, or the
//! cosine (keys and queries scaled to unit length on the way in, so the inner
//! product of what is stored is the cosine). The paper's retrieval (Table 1)
//! reads cosine similarities of CLIP prompt embeddings.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::cache {

enum class metric { inner_product, cosine };

namespace detail {

//! Checks a key or query (its length and every value) and returns it as the index stores it.
inline std::vector<float> prepare(std::span<const float> v, std::size_t dimension, metric m, const char* field) {
  trinity::detail::require(
      v.size() == dimension, field,
      "has " + std::to_string(v.size()) + " floats; the index holds vectors of dimension " + std::to_string(dimension));
  double norm = 0;
  for (const float x : v) {
    trinity::detail::require(std::isfinite(x), field, "holds a NaN or infinite value; embeddings must be finite");
    norm += static_cast<double>(x) * x;
  }
  std::vector<float> out(v.begin(), v.end());
  if (m == metric::cosine) {
    trinity::detail::require(norm > 0, field, "is the zero vector, which has no direction: its cosine is undefined");
    const double scale = 1.0 / std::sqrt(norm);
    for (auto& x : out) x = static_cast<float>(x * scale);
  }
  return out;
}

//! The number of queries in a concatenated batch, after checking it holds whole vectors.
inline std::size_t batch_count(std::span<const float> queries, std::size_t dimension) {
  trinity::detail::require(!queries.empty() && queries.size() % dimension == 0, "queries",
                           "must hold a whole, non-zero number of vectors of dimension " + std::to_string(dimension));
  return queries.size() / dimension;
}

//! Threads to use: the number asked for, or every hardware thread for 0.
inline unsigned thread_count(unsigned asked) noexcept {
  return asked ? asked : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace detail
}  // namespace trinity::cache
