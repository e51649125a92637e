#pragma once
//! \file
//! A product quantizer (Jégou, Douze & Schmid, TPAMI 2011; FAISS's ProductQuantizer): a vector's dimensions cut
//! into `subspaces` equal parts, each part replaced by the nearest of 256 centroids trained by k-means on that
//! part, so a vector of d floats is stored as `subspaces` bytes. A query's distance to a code is summed from a
//! table of its distance to every centroid of every part (asymmetric distance computation): the compute traded
//! for 4·d / subspaces times fewer bytes.
//!
//!   retrieval::product_quantizer pq(128, 16);   // 16 bytes a vector
//!   pq.train(sample);
//!   pq.encode(x, code);                          // code: 16 bytes
//!   pq.distance_table(query, table);             // 16 x 256 floats
//!   float d = pq.distance(table, code);          // ≈ ‖query − x‖²

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/retrieval/detail/pq_table.hpp>
#include <trinity/retrieval/ivf_index.hpp>

namespace trinity::retrieval {

class product_quantizer {
 public:
  static constexpr std::size_t centroids = detail::pq_centroids;  //!< 256: one byte a part

  product_quantizer(std::size_t dimension, std::size_t subspaces) : d_(dimension), m_(subspaces) {
    trinity::detail::require(subspaces >= 1 && dimension % subspaces == 0, "subspaces",
                             std::to_string(subspaces) + " parts do not cut " + std::to_string(dimension) +
                                 " dimensions evenly. Fix: a divisor of the dimension");
    dsub_ = d_ / m_;
  }

  //! k-means of 256 centroids on each part of the sample's rows (ivf_index's Lloyd iterations, its seeding).
  void train(std::span<const float> sample, std::size_t iterations = 12) {
    trinity::detail::require(!sample.empty() && sample.size() % d_ == 0, "sample",
                             "must be whole vectors of dimension " + std::to_string(d_));
    const std::size_t n = sample.size() / d_;
    trinity::detail::require(n >= centroids, "sample",
                             std::to_string(n) + " vectors cannot train 256 centroids a part. Fix: at least 256");
    codebooks_.assign(m_ * centroids * dsub_, 0.0f);
    std::vector<float> part(n * dsub_);
    for (std::size_t s = 0; s < m_; ++s) {
      for (std::size_t r = 0; r < n; ++r)
        std::copy_n(sample.data() + r * d_ + s * dsub_, dsub_, part.data() + r * dsub_);
      ivf_index k(dsub_, {.lists = centroids, .iterations = iterations});
      k.train(part);
      std::copy(k.centroids().begin(), k.centroids().end(),
                codebooks_.begin() + static_cast<std::ptrdiff_t>(s * centroids * dsub_));
    }
    // The same codebooks by value, then centroid ([part][value][centroid]): a table's kernel (detail/pq_table.hpp)
    // then runs over the 256 centroids, contiguous.
    by_value_.assign(codebooks_.size(), 0.0f);
    for (std::size_t s = 0; s < m_; ++s)
      for (std::size_t c = 0; c < centroids; ++c)
        for (std::size_t k = 0; k < dsub_; ++k)
          by_value_[(s * dsub_ + k) * centroids + c] = codebooks_[(s * centroids + c) * dsub_ + k];
  }

  //! x's code: for each part, the nearest centroid (ties: the lower).
  void encode(std::span<const float> x, std::span<std::uint8_t> code) const {
    check(x.size() == d_ && code.size() == m_, "encode",
          "takes a vector of the dimension and a code of subspaces bytes");
    // Each part's distances as a query's table computes them (squared_distance's bits, on the vector unit), then
    // the first nearest: encoding every vector of an index was its build's slowest step on the scalar loop.
    std::array<float, centroids> dist;
    for (std::size_t s = 0; s < m_; ++s) {
      detail::part_table(isa_, x.data() + s * dsub_, by_value_.data() + s * dsub_ * centroids, dsub_, dist.data());
      code[s] = static_cast<std::uint8_t>(std::min_element(dist.begin(), dist.end()) - dist.begin());
    }
  }

  //! The vector a code stands for.
  void decode(std::span<const std::uint8_t> code, std::span<float> x) const {
    check(x.size() == d_ && code.size() == m_, "decode", "takes a code of subspaces bytes and a vector");
    for (std::size_t s = 0; s < m_; ++s) std::copy_n(codeword(s, code[s]), dsub_, x.data() + s * dsub_);
  }

  //! The query's squared distance to every centroid of every part: subspaces x 256 floats. Each is summed over the
  //! part's values in order, as detail::squared_distance sums them, on the widest instruction set: the same bits.
  void distance_table(std::span<const float> query, std::span<float> table) const {
    check(query.size() == d_ && table.size() == m_ * centroids, "distance_table",
          "takes a query of the dimension and subspaces x 256 floats");
    for (std::size_t s = 0; s < m_; ++s)
      detail::part_table(isa_, query.data() + s * dsub_, by_value_.data() + s * dsub_ * centroids, dsub_,
                         table.data() + s * centroids);
  }

  //! The query's squared distance to the code's vector, from its table: one lookup a part.
  [[nodiscard]] float distance(std::span<const float> table, const std::uint8_t* code) const noexcept {
    float acc = 0;
    for (std::size_t s = 0; s < m_; ++s) acc += table[s * centroids + code[s]];
    return acc;
  }

  [[nodiscard]] std::size_t dimension() const noexcept { return d_; }
  [[nodiscard]] std::size_t subspaces() const noexcept { return m_; }
  [[nodiscard]] std::size_t code_bytes() const noexcept { return m_; }
  [[nodiscard]] bool trained() const noexcept { return !codebooks_.empty(); }
  //! Bytes of the codebooks, read to build a query's tables.
  [[nodiscard]] std::size_t codebook_bytes() const noexcept { return codebooks_.size() * sizeof(float); }

 private:
  const float* codeword(std::size_t s, std::size_t c) const noexcept {
    return codebooks_.data() + (s * centroids + c) * dsub_;
  }
  void check(bool ok, const char* what, const char* rule) const {
    trinity::detail::require(trained(), "quantizer", "is not trained. Fix: train() on a sample first");
    trinity::detail::require(ok, what, rule);
  }

  std::size_t d_, m_, dsub_ = 0;
  detail::isa isa_ = trinity::detail::best_isa();
  std::vector<float> codebooks_;  // part, centroid, value
  std::vector<float> by_value_;   // part, value, centroid
};

}  // namespace trinity::retrieval
